/* SPDX-License-Identifier: BSD-3-Clause */
/* Two processes, each attached to one NIC of one model daemon (the NICs cabled together),
 * exchange a million frames byte-exact through the real driver: an echo process on nic0
 * returns every frame a client process on nic1 sends, and the client checks each echo
 * against what it sent. Then a client is killed with SIGKILL in the middle of its traffic,
 * and a new client attaches to the same NIC and works, while the echo side never stopped.
 *
 * MYRIO_SIMD_FRAMES sets the number of echoed frames (default 500000: one million frames
 * cross the daemon's cable).
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
#include "simd_stream.h"
#include "test_pattern.h"
#include "util/byteorder.h"
#include "wall_clock.h"

#define ETHERTYPE 0x88b5
#define BURST 32
#define WINDOW 256 /* frames in flight: under the 512-entry rx rings, so nothing is dropped */

/* Shared with the children (MAP_SHARED before fork). */
struct shared {
	atomic_uint_fast64_t echoed;	  /* echo side: frames returned */
	atomic_uint_fast64_t bad;	  /* echo side: malformed frames seen */
	atomic_uint_fast64_t client_done; /* client: verified echoes */
	atomic_int stop;
	atomic_int echo_ready;
	char sock[108];
};

static int open_port(const char *sock, const char *nic, struct myrio_port **port)
{
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:%s@%s", nic, sock);
	return myrio_port_open(port, dev, NULL);
}

/* Frame k of session s: simd_frame_len(k) bytes, its payload the byte pattern at an offset
 * of its own (s, k). */
static uint64_t payload_offset(uint32_t session, uint64_t k)
{
	return (uint64_t)session << 48 | k << 16;
}

static void fill(uint8_t *f, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		 uint32_t session, uint64_t k)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put_be16(f + 12, ETHERTYPE);
	put_be32(f + 14, session);
	put_be32(f + 18, (uint32_t)(k >> 32));
	put_be32(f + 22, (uint32_t)k);
	test_pattern_fill(f + 26, len - 26, payload_offset(session, k));
}

static bool pattern_ok(const uint8_t *f, uint32_t len)
{
	if (len < 26 || get_be16(f + 12) != ETHERTYPE)
		return false;
	uint32_t session = get_be32(f + 14);
	uint64_t k = (uint64_t)get_be32(f + 18) << 32 | get_be32(f + 22);
	return len == simd_frame_len(k) &&
	       test_pattern_check(f + 26, len - 26, payload_offset(session, k), NULL) == 0;
}

/* nic0: return every frame to its sender, MACs swapped, same buffer (zero copy). */
static int echo_main(struct shared *sh)
{
	struct myrio_port *port;
	struct myrio_port_info info;
	if (open_port(sh->sock, "nic0", &port) < 0)
		return 1;
	myrio_port_info(port, &info);
	atomic_store(&sh->echo_ready, 1);
	struct myrio_pkt *pkts[BURST];
	while (!atomic_load(&sh->stop)) {
		uint16_t n = myrio_rx_burst(port, pkts, BURST), out = 0;
		if (n == 0)
			sched_yield(); /* three pollers share two cores on small machines */
		for (uint16_t i = 0; i < n; i++) {
			uint8_t *f = myrio_pkt_data(pkts[i]);
			if (!pattern_ok(f, pkts[i]->len)) {
				atomic_fetch_add(&sh->bad, 1);
				myrio_pkt_free(pkts[i]);
				continue;
			}
			memcpy(f, f + 6, 6);
			memcpy(f + 6, info.mac, 6);
			pkts[out++] = pkts[i];
		}
		uint16_t sent = 0;
		while (sent < out && !atomic_load(&sh->stop))
			sent += myrio_tx_burst(port, pkts + sent, (uint16_t)(out - sent));
		for (uint16_t i = sent; i < out; i++)
			myrio_pkt_free(pkts[i]);
		atomic_fetch_add(&sh->echoed, sent);
	}
	myrio_port_close(port);
	return 0;
}

/* nic1: sends frames of its own session, at most WINDOW ahead of the echoes, and checks
 * that every echo comes back in order and byte-exact. Stops after count (0: never). */
