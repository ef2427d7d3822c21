/* SPDX-License-Identifier: BSD-3-Clause */
/* Hostile clients of the model daemon (issue 12): each case attacks the daemon from a
 * client of its own while an honest client on another cable keeps its traffic going. After
 * every attack the daemon is alive, the honest echoes are still coming back byte-exact and
 * the honest client's canary buffers (DMA memory it registered and never uses) still hold
 * their pattern.
 *
 * One daemon: nic0 <-> nic1 is the attackers' cable, nic2 <-> nic3 the honest one (an
 * echo on nic2, a checking sender on nic3).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */
#include <time.h>

#include "bus/bus.h"
#include "bus/simd_proto.h"
#include "fuse_stall.h"
#include "ipv4_frame.h"
#include "mem/dma.h"
#include "myrio/port.h"
#include "pci/sysfs.h"
#include "sim/fw_image.h"
#include "sim/nic.h"
#include "simd_daemon.h"
#include "simd_stream.h"
#include "tso_request.h"
#include "util/byteorder.h"

#define BURST 32
#define WINDOW 256
#define CANARIES 64
#define CANARY_LEN 2048
#define SIMD_MAX_CONNS_TRIED 70

struct shared {
	char sock[108];
	atomic_int stop, echo_ready;
	atomic_uint_fast64_t verified; /* echoes checked byte-exact */
	atomic_int canaries_bad;       /* set by the honest client at the end */
	atomic_int wake_reader;	       /* 1: the hostile client reads its wake eventfd, blocking */
	atomic_int hoarded;	       /* 1: the hoarder holds its connections; 2: done */
	/* 1: a TSO request is held and its memory unregistered; 2: the victim's is registered */
	atomic_int tso_phase;
	atomic_size_t tso_region_len;
	atomic_int irq_poisoned; /* the interrupt eventfd attacker: 1 ready, > 1 failed */
};

struct fixture {
	struct simd_daemon_proc d;
	struct shared *sh;
	pid_t echo, client;
	char log[128];
};

static const uint8_t nic2_mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, 0x03};

static int open_port(const struct shared *sh, const char *nic, struct myrio_port **port)
{
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:%s@%s", nic, sh->sock);
	return myrio_port_open(port, dev, NULL);
}

static uint8_t canary_byte(unsigned pkt, unsigned i)
{
	return (uint8_t)(0xA5 ^ pkt * 7 ^ i * 3);
}

static int echo_main(struct shared *sh)
{
	struct myrio_port *port;
	if (open_port(sh, "nic2", &port) < 0)
		return 10;
	atomic_store(&sh->echo_ready, 1);
	struct myrio_pkt *pkts[BURST];
	while (!atomic_load(&sh->stop)) {
		uint16_t n = myrio_rx_burst(port, pkts, BURST);
		if (n == 0)
			sched_yield();
		for (uint16_t i = 0; i < n; i++) {
			uint8_t *f = myrio_pkt_data(pkts[i]);
			memcpy(f, f + 6, 6);
			memcpy(f + 6, nic2_mac, 6);
		}
		uint16_t sent = 0;
		while (sent < n && !atomic_load(&sh->stop))
			sent += myrio_tx_burst(port, pkts + sent, (uint16_t)(n - sent));
		for (uint16_t i = sent; i < n; i++)
			myrio_pkt_free(pkts[i]);
	}
	myrio_port_close(port);
	return 0;
}

/* nic3: a window of frames out, each echo checked in order and byte-exact; canaries in
 * a DMA pool of its own, checked at the end. */
static int client_main(struct shared *sh)
{
	struct myrio_port *port;
	struct myrio_port_info info;
	struct myrio_pool *pool, *cpool;
	struct myrio_pkt *canary[CANARIES];
	if (open_port(sh, "nic3", &port) < 0)
		return 10;
	myrio_port_info(port, &info);
	if (myrio_port_pool_create(port, 1024, 2048, &pool) < 0 ||
	    myrio_port_pool_create(port, CANARIES, CANARY_LEN, &cpool) < 0)
		return 11;
	for (unsigned k = 0; k < CANARIES; k++) {
		canary[k] = myrio_pkt_alloc(cpool);
		if (!canary[k])
			return 11;
		for (unsigned i = 0; i < CANARY_LEN; i++)
			myrio_pkt_data(canary[k])[i] = canary_byte(k, i);
	}
	int rc = simd_stream_check(port, pool, info.mac, nic2_mac, WINDOW, &sh->stop, &sh->verified,
				   "honest client");
	if (rc)
		return rc;
	int bad = 0;
	for (unsigned k = 0; k < CANARIES; k++)
		for (unsigned i = 0; i < CANARY_LEN; i++)
			bad += myrio_pkt_data(canary[k])[i] != canary_byte(k, i);
	atomic_store(&sh->canaries_bad, bad);
	myrio_port_close(port);
	return bad ? 13 : 0;
}

static pid_t spawn(int (*fn)(struct shared *), struct shared *sh)
{
	pid_t pid = fork();
	if (pid == 0) {
		simd_die_with_parent();
		_exit(fn(sh));
	}
	return pid;
}

