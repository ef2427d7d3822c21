/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame rate between two processes through the model daemon: a sender on nic0 blasts
 * 64-byte and 1518-byte frames (on the wire, FCS included) at a receiver on nic1, which
 * checks every frame byte for byte and counts. Prints frames/s and Gb/s for an unlimited
 * cable and for the default 10 Gb/s one. MYRIO_SIMD_RATE_MS sets each run's length
 * (default 1000 ms).
 */
#include <errno.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */
#include <limits.h>

#include "myrio/port.h"
#include "simd_daemon.h"
#include "util/byteorder.h"
#include "wall_clock.h"

#define ETHERTYPE 0x88b5
#define BURST 32

struct shared {
	atomic_int rx_ready, go, stop;
	atomic_uint_fast64_t sent, received, bad;
	char sock[108];
	uint32_t len;	/* frame length without FCS */
	uint64_t limit; /* sender stops after this many frames; 0 = until stop */
};

static int open_port(const char *sock, const char *nic, struct myrio_port **port)
{
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:%s@%s", nic, sock);
	return myrio_port_open(port, dev, NULL);
}

static uint8_t byte_at(uint32_t i)
{
	return (uint8_t)(i * 29 + 7);
}

static int receiver(struct shared *sh)
{
	struct myrio_port *port;
	if (open_port(sh->sock, "nic1", &port) < 0)
		return 1;
	atomic_store(&sh->rx_ready, 1);
	struct myrio_pkt *pkts[BURST];
	uint64_t got = 0, bad = 0;
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		uint16_t n = myrio_rx_burst(port, pkts, BURST);
		if (n == 0)
			sched_yield(); /* sender, receiver and model thread may share two cores */
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *f = myrio_pkt_data(pkts[i]);
			uint32_t len = pkts[i]->len;
			bool ok = len == sh->len && get_be16(f + 12) == ETHERTYPE;
			/* Check the tail too: a short or shifted DMA would break it. */
			ok = ok && f[14] == byte_at(14) && f[len - 1] == byte_at(len - 1) &&
			     f[len / 2] == byte_at(len / 2);
			bad += !ok;
			got++;
			myrio_pkt_free(pkts[i]);
		}
		if (n)
			atomic_store_explicit(&sh->received, got, memory_order_relaxed);
	}
	atomic_store(&sh->received, got);
	atomic_store(&sh->bad, bad);
	myrio_port_close(port);
	return 0;
}

static int sender(struct shared *sh)
{
	struct myrio_port *port;
	struct myrio_pool *pool;
	if (open_port(sh->sock, "nic0", &port) < 0)
		return 1;
	if (myrio_port_pool_create(port, 4096, 2048, &pool) < 0)
		return 2;
	while (!atomic_load(&sh->go))
		usleep(1000);
	uint64_t sent = 0;
	struct myrio_pkt *pkts[BURST];
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		if (sh->limit && sent >= sh->limit) {
			myrio_tx_burst(port, pkts, 0); /* reap completions while waiting */
			usleep(1000);
			continue;
		}
		unsigned want = BURST;
		if (sh->limit && sh->limit - sent < want)
			want = (unsigned)(sh->limit - sent);
		if (myrio_pkt_alloc_bulk(pool, pkts, want) != want) {
			myrio_tx_burst(port, pkts, 0); /* let completions return buffers */
			sched_yield();
			continue;
		}
		for (unsigned i = 0; i < want; i++) {
			uint8_t *f = myrio_pkt_data(pkts[i]);
			memset(f, 0xff, 12);
			put_be16(f + 12, ETHERTYPE);
			for (uint32_t j = 14; j < sh->len; j++)
				f[j] = byte_at(j);
			pkts[i]->len = sh->len;
		}
		uint16_t took = myrio_tx_burst(port, pkts, (uint16_t)want);
		for (unsigned i = took; i < want; i++)
			myrio_pkt_free(pkts[i]);
		sent += took;
		if (took < want)
			sched_yield(); /* ring full: let the model drain it */
	}
	atomic_store(&sh->sent, sent);
	myrio_port_close(port);
	return 0;
}

