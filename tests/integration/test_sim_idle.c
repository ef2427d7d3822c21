/* SPDX-License-Identifier: BSD-3-Clause */
/* The threaded model sleeps when quiet and a host that posts wakes it (docs/model-daemon.md,
 * "Idle"), in process and in the daemon. The model is told to look at its own timers only
 * once a minute (idle_ms), so frames sent after a quiet spell cross the cable within the
 * test's 5 s only if the driver's post woke the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "bus/simd_proto.h"
#include "myrio/pkt.h"
#include "myrio/port.h"
#include "myrio/sim.h"
#include "sim/model.h"
#include "simd_daemon.h"
#include "wall_clock.h"

static void nap_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* Waits until the wake page says the model sleeps; false after 10 s. */
static bool model_asleep(const _Atomic uint32_t *sleeping)
{
	for (double end = wall_s() + 10; wall_s() < end; nap_ms(10))
		if (atomic_load(sleeping))
			return true;
	return false;
}

/* A 60-byte broadcast frame of the local experimental ethertype, its payload all tag. */
static struct myrio_pkt *frame(struct myrio_pool *pool, uint8_t tag)
{
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	assert_non_null(p);
	uint8_t *f = myrio_pkt_data(p);
	memset(f, 0xff, 6);
	memset(f + 6, 0x02, 6);
	f[12] = 0x88, f[13] = 0xb5;
	memset(f + 14, tag, 46);
	p->len = 60;
	return p;
}

static void send_frames(struct myrio_port *a, struct myrio_pool *pool, unsigned n, uint8_t tag)
{
	for (unsigned i = 0; i < n; i++) {
		struct myrio_pkt *p = frame(pool, tag);
		assert_int_equal(myrio_tx_burst(a, &p, 1), 1);
	}
}

/* Receives until n frames with tag arrived or 5 s passed; returns how many did. */
static unsigned receive(struct myrio_port *b, unsigned n, uint8_t tag)
{
	unsigned got = 0;
	for (double end = wall_s() + 5; got < n && wall_s() < end;) {
		struct myrio_pkt *p[32];
		uint16_t k = myrio_rx_burst(b, p, 32);
		for (uint16_t i = 0; i < k; i++) {
			const uint8_t *f = myrio_pkt_data(p[i]);
			got += p[i]->len >= 60 && f[12] == 0x88 && f[13] == 0xb5 && f[14] == tag;
			myrio_pkt_free(p[i]);
		}
		if (!k)
			nap_ms(1);
	}
	return got;
}

typedef void rounds_fn(struct myrio_port *a, struct myrio_port *b, struct myrio_pool *pool,
		       const _Atomic uint32_t *sleeping);

/* A quiet spell (the model asleep, as the wake page says), then frames from a to b: they
 * cross only if the send woke the model. */
static void quiet_then_send(struct myrio_port *a, struct myrio_port *b, struct myrio_pool *pool,
			    const _Atomic uint32_t *sleeping)
{
	for (uint8_t round = 1; round <= 3; round++) {
		assert_true(model_asleep(sleeping));
		send_frames(a, pool, 4, round);
		assert_int_equal(receive(b, 4, round), 4);
	}
}

/* Between two bursts the model sleeps where a post wakes it: a few microseconds after its
 * last work, not only once its timers slow down after 50 ms of quiet (a stream's model
 * thread sleeps between the hosts' bursts instead of spinning through them). Each round
 * watches the wake page for 20 ms after a burst arrived, then sends the next; its frames
 * cross because the post woke the model. A loaded machine may keep the model thread off its
 * core for many rounds, so one round seeing it asleep is enough: the old model never slept
 * within 20 ms of a burst. */
static void bursts_with_short_gaps(struct myrio_port *a, struct myrio_port *b,
				   struct myrio_pool *pool, const _Atomic uint32_t *sleeping)
{
	unsigned asleep = 0;
	for (uint8_t round = 1; round <= 10; round++) {
		send_frames(a, pool, 4, round);
		assert_int_equal(receive(b, 4, round), 4);
		for (double end = wall_s() + 0.02; wall_s() < end;)
			if (atomic_load(sleeping)) {
				asleep++;
				break;
			}
	}
	assert_true(asleep >= 1);
}