static int exit_code(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The honest traffic has moved on by `more` echoes since this was called. */
static void honest_still_flowing(struct fixture *f, uint64_t more)
{
	uint64_t at = atomic_load(&f->sh->verified);
	for (unsigned i = 0; i < 10000 && atomic_load(&f->sh->verified) < at + more; i++)
		usleep(1000);
	assert_true(simd_daemon_alive(&f->d));
	assert_true(atomic_load(&f->sh->verified) >= at + more);
}

/* A hostile client in a child of its own, so that a crash of the attack is contained;
 * its exit code is returned. */
static int run_hostile(struct fixture *f, int (*fn)(struct shared *))
{
	return exit_code(spawn(fn, f->sh));
}

/* ---- finding 3: a header pointer that wraps past BAR0 ---- */

static void bar_put(volatile uint8_t *bar, uint32_t off, uint32_t host)
{
	uint8_t b[4];
	put_be32(b, host);
	memcpy((uint8_t *)bar + off, b, 4);
}

static int hostile_handoff_wrap(struct shared *sh)
{
	struct myrio_bus *bus;
	if (myrio_simd_bus_open("nic0", sh->sock, &bus) < 0)
		return 10;
	volatile uint8_t *bar = bus->bar0;
	static uint8_t img[FW_IMAGE_LEN_DEFAULT];
	size_t len;
	if (sim_fw_image_build(img, sizeof(img), "eth", &len) < 0)
		return 11;
	/* The image staged whole; the copy starts past 0x3C, so the word there stays the
	 * host's: a header pointer 4 GiB away. */
	const uint32_t dst = 0x40;
	memcpy((uint8_t *)bar + SIM_STAGING_OFF, img, len);
	bar_put(bar, SIM_HDR_PTR_OFF, 0xFFFFFF40u);
	bar_put(bar, SIM_HANDOFF_OFF + 12, SIM_STAGING_OFF + dst);
	bar_put(bar, SIM_HANDOFF_OFF + 16, (uint32_t)len - dst);
	bar_put(bar, SIM_HANDOFF_OFF + 20, dst);
	bar_put(bar, SIM_HANDOFF_OFF + 60, 0);
	usleep(200000);
	bus->ops->close(bus);
	return 0;
}

static void handoff_header_pointer_cannot_wrap(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(run_hostile(f, hostile_handoff_wrap), 0);
	honest_still_flowing(f, 2000);
}

/* ---- finding 1: a former owner keeps its BAR0 ---- */

/* Attaches on a connection of its own: the socket, the BAR0 mapping, the interrupt eventfd
 * and, when wake is not NULL, the model's wake eventfd (closed otherwise). */
static int raw_attach(const char *sock, const char *nic, int *s, volatile uint8_t **bar, int *irq,
		      int *wake)
{
	struct simd_msg m, rep;
	int fds[SIMD_MAX_FDS];
	unsigned nfds = 0;
	if (simd_connect(sock, s) < 0)
		return -1;
	simd_hdr_init(&m.h, SIMD_ATTACH, 1);
	memset(&m.u.attach_req, 0, sizeof(m.u.attach_req));
	snprintf(m.u.attach_req.nic, sizeof(m.u.attach_req.nic), "%s", nic);
	if (simd_send(*s, &m, sizeof(m.h) + sizeof(m.u.attach_req), NULL, 0) < 0)
		return -1;
	ssize_t n = simd_recv_timeout(*s, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds, 5000);
	if (n < (ssize_t)sizeof(rep.h) || rep.h.status != 0 || nfds != 4)
		return -1;
	void *p = mmap(NULL, SIM_BAR0_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	close(fds[0]);
	close(fds[2]); /* the model's wake page: the honest pair keeps it awake */
	if (wake)
		*wake = fds[3];
	else
		close(fds[3]);
	if (p == MAP_FAILED)
		return -1;
	*bar = p;
	*irq = fds[1];
	return 0;
}

/* The former owner attaches nic0, hangs up and keeps its mapping; the next owner maps
 * memory and turns bus mastering on; the former one then aims the dummy RDMA block's
 * confirmation (a 4-byte DMA write) at the next owner's memory through its old BAR0. */
static void former_owner_reaches_nothing(void **state)
{
	struct fixture *f = *state;
	int s = -1, irq = -1;
	volatile uint8_t *old = NULL;
	assert_int_equal(raw_attach(f->sh->sock, "nic0", &s, &old, &irq, NULL), 0);
	close(s);
	usleep(100000);
	struct myrio_bus *bus = NULL;
	for (int i = 0; i < 100 && myrio_simd_bus_open("nic0", f->sh->sock, &bus) < 0; i++)
		usleep(10000);
	assert_non_null(bus);
	struct myrio_dma_region r;
	assert_int_equal(myrio_dma_alloc(&r, 1 << 20), 0);
	memset(r.va, 0x5A, r.len);
	assert_int_equal(bus->ops->dma_map(bus, &r), 0);
	assert_int_equal(bus->ops->cfg_write(bus, 4, 2, 0x0006), 0);
	bar_put(old, SIM_DUMMY_RDMA_OFF + 0, (uint32_t)(r.iova >> 32));
	bar_put(old, SIM_DUMMY_RDMA_OFF + 4, (uint32_t)r.iova);
	bar_put(old, SIM_DUMMY_RDMA_OFF + 8, 0xDEADBEEFu);
	bar_put(old, SIM_DUMMY_RDMA_OFF + 60, 0);
	usleep(200000);
	const uint8_t *v = r.va;
	size_t changed = 0;
	for (size_t i = 0; i < r.len; i++)
		changed += v[i] != 0x5A;
	assert_int_equal(changed, 0);
	bus->ops->dma_unmap(bus, &r);
	myrio_dma_free(&r);
	bus->ops->close(bus);
	munmap((void *)old, SIM_BAR0_LEN);
	close(irq);
	honest_still_flowing(f, 2000);
}

/* ---- the wake eventfd: a client that clears O_NONBLOCK and reads it ---- */

static void *read_blocking(void *arg)
{
	uint64_t v;
	while (read(*(int *)arg, &v, sizeof(v)) == sizeof(v)) /* blocks between wake-ups */
		;
	return NULL;
}

/* Four threads read the eventfd with O_NONBLOCK cleared, racing the model for every count
 * (until killed). */
static int hostile_wake_reader(struct shared *sh)
{
	int s, irq, wake;
	volatile uint8_t *bar;
	if (raw_attach(sh->sock, "nic0", &s, &bar, &irq, &wake) < 0)
		return 20;
	if (fcntl(wake, F_SETFL, 0) < 0)
		return 21;
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, read_blocking, &wake) != 0)
			return 22;
	atomic_store(&sh->wake_reader, 1);
	read_blocking(&wake);
	return 23;
}

static void honest_pair_start(struct fixture *f)
{
	atomic_store(&f->sh->stop, 0);
	atomic_store(&f->sh->echo_ready, 0);
	f->echo = spawn(echo_main, f->sh);
	for (int i = 0; i < 1000 && !atomic_load(&f->sh->echo_ready); i++)
		usleep(10000);
	f->client = spawn(client_main, f->sh);
}

