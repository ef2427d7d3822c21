/* SPDX-License-Identifier: BSD-3-Clause */
/* A client that shrinks its DMA memory under the model daemon: the daemon survives, drops
 * that client with a log line naming it and its region, and keeps serving everyone else.
 *
 * One daemon hosts two cables: nic2 <-> nic3 carries an echo and a client checking every
 * echo byte-exact for the whole test, and on nic0 <-> nic1 a blaster on nic1 floods nic0,
 * where the guilty client receives. Mid-traffic the guilty client stops touching its DMA
 * memory and truncates every DMA file of its own to 0 bytes, first with unsealable memfds
 * (made without MFD_ALLOW_SEALING), then with hugetlbfs files (skipped without hugepages).
 * The model's next frame for nic0 lands in the lost pages. Then: the daemon is alive,
 * nic0 is free again while the guilty process still lives (the daemon dropped it, not a
 * hang-up), the echoes on the other cable keep coming back intact, the log names the pid,
 * and the daemon still shuts down cleanly. BAR0, which the daemon hands out, cannot be
 * truncated at all (sealed).
 *
 * Under AddressSanitizer the daemon's own SIGBUS handler replaces ASan's, as ASan allows by
 * default (allow_user_segv_handler=1); with that option off the daemon logs that its
 * handler did not take, and the tests fail saying so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */
#include <limits.h>

#include "bus/bus.h"
#include "bus/simd_proto.h"
#include "myrio/port.h"
#include "simd_daemon.h"
#include "simd_stream.h"
#include "util/byteorder.h"
#include "wall_clock.h"

#define BURST 32
#define WINDOW 256

/* ---- the guilty client's memory, as each test wants it ----
 * These override the C library's memfd_create and libhugetlbfs's file maker for the
 * library code linked into this program; only the guilty child changes want_dma. */
enum dma_kind { DMA_AS_USUAL, DMA_UNSEALABLE_MEMFD, DMA_HUGETLBFS };
static enum dma_kind want_dma;

int memfd_create(const char *name, unsigned int flags)
{
	if (want_dma == DMA_UNSEALABLE_MEMFD)
		flags &= ~(unsigned)MFD_ALLOW_SEALING; /* as an application's own memfd may be */
	return (int)syscall(SYS_memfd_create, name, flags);
}

int hugetlbfs_unlinked_fd_for_size(long page_size)
{
	if (want_dma == DMA_UNSEALABLE_MEMFD)
		return -1; /* falls back to a memfd */
	int (*real)(long) =
	    (int (*)(long))(uintptr_t)dlsym(RTLD_NEXT, "hugetlbfs_unlinked_fd_for_size");
	return real ? real(page_size) : -1;
}

/* Shared with the children (MAP_SHARED before fork). */
struct shared {
	char sock[108];
	atomic_int stop;
	atomic_int echo_ready;
	atomic_uint_fast64_t echo_bad;	/* echo side: malformed frames */
	atomic_uint_fast64_t verified;	/* innocent client: echoes checked byte-exact */
	atomic_uint_fast64_t blasted;	/* frames sent to nic0 */
	atomic_uint_fast64_t guilty_rx; /* frames the guilty client received */
	atomic_int freeze;		/* parent -> guilty: stop, truncate */
	atomic_int truncated;		/* guilty -> parent: files truncated, or -errno */
};

struct fixture {
	struct simd_daemon_proc d;
	struct shared *sh;
	pid_t echo, client, blaster;
	unsigned dropped; /* guilty clients so far */
	char log[128];
};

static int open_port(const struct shared *sh, const char *nic, struct myrio_port **port)
{
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:%s@%s", nic, sh->sock);
	int rc = -EBUSY;
	for (int i = 0; i < 500 && rc == -EBUSY; i++) { /* a dropped predecessor, briefly */
		rc = myrio_port_open(port, dev, NULL);
		if (rc == -EBUSY)
			usleep(10000);
	}
	return rc;
}

/* ---- frames: 60..1514 bytes, every byte a function of (k, offset) ---- */
static const uint8_t nic0_mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, 0x01};
static const uint8_t nic2_mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, 0x03};

/* nic2: returns every frame to its sender. */
static int echo_main(struct shared *sh)
{
	struct myrio_port *port;
	if (open_port(sh, "nic2", &port) < 0)
		return 10;
	atomic_store(&sh->echo_ready, 1);
	struct myrio_pkt *pkts[BURST];
	while (!atomic_load(&sh->stop)) {
		uint16_t n = myrio_rx_burst(port, pkts, BURST), out = 0;
		if (n == 0)
			sched_yield();
		for (uint16_t i = 0; i < n; i++) {
			uint8_t *f = myrio_pkt_data(pkts[i]);
			if (pkts[i]->len < 22 || get_be16(f + 12) != SIMD_FRAME_ETHERTYPE) {
				atomic_fetch_add(&sh->echo_bad, 1);
				myrio_pkt_free(pkts[i]);
				continue;
			}
			memcpy(f, f + 6, 6);
			memcpy(f + 6, nic2_mac, 6);
			pkts[out++] = pkts[i];
		}
		uint16_t sent = 0;
		while (sent < out && !atomic_load(&sh->stop))
			sent += myrio_tx_burst(port, pkts + sent, (uint16_t)(out - sent));
		for (uint16_t i = sent; i < out; i++)
			myrio_pkt_free(pkts[i]);
	}
	myrio_port_close(port);
	return 0;
}