/* Runs rounds between a and b once b's link is up, then closes both. */
static void run_rounds(struct myrio_port *a, struct myrio_port *b, const _Atomic uint32_t *sleeping,
		       rounds_fn *rounds)
{
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(a, 64, 2048, &pool), 0);
	for (double end = wall_s() + 10; myrio_port_link(b) != MYRIO_LINK_UP && wall_s() < end;)
		nap_ms(1);
	rounds(a, b, pool, sleeping);
	myrio_port_close(a); /* the pool outlives the port (bus.h) */
	myrio_pool_destroy(pool);
	myrio_port_close(b);
}

static struct myrio_sim *in_process_world; /* in_process's, for rounds that need it */

/* The in-process model with conf (idle_ms=60000 and more): rounds from sim0 to sim1. */
static void in_process(const char *conf, rounds_fn *rounds)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	assert_int_equal(myrio_sim_conf_parse(&sc, conf), 0);
	struct myrio_sim *w;
	assert_int_equal(myrio_sim_create(&w, &sc), 0);
	in_process_world = w;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	pc.irq = true; /* interrupts not coalesced (intr_coal_us 0) */
	struct myrio_port *a, *b;
	assert_int_equal(myrio_port_open(&a, "sim:sim0", &pc), 0);
	assert_int_equal(myrio_port_open(&b, "sim:sim1", &pc), 0);
	run_rounds(a, b, sim_world_sleeping(w), rounds);
	myrio_sim_destroy(w);
}

static void in_process_model(void **state)
{
	(void)state;
	in_process("idle_ms=60000", quiet_then_send);
}

static void sleeps_between_bursts(void **state)
{
	(void)state;
	in_process("idle_ms=60000", bursts_with_short_gaps);
}

/* At 1.5 kb/s each 60-byte frame is 448 ms on the wire, longer than the quiet spell (50 ms)
 * after which the model looks at its timers only every idle_ms: a world that slept with
 * frames still queued for the wire would hold them until its next look, a minute later. */
static void slow_link_keeps_the_model_awake(void **state)
{
	(void)state;
	in_process("idle_ms=60000,link=1.5k", quiet_then_send);
}

/* Waits until the model's sleep count stands still for 200 ms: it sleeps its idle_ms;
 * false after 10 s. */
static bool model_in_deep_sleep(struct myrio_sim *w)
{
	for (double end = wall_s() + 10; wall_s() < end;) {
		uint64_t n = sim_world_sleeps(w);
		nap_ms(200);
		if (sim_world_sleeps(w) == n && atomic_load(sim_world_sleeping(w)))
			return true;
	}
	return false;
}

/* A host that handles an update while its later sends are still unreported waits for the
 * next one (a sender whose pool is empty sleeps until the report frees it): its claim must
 * wake the model. At 1.5 kb/s the second frame is read 448 ms after the first, so the first
 * update (raised at once, coalescing 0) reports one send and the NIC, not yet re-armed,
 * keeps the second report back. The host arms only once the model sleeps its idle_ms (a
 * minute): the report comes within the test's 5 s only if the claim woke the model. */
static void claim_after_quiet(struct myrio_port *a, struct myrio_port *b,
			      struct myrio_pool *pool, const _Atomic uint32_t *sleeping)
{
	(void)sleeping;
	int fd = myrio_port_irq_fd(a);
	assert_true(fd >= 0);
	struct myrio_pkt *p[2] = {frame(pool, 9), frame(pool, 9)};
	assert_int_equal(myrio_tx_burst(a, p, 2), 2); /* one burst */
	assert_int_equal(receive(b, 2, 9), 2); /* both read, the second report held back */
	assert_true(model_in_deep_sleep(in_process_world));
	uint64_t v;
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	if (poll(&pf, 1, 0) == 1) /* the first update's interrupt */
		assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	assert_int_equal(myrio_port_irq_arm(a), 0); /* handles the first update: claim1 */
	assert_int_equal(poll(&pf, 1, 5000), 1);
}