static void honest_pair_stop(struct fixture *f)
{
	atomic_store(&f->sh->stop, 1);
	assert_int_equal(exit_code(f->client), 0);
	assert_int_equal(exit_code(f->echo), 0);
}

/* Waits (up to 5 s) for the model thread's deep sleep, as the wake page shows it. */
static bool model_asleep(const _Atomic uint32_t *sleeping)
{
	for (int i = 0; i < 5000; i++) {
		if (atomic_load(sleeping))
			return true;
		usleep(1000);
	}
	return false;
}

/* With the honest pair stopped, the model sleeps between single frames sent nic3 -> nic2
 * by this process; each must arrive although a client races the model for the wake-ups
 * with blocking reads. Were the eventfd shared, the model's read after ppoll would block
 * once the reader took the count first, and every NIC of the daemon would stop. */
static void wake_eventfd_reader_stops_nothing(void **state)
{
	struct fixture *f = *state;
	honest_pair_stop(f);
	pid_t reader = spawn(hostile_wake_reader, f->sh);
	for (int i = 0; i < 1000 && !atomic_load(&f->sh->wake_reader); i++)
		usleep(10000);
	assert_int_equal(atomic_load(&f->sh->wake_reader), 1);
	struct myrio_bus *watch = NULL; /* nic1: only for its view of the wake page */
	assert_int_equal(myrio_simd_bus_open("nic1", f->sh->sock, &watch), 0);
	assert_non_null(watch->sleeping);
	struct myrio_port *tx, *rx;
	struct myrio_port_info info;
	struct myrio_pool *pool;
	assert_int_equal(open_port(f->sh, "nic3", &tx), 0);
	assert_int_equal(open_port(f->sh, "nic2", &rx), 0);
	myrio_port_info(tx, &info);
	assert_int_equal(myrio_port_pool_create(tx, 64, 2048, &pool), 0);
	uint8_t want[1514];
	for (uint64_t k = 0; k < 32; k++) {
		assert_true(model_asleep(watch->sleeping));
		struct myrio_pkt *p = myrio_pkt_alloc(pool);
		assert_non_null(p);
		p->len = simd_frame_len(k);
		simd_frame_fill(myrio_pkt_data(p), p->len, nic2_mac, info.mac, k);
		assert_int_equal(myrio_tx_burst(tx, &p, 1), 1);
		struct myrio_pkt *got = NULL;
		for (int i = 0; i < 3000 && !got; i++)
			if (myrio_rx_burst(rx, &got, 1) == 0)
				usleep(1000);
		if (!got)
			fprintf(stderr, "frame %llu after a quiet spell never arrived\n",
				(unsigned long long)k);
		assert_non_null(got);
		simd_frame_fill(want, simd_frame_len(k), nic2_mac, info.mac, k);
		assert_int_equal(got->len, simd_frame_len(k));
		assert_memory_equal(myrio_pkt_data(got), want, got->len);
		myrio_pkt_free(got);
	}
	myrio_pool_destroy(pool);
	myrio_port_close(rx);
	myrio_port_close(tx);
	myrio_bus_close(watch);
	kill(reader, SIGKILL);
	assert_int_equal(exit_code(reader), 128 + SIGKILL);
	honest_pair_start(f);
	honest_still_flowing(f, 2000);
}

/* A DMA_MAP request on a raw connection: the daemon's status. */
static int raw_dma_map(int s, uint64_t iova, uint64_t len, int fd)
{
	struct simd_msg m, rep;
	int fds[SIMD_MAX_FDS];
	unsigned nfds = 0;
	simd_hdr_init(&m.h, SIMD_DMA_MAP, 2);
	m.u.dma = (struct simd_dma_req){.iova = iova, .len = len};
	if (simd_send(s, &m, sizeof(m.h) + sizeof(m.u.dma), &fd, 1) < 0)
		return -EIO;
	ssize_t n = simd_recv_timeout(s, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds, 5000);
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	return n < (ssize_t)sizeof(rep.h) ? -EIO : rep.h.status;
}

/* ---- the interrupt eventfds: shared with the model, made blocking or filled ---- */

/* A daemon of its own (the RSS firmware, for a port of several queues): nic0 -> nic1 for
 * the attacker's interrupts, nic2 -> nic3 for an honest client's frames afterwards. */
static const char *const irq_daemon_args[] = {
    "--model", "eeprom_fw=rss", "--nic", "nic0,cable=nic1",
    "--nic",   "nic1",		"--nic", "nic2,cable=nic3",
    "--nic",   "nic3",		NULL};
static const uint8_t irq_nic1_mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, 0x02};
static const uint8_t irq_nic3_mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, 0x04};

enum irq_then { IRQ_HOLD, IRQ_RESET, IRQ_HANG_UP };
struct irq_attack {
	uint16_t queues, target; /* a port of `queues` on nic1; the fd of queue `target` */
	bool fill;		 /* counter to 2^64 - 2 (a write of 1 then waits) */
	enum irq_then then;	 /* hold on, ask for a function-level reset, or hang up */
};
static struct irq_attack irq_attack; /* set before the attacker's fork */
static char irq_sock[108];

/* The attacker's interrupt eventfd emptied (and filled) with O_NONBLOCK cleared: shared
 * with the model, a write or read of the daemon's then blocks. */