static int client_main(struct shared *sh, uint64_t count)
{
	struct myrio_port *port;
	struct myrio_port_info info;
	struct myrio_pool *pool;
	int rc = -EBUSY;
	/* The NIC may still be held by a killed predecessor for a moment. */
	for (int i = 0; i < 500 && rc == -EBUSY; i++) {
		rc = open_port(sh->sock, "nic1", &port);
		if (rc == -EBUSY)
			usleep(10000);
	}
	if (rc < 0)
		return 10;
	myrio_port_info(port, &info);
	if (myrio_port_pool_create(port, 2048, 2048, &pool) < 0)
		return 11;
	const uint8_t echo_mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, 0x01};
	uint32_t session = (uint32_t)getpid();
	uint64_t sent = 0, got = 0;
	uint8_t want[1514];
	struct simd_progress pr = {0};
	while (count == 0 || got < count) {
		if (simd_stalled(&pr, got)) {
			fprintf(stderr, "no echo for 5 s: %llu of %llu sent came back\n",
				(unsigned long long)got, (unsigned long long)sent);
			return 14;
		}
		struct myrio_pkt *pkts[BURST];
		unsigned n = 0;
		while (n < BURST && sent + n - got < WINDOW && (count == 0 || sent + n < count)) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			p->len = simd_frame_len(sent + n);
			fill(myrio_pkt_data(p), p->len, echo_mac, info.mac, session, sent + n);
			pkts[n++] = p;
		}
		uint16_t took = myrio_tx_burst(port, pkts, (uint16_t)n);
		for (unsigned i = took; i < n; i++)
			myrio_pkt_free(pkts[i]);
		sent += took;
		uint16_t r = myrio_rx_burst(port, pkts, BURST);
		if (r == 0)
			sched_yield();
		for (uint16_t i = 0; i < r; i++) {
			const uint8_t *f = myrio_pkt_data(pkts[i]);
			uint32_t len = pkts[i]->len;
			if (len >= 18 && get_be32(f + 14) != session) {
				myrio_pkt_free(pkts[i]); /* an echo meant for a predecessor */
				continue;
			}
			fill(want, simd_frame_len(got), info.mac, echo_mac, session, got);
			if (len != simd_frame_len(got) || memcmp(f, want, len) != 0) {
				fprintf(stderr, "echo %llu: %u bytes, not as sent (%u bytes)\n",
					(unsigned long long)got, len, simd_frame_len(got));
				return 12;
			}
			myrio_pkt_free(pkts[i]);
			got++;
			atomic_store(&sh->client_done, got);
		}
	}
	myrio_port_close(port);
	return count && got == count ? 0 : 13;
}

static pid_t spawn(int (*fn)(struct shared *, uint64_t), struct shared *sh, uint64_t count)
{
	pid_t pid = fork();
	if (pid == 0) {
		simd_die_with_parent();
		_exit(fn(sh, count));
	}
	return pid;
}

static int echo_entry(struct shared *sh, uint64_t count)
{
	(void)count;
	return echo_main(sh);
}

static int exit_code(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void million_frames_and_a_killed_client(void **state)
{
	(void)state;
	struct simd_daemon_proc d;
	static const char *const args[] = {"--nic",  "nic0,cable=nic1", "--nic", "nic1",
					   "--link", "unlimited",	NULL};
	assert_int_equal(simd_daemon_start(&d, "2proc", args), 0);
	struct shared *sh =
	    mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	snprintf(sh->sock, sizeof(sh->sock), "%s", d.sock);
	const char *env = getenv("MYRIO_SIMD_FRAMES");
	uint64_t frames = env ? strtoull(env, NULL, 0) : 500000;

	pid_t echo = spawn(echo_entry, sh, 0);
	for (int i = 0; i < 500 && !atomic_load(&sh->echo_ready); i++)
		usleep(10000);
	assert_true(atomic_load(&sh->echo_ready));

	uint64_t t0 = wall_ns();
	pid_t client = spawn(client_main, sh, frames);
	assert_int_equal(exit_code(client), 0);
	double secs = (double)(wall_ns() - t0) / 1e9;
	printf("%llu frames echoed (%llu frames across the cable) in %.2f s: %.0f frames/s\n",
	       (unsigned long long)frames, (unsigned long long)frames * 2, secs,
	       (double)frames * 2 / secs);

	/* A client killed in the middle of its traffic... */
	atomic_store(&sh->client_done, 0);
	pid_t victim = spawn(client_main, sh, 0);
	for (int i = 0; i < 1000 && atomic_load(&sh->client_done) < 5000; i++)
		usleep(5000);
	assert_true(atomic_load(&sh->client_done) >= 5000);
	kill(victim, SIGKILL);
	assert_int_equal(exit_code(victim), 128 + SIGKILL);
	/* ...and a new one attaches to the same NIC and works, against the same echo. */
	client = spawn(client_main, sh, 20000);
	assert_int_equal(exit_code(client), 0);

	atomic_store(&sh->stop, 1);
	assert_int_equal(exit_code(echo), 0);
	assert_int_equal(atomic_load(&sh->bad), 0);
	assert_true(simd_daemon_alive(&d));
	assert_int_equal(simd_daemon_stop(&d), 0);
	munmap(sh, sizeof(*sh));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(million_frames_and_a_killed_client),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