/* nic3: sends at most WINDOW ahead of the echoes and checks each one, in order and
 * byte-exact, until told to stop. */
static int client_main(struct shared *sh)
{
	struct myrio_port *port;
	struct myrio_port_info info;
	struct myrio_pool *pool;
	if (open_port(sh, "nic3", &port) < 0)
		return 10;
	myrio_port_info(port, &info);
	if (myrio_port_pool_create(port, 1024, 2048, &pool) < 0)
		return 11;
	int rc = simd_stream_check(port, pool, info.mac, nic2_mac, WINDOW, &sh->stop, &sh->verified,
				   "innocent client");
	if (rc)
		return rc;
	myrio_port_close(port);
	return 0;
}

/* nic1: floods nic0 with small bursts, whoever is (or is not) listening there. */
static int blaster_main(struct shared *sh)
{
	struct myrio_port *port;
	struct myrio_port_info info;
	struct myrio_pool *pool;
	if (open_port(sh, "nic1", &port) < 0)
		return 10;
	myrio_port_info(port, &info);
	if (myrio_port_pool_create(port, 512, 2048, &pool) < 0)
		return 11;
	uint64_t k = 0;
	while (!atomic_load(&sh->stop)) {
		struct myrio_pkt *pkts[8];
		unsigned n = 0;
		while (n < 8) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			p->len = simd_frame_len(k + n);
			simd_frame_fill(myrio_pkt_data(p), p->len, nic0_mac, info.mac, k + n);
			pkts[n++] = p;
		}
		uint16_t took = myrio_tx_burst(port, pkts, (uint16_t)n);
		for (unsigned i = took; i < n; i++)
			myrio_pkt_free(pkts[i]);
		k += took;
		atomic_store(&sh->blasted, k);
		usleep(100); /* a steady stream, not a second busy core */
	}
	myrio_port_close(port);
	return 0;
}

/* The DMA files this process registered: hugetlbfs files and the library's memfds (not
 * the BAR0 memfd the daemon passed, which is its own). */
static bool is_dma_file(int fd)
{
	char link[64], target[256];
	struct statfs sfs;
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == HUGETLBFS_MAGIC)
		return true;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strstr(target, "memfd:myrio-dma") != NULL;
}

/* Truncates every DMA file to 0: the count, or -errno (-ENOENT: none of the kind). */
static int truncate_dma_files(enum dma_kind kind)
{
	int count = 0;
	for (int fd = 3; fd < 1024; fd++) {
		struct statfs sfs;
		if (fcntl(fd, F_GETFD) < 0 || !is_dma_file(fd))
			continue;
		bool huge = fstatfs(fd, &sfs) == 0 && sfs.f_type == HUGETLBFS_MAGIC;
		if (huge != (kind == DMA_HUGETLBFS))
			continue;
		if (ftruncate(fd, 0) != 0)
			return -errno; /* sealed: the interposition did not work */
		count++;
	}
	return count ? count : -ENOENT;
}

/* nic0: receives the blast; when told, stops touching its DMA memory, truncates every
 * DMA file of its own and waits, connection open, for the end. */