static int poison(int fd, bool fill)
{
	uint64_t v, big = 0xfffffffffffffffeull;
	for (;;) {
		while (read(fd, &v, sizeof(v)) == sizeof(v))
			;
		if (!fill || write(fd, &big, sizeof(big)) == sizeof(big))
			break;
	}
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

/* A port with interrupts armed (the model signals at the next frame), or the bare bus
 * for a reset or a hang-up (the daemon's control thread empties the MSI eventfd then). */
static int hostile_irq(struct shared *sh)
{
	const struct irq_attack *a = &irq_attack;
	if (a->then != IRQ_HOLD) {
		struct myrio_bus *bus;
		if (myrio_simd_bus_open("nic1", irq_sock, &bus) < 0)
			return 20;
		int fd = bus->ops->irq_setup(bus, true);
		if (fd < 0 || poison(fd, a->fill) < 0)
			return 21;
		atomic_store(&sh->irq_poisoned, 1);
		if (a->then == IRQ_RESET)
			bus->ops->reset(bus);
		bus->ops->close(bus);
		return 0;
	}
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:nic1@%s", irq_sock);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.irq = true;
	struct myrio_port *port;
	if (myrio_port_open_queues(&port, dev, &pc, a->queues) < 0)
		return 22;
	int fd = myrio_port_irq_fd_queue(port, a->target);
	if (fd < 0 || poison(fd, a->fill) < 0)
		return 23;
	for (uint16_t q = 0; q < a->queues; q++)
		myrio_port_irq_arm_queue(port, q);
	atomic_store(&sh->irq_poisoned, 1);
	for (;;)
		pause(); /* killed by the test */
}

/* Frames nic0 -> nic1 over 16 flows, which RSS spreads over every queue. */
static void irq_frames_to_attacker(struct myrio_port *tx, struct myrio_pool *pool)
{
	struct myrio_port_info info;
	myrio_port_info(tx, &info);
	for (uint16_t sport = 7000; sport < 7016; sport++) {
		struct myrio_pkt *p = myrio_pkt_alloc(pool);
		assert_non_null(p);
		uint8_t *f = myrio_pkt_data(p);
		memset(f, 0, 80);
		uint8_t *l4 = ipv4_frame(f, irq_nic1_mac, info.mac, 6, 80 - 14, 0x0a000001u,
					 0x0a000002u, sport);
		put_be16(l4, sport);
		put_be16(l4 + 2, 80);
		p->len = 80;
		assert_int_equal(myrio_tx_burst(tx, &p, 1), 1);
	}
}

/* An honest client after the attack: attaching answers (the control thread), and 64
 * frames nic2 -> nic3 arrive byte-exact (the model thread). The count that arrived. */
static unsigned irq_honest_frames(void)
{
	char dev_tx[160], dev_rx[160];
	snprintf(dev_tx, sizeof(dev_tx), "simd:nic2@%s", irq_sock);
	snprintf(dev_rx, sizeof(dev_rx), "simd:nic3@%s", irq_sock);
	struct myrio_port *tx, *rx;
	if (myrio_port_open(&tx, dev_tx, NULL) < 0)
		return 0;
	unsigned got = 0;
	struct myrio_pool *pool;
	struct myrio_port_info info;
	myrio_port_info(tx, &info);
	if (myrio_port_open(&rx, dev_rx, NULL) == 0 &&
	    myrio_port_pool_create(tx, 128, 2048, &pool) == 0) {
		uint8_t want[1514];
		for (uint64_t k = 0; k < 64; k++) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			p->len = simd_frame_len(k);
			simd_frame_fill(myrio_pkt_data(p), p->len, irq_nic3_mac, info.mac, k);
			myrio_tx_burst(tx, &p, 1);
		}
		for (int i = 0; i < 5000 && got < 64; i++) {
			struct myrio_pkt *p;
			if (myrio_rx_burst(rx, &p, 1) == 0) {
				usleep(1000);
				continue;
			}
			simd_frame_fill(want, simd_frame_len(got), irq_nic3_mac, info.mac, got);
			got += p->len == simd_frame_len(got) &&
			       !memcmp(myrio_pkt_data(p), want, p->len);
			myrio_pkt_free(p);
		}
		myrio_port_close(rx);
		myrio_pool_destroy(pool);
	}
	myrio_port_close(tx);
	return got;
}