static int exit_code(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs a sender and a receiver on a daemon started with args; returns the shared state
 * (the caller unmaps it) once both have stopped. */
static struct shared *run_pair(const char *const *args, uint32_t wire_len, uint64_t limit,
			       unsigned ms, uint64_t *rate_frames, double *rate_secs)
{
	struct simd_daemon_proc d;
	assert_int_equal(simd_daemon_start(&d, "rate", args), 0);
	struct shared *sh =
	    mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	snprintf(sh->sock, sizeof(sh->sock), "%s", d.sock);
	sh->len = wire_len - 4;
	sh->limit = limit;
	pid_t rx = fork();
	if (rx == 0) {
		simd_die_with_parent();
		_exit(receiver(sh));
	}
	pid_t tx = fork();
	if (tx == 0) {
		simd_die_with_parent();
		_exit(sender(sh));
	}
	for (int i = 0; i < 500 && !atomic_load(&sh->rx_ready); i++)
		usleep(10000);
	assert_true(atomic_load(&sh->rx_ready));
	atomic_store(&sh->go, 1);
	usleep(200000); /* warm up */
	uint64_t r0 = atomic_load(&sh->received), t0 = wall_ns();
	usleep(ms * 1000);
	uint64_t r1 = atomic_load(&sh->received), t1 = wall_ns();
	atomic_store(&sh->stop, 1);
	assert_int_equal(exit_code(tx), 0);
	assert_int_equal(exit_code(rx), 0);
	assert_int_equal(simd_daemon_stop(&d), 0);
	*rate_frames = r1 - r0;
	*rate_secs = (double)(t1 - t0) / 1e9;
	return sh;
}

/* The daemon wires its command line's faults into the cable: half the frames lost. */
static void configured_loss_applies(void **state)
{
	(void)state;
	static const char *const args[] = {
	    "--nic", "nic0,cable=nic1,loss=0.5", "--nic", "nic1", "--seed", "7", NULL};
	uint64_t frames;
	double secs;
	struct shared *sh = run_pair(args, 128, 4000, 500, &frames, &secs);
	uint64_t sent = atomic_load(&sh->sent), got = atomic_load(&sh->received);
	printf("loss=0.5: %llu of %llu frames arrived\n", (unsigned long long)got,
	       (unsigned long long)sent);
	assert_int_equal(sent, 4000);
	assert_int_equal(atomic_load(&sh->bad), 0);
	assert_in_range(got, 1500, 2500);
	munmap(sh, sizeof(*sh));
}

static void measure(const char *link, uint32_t wire_len)
{
	const char *args[] = {"--nic", "nic0,cable=nic1", "--nic", "nic1", "--link", link, NULL};
	const char *env = getenv("MYRIO_SIMD_RATE_MS");
	uint64_t frames;
	double secs;
	struct shared *sh =
	    run_pair(args, wire_len, 0, env ? (unsigned)atoi(env) : 1000, &frames, &secs);
	double fps = (double)frames / secs;
	printf("link %-9s %4u-byte frames: %9.0f frames/s, %6.3f Gb/s of frames "
	       "(sent %llu, received %llu, bad %llu)\n",
	       link, wire_len, fps, fps * wire_len * 8 / 1e9,
	       (unsigned long long)atomic_load(&sh->sent),
	       (unsigned long long)atomic_load(&sh->received),
	       (unsigned long long)atomic_load(&sh->bad));
	assert_true(frames > 0);
	assert_int_equal(atomic_load(&sh->bad), 0);
	assert_true(atomic_load(&sh->received) <= atomic_load(&sh->sent));
	munmap(sh, sizeof(*sh));
}

static void rate_64_unlimited(void **state)
{
	(void)state;
	measure("unlimited", 64);
}

static void rate_1518_unlimited(void **state)
{
	(void)state;
	measure("unlimited", 1518);
}

static void rate_64_10g(void **state)
{
	(void)state;
	measure("10g", 64);
}

static void rate_1518_10g(void **state)
{
	(void)state;
	measure("10g", 1518);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rate_64_unlimited),
	    cmocka_unit_test(rate_1518_unlimited),
	    cmocka_unit_test(rate_64_10g),
	    cmocka_unit_test(rate_1518_10g),
	    cmocka_unit_test(configured_loss_applies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