static int guilty_main(struct shared *sh, enum dma_kind kind)
{
	struct myrio_port *port;
	want_dma = kind;
	if (open_port(sh, "nic0", &port) < 0)
		return 10;
	struct myrio_pkt *pkts[BURST];
	while (!atomic_load(&sh->freeze)) {
		uint16_t n = myrio_rx_burst(port, pkts, BURST);
		if (n == 0)
			sched_yield();
		for (uint16_t i = 0; i < n; i++)
			myrio_pkt_free(pkts[i]);
		atomic_fetch_add(&sh->guilty_rx, n);
	}
	atomic_store(&sh->truncated, truncate_dma_files(kind));
	for (;;)
		pause(); /* until SIGKILL: its memory is gone, nothing here may touch it */
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

static bool wait_for(atomic_uint_fast64_t *v, uint64_t at_least, unsigned ms)
{
	for (unsigned i = 0; i < ms && atomic_load(v) < at_least; i++)
		usleep(1000);
	return atomic_load(v) >= at_least;
}

static bool log_has(const struct fixture *f, const char *needle)
{
	static char text[1 << 16];
	FILE *l = fopen(f->log, "r");
	if (!l)
		return false;
	size_t n = fread(text, 1, sizeof(text) - 1, l);
	fclose(l);
	text[n] = '\0';
	return strstr(text, needle) != NULL;
}

/* The daemon with its stderr (its log) in a file. */
static int start_logged(struct simd_daemon_proc *d, const char *tag, const char *const *args,
			const char *log)
{
	int logfd = open(log, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	int saved = dup(STDERR_FILENO);
	if (logfd < 0 || saved < 0 || dup2(logfd, STDERR_FILENO) < 0)
		return -EIO;
	int rc = simd_daemon_start(d, tag, args);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(logfd);
	return rc;
}

/* The daemon's status report, asked for on a connection of its own. */
static bool status_has(const struct fixture *f, const char *needle)
{
	static struct {
		struct simd_hdr h;
		char text[SIMD_STATUS_MAX + 1];
	} rep;
	struct simd_hdr req;
	int s, fds[SIMD_MAX_FDS];
	unsigned nfds = 0;
	if (simd_connect(f->sh->sock, &s) < 0)
		return false;
	simd_hdr_init(&req, SIMD_STATUS, 1);
	ssize_t n =
	    simd_send(s, &req, sizeof(req), NULL, 0) < 0
		? -1
		: simd_recv_timeout(s, &rep, sizeof(rep) - 1, fds, SIMD_MAX_FDS, &nfds, 5000);
	close(s);
	if (n < (ssize_t)sizeof(rep.h) || rep.h.status != 0)
		return false;
	((char *)&rep)[n] = '\0';
	return strstr(rep.text, needle) != NULL;
}

static int setup(void **state)
{
	static struct fixture f;
	static const char *const args[] = {
	    "--nic",	       "nic0,cable=nic1", "--nic", "nic1",  "--nic",
	    "nic2,cable=nic3", "--nic",		  "nic3",  "--nic", "nic4",
	    "--link",	       "unlimited",	  NULL};
	/* The daemon's log goes to a file the tests read. */
	snprintf(f.log, sizeof(f.log), "/tmp/myrio-simd-shrink-%d.log", (int)getpid());
	if (start_logged(&f.d, "shrink", args, f.log) < 0)
		return -1;
	f.sh = mmap(NULL, sizeof(*f.sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f.sh == MAP_FAILED)
		return -1;
	memset(f.sh, 0, sizeof(*f.sh));
	snprintf(f.sh->sock, sizeof(f.sh->sock), "%s", f.d.sock);
	f.echo = spawn(echo_main, f.sh);
	for (int i = 0; i < 1000 && !atomic_load(&f.sh->echo_ready); i++)
		usleep(10000);
	f.client = spawn(client_main, f.sh);
	f.blaster = spawn(blaster_main, f.sh);
	if (!wait_for(&f.sh->verified, 1000, 20000) || !wait_for(&f.sh->blasted, 100, 20000))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int bad = 0;
	atomic_store(&f->sh->stop, 1);
	bad |= exit_code(f->client) != 0;
	bad |= exit_code(f->echo) != 0;
	bad |= exit_code(f->blaster) != 0;
	bad |= atomic_load(&f->sh->echo_bad) != 0;
	/* Through all of it, still a clean shutdown: exit 0, socket file removed. */
	bad |= simd_daemon_stop(&f->d) != 0;
	if (bad)
		fprintf(stderr, "teardown failed: daemon log kept in %s\n", f->log);
	else
		unlink(f->log);
	munmap(f->sh, sizeof(*f->sh));
	return bad ? -1 : 0;
}

static void guilty_client_is_dropped(struct fixture *f, enum dma_kind kind)
{
	struct shared *sh = f->sh;
	atomic_store(&sh->freeze, 0);
	atomic_store(&sh->truncated, 0);
	atomic_store(&sh->guilty_rx, 0);
	if (log_has(f, "the SIGBUS handler did not take"))
		fail_msg("the daemon's SIGBUS handler is not in place (a sanitizer's instead? "
			 "ASAN_OPTIONS=allow_user_segv_handler=1): see %s",
			 f->log);
	pid_t guilty = fork();
	if (guilty == 0) {
		simd_die_with_parent();
		_exit(guilty_main(sh, kind));
	}
	assert_true(guilty > 0);
	/* Traffic flows into the guilty client's memory... */
	if (!wait_for(&sh->guilty_rx, 200, 20000)) {
		kill(guilty, SIGKILL);
		fail_msg("the guilty client received nothing (exit %d)", exit_code(guilty));
	}
	/* ...when its files are truncated under the daemon. */
	atomic_store(&sh->freeze, 1);
	for (int i = 0; i < 10000 && !atomic_load(&sh->truncated); i++)
		usleep(1000);
	int truncated = atomic_load(&sh->truncated);
	if (truncated == -ENOENT && kind == DMA_HUGETLBFS) {
		kill(guilty, SIGKILL);
		waitpid(guilty, NULL, 0);
		skip(); /* no hugepages reserved and mounted: see scripts/setup.sh */
	}
	assert_true(truncated > 0);

	/* The daemon frees nic0 while the guilty process is still alive and connected: it
	 * dropped the client itself. */
	struct myrio_bus *bus;
	int rc = -EBUSY;
	uint64_t t0 = wall_ns();
	while (rc == -EBUSY && wall_ns() - t0 < 10000000000ull && simd_daemon_alive(&f->d)) {
		usleep(5000);
		rc = myrio_simd_bus_open("nic0", sh->sock, &bus);
	}
	assert_true(simd_daemon_alive(&f->d));
	assert_int_equal(rc, 0);
	bus->ops->close(bus);
	assert_int_equal(waitpid(guilty, NULL, WNOHANG), 0);

	/* The other cable never stopped: more echoes come back byte-exact. */
	uint64_t v = atomic_load(&sh->verified);
	assert_true(wait_for(&sh->verified, v + 10000, 20000));
	kill(guilty, SIGKILL);
	assert_int_equal(exit_code(guilty), 128 + SIGKILL);

	/* The log names the client and what it did. */
	char who[64];
	snprintf(who, sizeof(who), "pid %d: nic0: DMA region at IOVA", (int)guilty);
	assert_true(log_has(f, who));
	assert_true(log_has(f, "its file was truncated"));
	char count[64];
	snprintf(count, sizeof(count), "%u clients dropped for shrinking", ++f->dropped);
	assert_true(status_has(f, count));
	assert_true(simd_daemon_alive(&f->d));
}

static void unsealable_memfd_shrinks(void **state)
{
	guilty_client_is_dropped(*state, DMA_UNSEALABLE_MEMFD);
}

static void hugetlbfs_file_shrinks(void **state)
{
	guilty_client_is_dropped(*state, DMA_HUGETLBFS);
}

/* BAR0 comes from the daemon: a client cannot resize it. */
static void bar0_cannot_be_truncated(void **state)
{
	struct fixture *f = *state;
	int s, fds[SIMD_MAX_FDS];
	unsigned nfds = 0;
	struct simd_msg m, rep;
	assert_int_equal(simd_connect(f->sh->sock, &s), 0);
	simd_hdr_init(&m.h, SIMD_ATTACH, 1);
	memset(&m.u.attach_req, 0, sizeof(m.u.attach_req));
	snprintf(m.u.attach_req.nic, sizeof(m.u.attach_req.nic), "nic4");
	assert_int_equal(simd_send(s, &m, sizeof(m.h) + sizeof(m.u.attach_req), NULL, 0), 0);
	ssize_t n = simd_recv_timeout(s, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds, 5000);
	assert_true(n >= (ssize_t)sizeof(rep.h));
	assert_int_equal(rep.h.status, 0);
	assert_int_equal(nfds, 4); /* BAR0, interrupt eventfd, the model's wake page and eventfd */
	struct stat st;
	assert_int_equal(ftruncate(fds[0], 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fds[0], 1ll << 30), -1);
	assert_int_equal(fstat(fds[0], &st), 0);
	assert_int_equal(st.st_size, 16 << 20);
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	close(s);
	usleep(20000); /* the model polls nic4's BAR0 meanwhile */
	assert_true(simd_daemon_alive(&f->d));
}

/* The guard takes only faults inside client memory: any other SIGBUS still ends the
 * daemon (the default action, or a sanitizer's report), never swallowed. */
static void other_sigbus_still_kills(void **state)
{
	(void)state;
	struct simd_daemon_proc d;
	static const char *const args[] = {"--nic", "nic0", NULL};
	char log[128];
	snprintf(log, sizeof(log), "/tmp/myrio-simd-shrink-kill-%d.log", (int)getpid());
	assert_int_equal(start_logged(&d, "shrink-kill", args, log), 0);
	kill(d.pid, SIGBUS);
	int st = 0;
	assert_int_equal(waitpid(d.pid, &st, 0), d.pid);
	unlink(d.sock);
	unlink(log);
	assert_true((WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS) ||
		    (WIFEXITED(st) && WEXITSTATUS(st) != 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(unsealable_memfd_shrinks),
	    cmocka_unit_test(hugetlbfs_file_shrinks),
	    cmocka_unit_test(bar0_cannot_be_truncated),
	};
	const struct CMUnitTest alone[] = {
	    cmocka_unit_test(other_sigbus_still_kills),
	};
	int failed = cmocka_run_group_tests(tests, setup, teardown);
	return failed + cmocka_run_group_tests(alone, NULL, NULL);
}