/* SIGTERM, then up to 5 s for the exit: its status, or -1 (killed) if it did not stop. */
static int stop_within_5s(struct simd_daemon_proc *d)
{
	kill(d->pid, SIGTERM);
	int st = 0;
	for (int i = 0; i < 5000; i++) {
		if (waitpid(d->pid, &st, WNOHANG) == d->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(1000);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &st, 0);
	unlink(d->sock);
	return -1;
}

static void irq_attack_run(struct fixture *f, struct irq_attack a)
{
	struct simd_daemon_proc d;
	assert_int_equal(simd_daemon_start(&d, "hostile-irq", irq_daemon_args), 0);
	irq_attack = a;
	snprintf(irq_sock, sizeof(irq_sock), "%s", d.sock);
	atomic_store(&f->sh->irq_poisoned, 0);
	pid_t attacker = spawn(hostile_irq, f->sh);
	for (int i = 0; i < 10000 && !atomic_load(&f->sh->irq_poisoned); i++)
		usleep(1000);
	int poisoned = atomic_load(&f->sh->irq_poisoned);
	if (a.then == IRQ_HOLD && poisoned == 1) {
		char dev[160];
		snprintf(dev, sizeof(dev), "simd:nic0@%s", irq_sock);
		struct myrio_port *tx;
		struct myrio_pool *pool;
		assert_int_equal(myrio_port_open(&tx, dev, NULL), 0);
		assert_int_equal(myrio_port_pool_create(tx, 64, 2048, &pool), 0);
		irq_frames_to_attacker(tx, pool);
		usleep(100000); /* the model signals the attacker's queues */
		myrio_port_close(tx);
		myrio_pool_destroy(pool);
	} else if (a.then == IRQ_HANG_UP) {
		exit_code(attacker);
		attacker = 0;
	} else {
		usleep(200000); /* the reset request reaches the daemon */
	}
	unsigned got = irq_honest_frames();
	int stopped = stop_within_5s(&d);
	if (attacker > 0) {
		kill(attacker, SIGKILL);
		exit_code(attacker);
	}
	print_message("# attacker ready %d; honest frames %u of 64; daemon's exit %d\n", poisoned,
		      got, stopped);
	assert_int_equal(poisoned, 1);
	assert_int_equal(got, 64);
	assert_int_equal(stopped, 0);
	honest_still_flowing(f, 1000);
}

/* The MSI eventfd at 2^64 - 2 and blocking: the model's next interrupt for it, a plain
 * write, would wait for ever, and every NIC of the daemon with it. */
static void msi_eventfd_filled_stops_nothing(void **state)
{
	irq_attack_run(*state, (struct irq_attack){.queues = 1, .fill = true, .then = IRQ_HOLD});
}

/* The same on queue 1's vector (MSI-X, IRQ_VECTORS). */
static void queue_eventfd_filled_stops_nothing(void **state)
{
	irq_attack_run(
	    *state, (struct irq_attack){.queues = 2, .target = 1, .fill = true, .then = IRQ_HOLD});
}

/* The MSI eventfd emptied and blocking, then a function-level reset: the reset empties it
 * on the control thread, whose plain read would wait for ever (no request served, no
 * SIGTERM). */
static void msi_eventfd_blocking_then_reset_stops_nothing(void **state)
{
	irq_attack_run(*state, (struct irq_attack){.queues = 1, .then = IRQ_RESET});
}

/* The same, then the client hangs up: the detach empties it. */
static void msi_eventfd_blocking_then_hang_up_stops_nothing(void **state)
{
	irq_attack_run(*state, (struct irq_attack){.queues = 1, .then = IRQ_HANG_UP});
}

/* ---- finding 2: a TSO request outlives the memory it reads ---- */

#define TSO_MSS 1448u
#define TSO_SEGS 40u  /* one packet (and segment) per MSS of payload */
#define TSO_BYTE 0x11 /* the attacker's payload */
#define VICTIM_BYTE 0xC3
#define RX_HELD_MAX 8192u

/* Payload bytes of a received segment that are not the attacker's own. */
static unsigned foreign_bytes(const struct myrio_pkt *p)
{
	const uint8_t *f = myrio_pkt_data(p);
	unsigned n = 0;
	for (uint32_t i = TSO_REQ_HDR; i < p->len; i++)
		n += f[i] != TSO_BYTE;
	return n;
}

struct tso_rx {
	struct myrio_port *port;
	struct myrio_pkt *held[RX_HELD_MAX]; /* received and kept: the ring runs dry */
	unsigned nheld, foreign;
};

/* Receives on nic1, keeping every frame; segments of the request at seq0 are counted. */
static unsigned tso_rx_poll(struct tso_rx *r, uint32_t seq0)
{
	struct myrio_pkt *p[BURST];
	unsigned ours = 0;
	uint16_t n = myrio_rx_burst(r->port, p, BURST);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *f = myrio_pkt_data(p[i]);
		if (p[i]->len > TSO_REQ_HDR) {
			r->foreign += foreign_bytes(p[i]);
			ours += get_be32(f + 38) - seq0 < TSO_SEGS * TSO_MSS;
		}
		if (r->nheld < RX_HELD_MAX)
			r->held[r->nheld++] = p[i];
		else
			myrio_pkt_free(p[i]);
	}
	return ours;
}

static void tso_rx_release(struct tso_rx *r, unsigned n)
{
	while (n-- && r->nheld)
		myrio_pkt_free(r->held[--r->nheld]);
}

/* nic0 sends TSO requests to nic1 (a 10 Mb/s cable: about 50 ms a request), whose
 * receiver keeps every frame so that its ring runs dry and nic1 holds nic0 with PAUSE
 * frames. Once a request is held part-way, its memory is unregistered; another client
 * then registers memory, likely where the daemon had mapped the attacker's, and the
 * receiver lets the rest come: not one byte of it may be anything but the attacker's
 * own payload. */
static int hostile_tso_unmap(struct shared *sh)
{
	static struct tso_rx rx;
	struct myrio_port *tx;
	struct myrio_pool *pool;
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.rx_pool_size = 8;
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:nic1@%s", sh->sock);
	if (myrio_port_open(&rx.port, dev, &conf) < 0 || open_port(sh, "nic0", &tx) < 0)
		return 10;
	struct myrio_port_info ti, ri;
	if (myrio_port_info(tx, &ti) < 0 || myrio_port_info(rx.port, &ri) < 0 ||
	    myrio_port_pool_create(tx, 64, 2048 - 64, &pool) < 0)
		return 11;
	bool held = false;
	for (uint32_t k = 0; k < 200 && !held; k++) {
		struct myrio_pkt *pk[TSO_SEGS];
		uint32_t seq0 = k << 20;
		if (tso_request(pool, ri.mac, ti.mac, seq0, TSO_SEGS, TSO_MSS, TSO_BYTE, pk) < 0 ||
		    myrio_tx_burst(tx, pk, 1) != 1)
			return 12;
		unsigned got = 0, quiet_ms = 0;
		while (myrio_pool_free_count(pool) != pool->count) {
			unsigned more = tso_rx_poll(&rx, seq0);
			got += more;
			myrio_tx_burst(tx, NULL, 0);
			quiet_ms = more ? 0 : quiet_ms + 1;
			usleep(1000);
			if (quiet_ms < 300)
				continue;
			if (got > 0 && got < TSO_SEGS) { /* held part-way */
				held = true;
				break;
			}
			tso_rx_release(&rx, 8); /* held before it began: room for one refill */
			quiet_ms = 0;
		}
	}
	if (!held)
		return 13;
	struct myrio_dma_region *r = pool->region;
	atomic_store(&sh->tso_region_len, r->len);
	r->bus->ops->dma_unmap(r->bus, r);
	atomic_store(&sh->tso_phase, 1);
	for (int i = 0; i < 10000 && atomic_load(&sh->tso_phase) != 2; i++)
		usleep(1000);
	unsigned foreign_before = rx.foreign;
	tso_rx_release(&rx, RX_HELD_MAX);
	for (int i = 0; i < 1000; i++) { /* what is left of the request, if anything */
		tso_rx_poll(&rx, 0);
		tso_rx_release(&rx, RX_HELD_MAX);
		usleep(1000);
	}
	if (foreign_before)
		return 15;
	if (rx.foreign) {
		fprintf(stderr, "%u bytes not registered by this client went out\n", rx.foreign);
		return 1;
	}
	return 0;
}

static bool log_has(const struct fixture *f, const char *what)
{
	FILE *l = fopen(f->log, "r");
	char line[512];
	bool found = false;
	while (l && !found && fgets(line, sizeof(line), l))
		found = strstr(line, what) != NULL;
	if (l)
		fclose(l);
	return found;
}