static void claim_wakes_the_model(void **state)
{
	(void)state;
	in_process("idle_ms=60000,link=1.5k", claim_after_quiet);
}

/* idle_spin_us: after its last work the model polls that long before it sleeps. With
 * 300 ms, its sleep count stands still for the 100 ms after a burst arrived, and moves once
 * the spin is over. Without the spin the count moves at least every idle_ms (20 ms) in any
 * 100 ms; a round whose look came late on a loaded machine may see the spin over already,
 * so one round of ten standing still is enough. */
static void spins_idle_spin_us(struct myrio_port *a, struct myrio_port *b,
			       struct myrio_pool *pool, const _Atomic uint32_t *sleeping)
{
	(void)sleeping;
	struct myrio_sim *w = in_process_world;
	bool still = false;
	for (uint8_t round = 1; round <= 10 && !still; round++) {
		send_frames(a, pool, 4, round);
		assert_int_equal(receive(b, 4, round), 4);
		uint64_t n = sim_world_sleeps(w);
		nap_ms(100);
		still = sim_world_sleeps(w) == n;
	}
	assert_true(still);
	uint64_t n = sim_world_sleeps(w);
	for (double end = wall_s() + 5; sim_world_sleeps(w) == n && wall_s() < end;)
		nap_ms(10);
	assert_true(sim_world_sleeps(w) > n);
}

static void idle_spin(void **state)
{
	(void)state;
	in_process("idle_spin_us=300000", spins_idle_spin_us);
}

/* The daemon's model: the wake page comes with every attach (here a third NIC's, on a
 * connection of the test's own); a client can read it but neither write nor resize it. */
static void daemon_model(void **state)
{
	(void)state;
	struct simd_daemon_proc d;
	static const char *const args[] = {"--model",	      "idle_ms=60000", "--nic",
					   "nic0,cable=nic1", "--nic",	       "nic1",
					   "--nic",	      "nic2",	       NULL};
	if (simd_daemon_start(&d, "idle", args) < 0)
		skip();
	int s, fds[SIMD_MAX_FDS];
	unsigned nfds = 0;
	struct simd_msg m, rep;
	assert_int_equal(simd_connect(d.sock, &s), 0);
	simd_hdr_init(&m.h, SIMD_ATTACH, 1);
	memset(&m.u.attach_req, 0, sizeof(m.u.attach_req));
	snprintf(m.u.attach_req.nic, sizeof(m.u.attach_req.nic), "nic2");
	assert_int_equal(simd_send(s, &m, sizeof(m.h) + sizeof(m.u.attach_req), NULL, 0), 0);
	assert_true(simd_recv_timeout(s, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds, 5000) > 0);
	assert_int_equal(rep.h.status, 0);
	assert_int_equal(nfds, 4);
	int page = fds[2];
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, page, 0) == MAP_FAILED);
	assert_int_equal(pwrite(page, "x", 1, 0), -1);
	assert_int_equal(ftruncate(page, 0), -1);
	const _Atomic uint32_t *sleeping = mmap(NULL, 4096, PROT_READ, MAP_SHARED, page, 0);
	assert_true(sleeping != MAP_FAILED);
	char dev[160];
	struct myrio_port *a, *b;
	snprintf(dev, sizeof(dev), "simd:nic0@%s", d.sock);
	assert_int_equal(myrio_port_open(&a, dev, NULL), 0);
	snprintf(dev, sizeof(dev), "simd:nic1@%s", d.sock);
	assert_int_equal(myrio_port_open(&b, dev, NULL), 0);
	run_rounds(a, b, sleeping, quiet_then_send);
	munmap((void *)sleeping, 4096);
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	close(s);
	assert_int_equal(simd_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(in_process_model),
	    cmocka_unit_test(sleeps_between_bursts),
	    cmocka_unit_test(slow_link_keeps_the_model_awake),
	    cmocka_unit_test(daemon_model),
	    cmocka_unit_test(claim_wakes_the_model),
	    cmocka_unit_test(idle_spin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