static void tso_request_reads_no_unregistered_memory(void **state)
{
	struct fixture *f = *state;
	atomic_store(&f->sh->tso_phase, 0);
	pid_t pid = spawn(hostile_tso_unmap, f->sh);
	for (int i = 0; i < 60000 && atomic_load(&f->sh->tso_phase) == 0; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			fail_msg("the attacker stopped before its request was held");
		usleep(1000);
	}
	assert_int_equal(atomic_load(&f->sh->tso_phase), 1);
	/* the victim: another client's memory, the size of the region just unmapped */
	struct myrio_bus *bus = NULL;
	assert_int_equal(myrio_simd_bus_open("nic4", f->sh->sock, &bus), 0);
	struct myrio_dma_region v;
	assert_int_equal(myrio_dma_alloc(&v, atomic_load(&f->sh->tso_region_len)), 0);
	memset(v.va, VICTIM_BYTE, v.len);
	assert_int_equal(bus->ops->dma_map(bus, &v), 0);
	atomic_store(&f->sh->tso_phase, 2);
	assert_int_equal(exit_code(pid), 0);
	assert_true(simd_daemon_alive(&f->d));
	assert_true(log_has(f, "(tx buffer (TSO))")); /* counted as a DMA fault */
	size_t changed = 0;
	for (size_t i = 0; i < v.len; i++)
		changed += ((const uint8_t *)v.va)[i] != VICTIM_BYTE;
	assert_int_equal(changed, 0);
	bus->ops->dma_unmap(bus, &v);
	myrio_dma_free(&v);
	bus->ops->close(bus);
	honest_still_flowing(f, 2000);
}

/* ---- finding 4: a 4 KiB region of a 2 MiB hugetlbfs file ---- */

static void hugetlbfs_region_in_whole_pages(void **state)
{
	struct fixture *f = *state;
	int fd = memfd_create("hostile-huge", MFD_CLOEXEC | MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, 2u << 20) != 0) {
		if (fd >= 0)
			close(fd);
		skip(); /* no huge pages reserved here */
	}
	int s = -1, irq = -1;
	volatile uint8_t *bar = NULL;
	assert_int_equal(raw_attach(f->sh->sock, "nic0", &s, &bar, &irq, NULL), 0);
	/* Mapped, then truncated and unmapped, it used to leave 2 MiB mapped in the daemon
	 * for good (munmap of 4 KiB of a huge page fails), or kill it by SIGBUS. */
	assert_int_equal(raw_dma_map(s, SIMD_IOVA_BASE, 4096, fd), -EINVAL);
	assert_int_equal(raw_dma_map(s, SIMD_IOVA_BASE, 2u << 20, fd), 0);
	close(fd);
	close(s);
	munmap((void *)bar, SIM_BAR0_LEN);
	close(irq);
	honest_still_flowing(f, 2000);
}

/* ---- finding 5: a file that is not memory ---- */

static void only_memory_files_are_dma_memory(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 32];
	simd_daemon_path(path, sizeof(path));
	strcat(path, "-hostile-dma");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	struct statfs sfs;
	assert_int_equal(fstatfs(fd, &sfs), 0);
	if (sfs.f_type == TMPFS_MAGIC || sfs.f_type == HUGETLBFS_MAGIC) {
		close(fd);
		skip(); /* the build tree is on a memory file system */
	}
	int s = -1, irq = -1;
	volatile uint8_t *bar = NULL;
	assert_int_equal(raw_attach(f->sh->sock, "nic0", &s, &bar, &irq, NULL), 0);
	/* A file of a disk (or FUSE) file system: the model thread would fault on it. */
	assert_int_equal(raw_dma_map(s, SIMD_IOVA_BASE, 1 << 20, fd), -EBADF);
	int mfd = memfd_create("hostile-ok", MFD_CLOEXEC);
	assert_int_equal(ftruncate(mfd, 1 << 20), 0);
	assert_int_equal(raw_dma_map(s, SIMD_IOVA_BASE, 1 << 20, mfd), 0);
	close(mfd);
	close(fd);
	close(s);
	munmap((void *)bar, SIM_BAR0_LEN);
	close(irq);
	honest_still_flowing(f, 2000);
}

/* ---- finding 5 itself: a file whose file system never answers ---- */

static struct fuse_stall stall;

static int stall_stop(void **state)
{
	fuse_stall_stop(&stall);
	return 0;
}

/* Offers the stalling file system's file as DMA memory on nic0 of the daemon at sock: the
 * daemon's status (-EIO when it did not answer within 5 s). */
static int offer_stalling_file(const char *sock)
{
	char path[96];
	snprintf(path, sizeof(path), "%s/dma", stall.mnt);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	int s = -1, irq = -1;
	volatile uint8_t *bar = NULL;
	int rc = raw_attach(sock, "nic0", &s, &bar, &irq, NULL);
	if (rc == 0) {
		rc = raw_dma_map(s, SIMD_IOVA_BASE, FUSE_STALL_FILE_LEN, fd);
		munmap((void *)bar, SIM_BAR0_LEN);
		close(irq);
	}
	close(s);
	close(fd);
	return rc;
}

/* A FUSE file whose server never answers a read or a statfs: refused without the daemon
 * asking its file system anything (it would wait there for ever, SIGTERM included); the
 * daemon answers everyone meanwhile, and a daemon attacked so stops on SIGTERM while the
 * server still stalls. */
static void stalling_file_system_holds_nothing(void **state)
{
	struct fixture *f = *state;
	int rc = fuse_stall_start(&stall);
	if (rc < 0) {
		print_message("# FUSE cannot be mounted here: %s\n", strerror(-rc));
		skip();
	}
	assert_int_equal(offer_stalling_file(f->sh->sock), -EBADF);
	honest_still_flowing(f, 2000);
	struct simd_daemon_proc d2;
	static const char *const args[] = {"--nic", "nic0", NULL};
	assert_int_equal(simd_daemon_start(&d2, "hostile-fuse", args), 0);
	int offered = offer_stalling_file(d2.sock);
	kill(d2.pid, SIGTERM);
	int st = 0;
	pid_t done = 0;
	for (int i = 0; i < 5000 && done == 0; i++) {
		done = waitpid(d2.pid, &st, WNOHANG);
		if (done == 0)
			usleep(1000);
	}
	if (done == 0) { /* hung: the stall's end frees it */
		fuse_stall_stop(&stall);
		waitpid(d2.pid, &st, 0);
	}
	unlink(d2.sock);
	assert_int_equal(offered, -EBADF);
	assert_int_equal(done, d2.pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- finding 6: a socket directory someone else controls ---- */

static void socket_dir_must_be_the_daemons(void **state)
{
	struct fixture *f = *state;
	char dir[64], sock[96];
	snprintf(dir, sizeof(dir), "/tmp/myrio-hostile-dir-%d", (int)getpid());
	snprintf(sock, sizeof(sock), "%s/simd.sock", dir);
	/* writable by anyone, not sticky: anyone may swap the socket for a symlink */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	char exe[PATH_MAX + 32];
	simd_daemon_path(exe, sizeof(exe));
	pid_t pid = fork();
	if (pid == 0) {
		simd_die_with_parent();
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDERR_FILENO);
		execl(exe, "myrio-simd", "--socket", sock, "--mode", "0666", (char *)NULL);
		_exit(127);
	}
	int rc = simd_wait_socket(sock, pid);
	if (rc == 0)
		kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	/* owned by another user */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	pid_t pid2 = fork();
	if (pid2 == 0) {
		simd_die_with_parent();
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDERR_FILENO);
		execl(exe, "myrio-simd", "--socket", sock, (char *)NULL);
		_exit(127);
	}
	int rc2 = simd_wait_socket(sock, pid2);
	if (rc2 == 0)
		kill(pid2, SIGTERM);
	waitpid(pid2, NULL, 0);
	unlink(sock);
	rmdir(dir);
	assert_int_equal(rc, -ECHILD); /* refused to serve there, and exited */
	assert_int_equal(rc2, -ECHILD);
	/* the socket of a daemon is made with its final mode, nothing done to the path */
	struct stat st;
	assert_int_equal(stat(f->sh->sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	honest_still_flowing(f, 2000);
}

/* In a child: become an unprivileged user (its own groups only). The change of user
 * clears the parent-death signal: set again, so that a failed test leaves no child. */
static int become(uid_t uid)
{
	gid_t g = (gid_t)uid;
	if (setgroups(1, &g) != 0 || setgid(g) != 0 || setuid(uid) != 0)
		return -1;
	simd_die_with_parent();
	return 0;
}

/* ---- finding 8: who may connect and attach ---- */

static int hostile_stranger(struct shared *sh)
{
	int s = -1, irq = -1;
	volatile uint8_t *bar = NULL;
	if (become(65533) < 0)
		return 20;
	/* in no allow list, not in the socket's group: hung up on, nothing attached */
	return raw_attach(sh->sock, "nic1", &s, &bar, &irq, NULL) == 0 ? 1 : 0;
}

static int hostile_listed_elsewhere(struct shared *sh)
{
	int s = -1, irq = -1;
	volatile uint8_t *bar = NULL;
	if (become(65534) < 0)
		return 20;
	/* admitted for nic4 (its allow list), so it connects; nic0 lists only uid 1 */
	if (raw_attach(sh->sock, "nic0", &s, &bar, &irq, NULL) == 0)
		return 1;
	close(s);
	if (raw_attach(sh->sock, "nic4", &s, &bar, &irq, NULL) != 0)
		return 2;
	close(s);
	return 0;
}

static void only_admitted_users_attach(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(run_hostile(f, hostile_stranger), 0);
	assert_int_equal(run_hostile(f, hostile_listed_elsewhere), 0);
	honest_still_flowing(f, 2000);
}

/* ---- finding 7: connections held open to lock everyone out ---- */

static int hostile_hoarder(struct shared *sh)
{
	int socks[SIMD_MAX_CONNS_TRIED];
	unsigned open_now = 0;
	if (become(65534) < 0)
		return 20;
	for (unsigned i = 0; i < SIMD_MAX_CONNS_TRIED; i++)
		if (simd_connect(sh->sock, &socks[i]) == 0)
			open_now++;
		else
			socks[i] = -1;
	atomic_store(&sh->hoarded, 1);
	while (atomic_load(&sh->hoarded) == 1)
		usleep(1000);
	/* idle and unattached: every connection is closed by the daemon in the end */
	unsigned closed = 0;
	for (unsigned i = 0; i < SIMD_MAX_CONNS_TRIED; i++) {
		char b;
		if (socks[i] < 0)
			continue;
		struct timeval tv = {.tv_sec = 6};
		setsockopt(socks[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		closed += recv(socks[i], &b, 1, 0) == 0;
	}
	return closed == open_now ? 0 : 1;
}

static void connection_hoarding_is_bounded(void **state)
{
	struct fixture *f = *state;
	atomic_store(&f->sh->hoarded, 0);
	pid_t h = spawn(hostile_hoarder, f->sh);
	for (int i = 0; i < 5000 && atomic_load(&f->sh->hoarded) == 0; i++)
		usleep(1000);
	usleep(100000);
	struct myrio_bus *bus = NULL;
	assert_int_equal(myrio_simd_bus_open("nic1", f->sh->sock, &bus), 0);
	bus->ops->close(bus);
	atomic_store(&f->sh->hoarded, 2);
	assert_int_equal(exit_code(h), 0);
	honest_still_flowing(f, 2000);
}

/* ---- finding 9: flooding the log ---- */

static unsigned log_lines(const struct fixture *f)
{
	FILE *l = fopen(f->log, "r");
	unsigned n = 0;
	int ch;
	if (!l)
		return 0;
	while ((ch = fgetc(l)) != EOF)
		n += ch == '\n';
	fclose(l);
	return n;
}

static void refusals_do_not_flood_the_log(void **state)
{
	struct fixture *f = *state;
	unsigned before = log_lines(f);
	int s = -1, irq = -1;
	volatile uint8_t *bar = NULL;
	assert_int_equal(raw_attach(f->sh->sock, "nic1", &s, &bar, &irq, NULL), 0);
	struct simd_msg m, rep;
	int fds[SIMD_MAX_FDS];
	unsigned nfds;
	for (unsigned i = 0; i < 3000; i++) { /* each one refused */
		simd_hdr_init(&m.h, SIMD_DMA_UNMAP, i);
		m.u.dma = (struct simd_dma_req){.iova = SIMD_IOVA_BASE, .len = 4096};
		assert_int_equal(simd_send(s, &m, sizeof(m.h) + sizeof(m.u.dma), NULL, 0), 0);
		assert_true(
		    simd_recv_timeout(s, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds, 5000) > 0);
	}
	/* a refused boot handoff, then a reset, over and over */
	for (unsigned i = 0; i < 200; i++) {
		bar_put(bar, SIM_HANDOFF_OFF + 12, 0);
		bar_put(bar, SIM_HANDOFF_OFF + 60, 0);
		usleep(2000);
		simd_hdr_init(&m.h, SIMD_RESET, i);
		assert_int_equal(simd_send(s, &m, sizeof(m.h), NULL, 0), 0);
		assert_true(
		    simd_recv_timeout(s, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds, 5000) > 0);
	}
	close(s);
	munmap((void *)bar, SIM_BAR0_LEN);
	close(irq);
	usleep(100000);
	unsigned added = log_lines(f) - before;
	printf("# %u log lines for 3000 refused requests and 200 refused handoffs\n", added);
	assert_true(added < 60);
	honest_still_flowing(f, 2000);
}

/* ---- finding 10: myrio-setup, run as root, writes sysfs through no symlink ---- */

static void sysfs_writes_follow_no_symlink(void **state)
{
	struct fixture *f = *state;
	char victim[64], link[64];
	snprintf(victim, sizeof(victim), "/tmp/myrio-hostile-victim-%d", (int)getpid());
	snprintf(link, sizeof(link), "/tmp/myrio-hostile-attr-%d", (int)getpid());
	int fd = open(victim, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious", 8), 8);
	close(fd);
	unlink(link);
	assert_int_equal(symlink(victim, link), 0);
	int rc = myrio_sysfs_write(link, "vfio-pci");
	char buf[16] = {0};
	fd = open(victim, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 8);
	close(fd);
	unlink(link);
	unlink(victim);
	assert_int_equal(rc, -ELOOP);
	assert_string_equal(buf, "precious");
	honest_still_flowing(f, 1000);
}

/* The daemon with its stderr (its log) in a file. */
static int start_logged(struct simd_daemon_proc *d, const char *const *args, const char *log)
{
	int logfd = open(log, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	int saved = dup(STDERR_FILENO);
	if (logfd < 0 || saved < 0 || dup2(logfd, STDERR_FILENO) < 0)
		return -EIO;
	int rc = simd_daemon_start(d, "hostile", args);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(logfd);
	return rc;
}

static int setup(void **state)
{
	static struct fixture f;
	/* mode 0666: the kernel lets anyone connect, the daemon decides who stays */
	static const char *const args[] = {"--nic",  "nic0,cable=nic1,allow=uid:1,link=10m",
					   "--nic",  "nic1",
					   "--nic",  "nic2,cable=nic3",
					   "--nic",  "nic3",
					   "--nic",  "nic4,allow=uid:65534",
					   "--mode", "0666",
					   "--idle", "2",
					   "--link", "unlimited",
					   NULL};
	snprintf(f.log, sizeof(f.log), "/tmp/myrio-simd-hostile-%d.log", (int)getpid());
	if (start_logged(&f.d, args, f.log) < 0)
		return -1;
	f.sh = mmap(NULL, sizeof(*f.sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f.sh == MAP_FAILED)
		return -1;
	memset(f.sh, 0, sizeof(*f.sh));
	snprintf(f.sh->sock, sizeof(f.sh->sock), "%s", f.d.sock);
	honest_pair_start(&f);
	for (int i = 0; i < 1000 && atomic_load(&f.sh->verified) < 1000; i++)
		usleep(10000);
	*state = &f;
	return atomic_load(&f.sh->verified) >= 1000 ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	atomic_store(&f->sh->stop, 1);
	int client = exit_code(f->client), echo = exit_code(f->echo);
	int bad = atomic_load(&f->sh->canaries_bad);
	int daemon = simd_daemon_stop(&f->d);
	if (client || echo || bad || daemon) {
		fprintf(stderr, "honest client %d, echo %d, canary bytes changed %d, daemon %d\n",
			client, echo, bad, daemon);
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(handoff_header_pointer_cannot_wrap),
	    cmocka_unit_test(former_owner_reaches_nothing),
	    cmocka_unit_test(wake_eventfd_reader_stops_nothing),
	    cmocka_unit_test(msi_eventfd_filled_stops_nothing),
	    cmocka_unit_test(queue_eventfd_filled_stops_nothing),
	    cmocka_unit_test(msi_eventfd_blocking_then_reset_stops_nothing),
	    cmocka_unit_test(msi_eventfd_blocking_then_hang_up_stops_nothing),
	    cmocka_unit_test(tso_request_reads_no_unregistered_memory),
	    cmocka_unit_test(hugetlbfs_region_in_whole_pages),
	    cmocka_unit_test(only_memory_files_are_dma_memory),
	    cmocka_unit_test_teardown(stalling_file_system_holds_nothing, stall_stop),
	    cmocka_unit_test(socket_dir_must_be_the_daemons),
	    cmocka_unit_test(connection_hoarding_is_bounded),
	    cmocka_unit_test(only_admitted_users_attach),
	    cmocka_unit_test(refusals_do_not_flood_the_log),
	    cmocka_unit_test(sysfs_writes_follow_no_symlink),
	};
	if (getenv("MYRIO_TEST_FILTER")) /* one case only */
		cmocka_set_test_filter(getenv("MYRIO_TEST_FILTER"));
	return cmocka_run_group_tests(tests, setup, teardown);
}
