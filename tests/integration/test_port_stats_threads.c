/* SPDX-License-Identifier: BSD-3-Clause */
/* The port's counters read while its queues' threads write them. Two ports of 2 and of 4
 * queues on the model daemon's NICs (the NICs run in another process: in this one there are
 * only the queues' threads and a reader), a thread per queue sending frames both ways on its
 * queue of both ports and receiving them, and a reader thread calling myrio_port_stats,
 * myrio_port_queue_stats and myrio_port_xstats on both ports in a loop all along. No counter
 * the reader sees ever goes back; at the end each queue's counters equal what its thread
 * counted, and the port's are their sums. Built with ThreadSanitizer (scripts/build.sh
 * build-tsan tsan test_port_stats_threads, run with MYRIO_TEST_SIMD naming a release
 * myrio-simd), a counter read while its thread writes it without atomics is reported, and
 * the test fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipv4_frame.h"
#include "myrio/myrio.h"
#include "queue_threads.h"
#include "queue_xstat.h"
#include "simd_daemon.h"
#include "wall_clock.h"

#define MAX_Q 4
#define FRAMES 4000 /* per queue and direction */
#define WINDOW 256  /* frames in flight per queue and direction */
#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define TAG_OFF 54 /* after the TCP ports: queue, direction */

/* What one queue's thread did on one port: its sends and its receives. */
struct counted {
	uint64_t tx_packets, tx_bytes, tx_refused, rx_packets, rx_bytes;
};

struct side {
	struct myrio_port *from, *to;
	struct myrio_pool *pool; /* `from`'s buffers, this thread's */
	uint8_t dst[6], src[6];
	uint32_t sip, dip;
	uint16_t sport, dport; /* a flow RSS puts on the thread's queue of `to` */
	uint64_t sent, received, wrong;
};

struct queue_thread {
	uint16_t q;
	struct side side[2];  /* 0: a -> b, 1: b -> a */
	struct counted on[2]; /* 0: port a, 1: port b */
};

struct reader {
	struct myrio_port *port[2];
	uint16_t nq;
	_Atomic bool stop;
	uint64_t rounds;
	char why[200]; /* the first counter seen going back */
};

static void send_some(struct queue_thread *t, unsigned d)
{
	struct side *s = &t->side[d];
	struct counted *c = &t->on[d];
	struct myrio_pkt *pk[16];
	unsigned k = 0;
	while (k < 16 && s->sent + k < FRAMES && s->sent + k - s->received < WINDOW &&
	       (pk[k] = myrio_pkt_alloc(s->pool))) {
		uint32_t len = 60 + (uint32_t)((s->sent + k) * 7 % 900);
		uint8_t *f = myrio_pkt_data(pk[k]);
		memset(f, 0, len);
		uint8_t *l4 =
		    ipv4_frame(f, s->dst, s->src, 6, (uint16_t)(len - 14), s->sip, s->dip, 0);
		put_be16(l4, s->sport);
		put_be16(l4 + 2, s->dport);
		f[TAG_OFF] = (uint8_t)t->q;
		f[TAG_OFF + 1] = (uint8_t)d;
		pk[k]->len = len;
		k++;
	}
	uint16_t took = myrio_tx_burst_queue(s->from, t->q, pk, (uint16_t)k);
	for (unsigned i = 0; i < took; i++)
		c->tx_bytes += pk[i]->len;
	c->tx_packets += took;
	c->tx_refused += k - took;
	myrio_pkt_free_bulk(pk + took, (uint16_t)(k - took));
	s->sent += took;
}

static unsigned receive_some(struct queue_thread *t, unsigned d)
{
	struct side *s = &t->side[d];
	struct counted *c = &t->on[!d]; /* received by the other port */
	struct myrio_pkt *pk[32];
	uint16_t n = myrio_rx_burst_queue(s->to, t->q, pk, 32);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *f = myrio_pkt_data(pk[i]);
		if (pk[i]->len <= TAG_OFF + 1 || f[TAG_OFF] != t->q || f[TAG_OFF + 1] != d)
			s->wrong++;
		c->rx_packets++;
		c->rx_bytes += pk[i]->len;
		s->received++;
	}
	myrio_pkt_free_bulk(pk, n);
	return n;
}

static void *queue_run(void *arg)
{
	struct queue_thread *t = arg;
	uint64_t until = wall_ns() + 60000000000ull;
	while (wall_ns() < until) {
		bool done = true;
		for (unsigned d = 0; d < 2; d++)
			done = done && t->side[d].received >= FRAMES;
		if (done)
			break;
		send_some(t, 0);
		send_some(t, 1);
		if (receive_some(t, 0) + receive_some(t, 1) == 0)
			sched_yield();
	}
	for (unsigned d = 0; d < 2; d++) /* let the last sends complete */
		myrio_tx_burst_queue(t->side[d].from, t->q, NULL, 0);
	return NULL;
}

static void went_back(struct reader *r, const char *what, unsigned p, uint64_t was, uint64_t now)
{
	if (!r->why[0])
		snprintf(r->why, sizeof(r->why), "port %c: %.48s went from %llu back to %llu",
			 p ? 'b' : 'a', what, (unsigned long long)was, (unsigned long long)now);
}

/* a reading of one port: its stats, each queue's, every extended stat */
struct reading {
	struct myrio_port_stats ps;
	struct myrio_queue_stats qs[MAX_Q];
	uint64_t xs[512];
	int nx;
};

#define MONOTONIC(name, prev, cur)                                                                 \
	do {                                                                                       \
		if ((cur) < (prev))                                                                \
			went_back(r, name, p, prev, cur);                                          \
	} while (0)

static void compare(struct reader *r, unsigned p, const struct reading *a, const struct reading *b,
		    const struct myrio_xstat_name *names)
{
	MONOTONIC("rx_packets", a->ps.rx_packets, b->ps.rx_packets);
	MONOTONIC("rx_bytes", a->ps.rx_bytes, b->ps.rx_bytes);
	MONOTONIC("tx_packets", a->ps.tx_packets, b->ps.tx_packets);
	MONOTONIC("tx_bytes", a->ps.tx_bytes, b->ps.tx_bytes);
	MONOTONIC("tx_ring_full", a->ps.tx_ring_full, b->ps.tx_ring_full);
	for (uint16_t q = 0; q < r->nq; q++) {
		MONOTONIC("a queue's rx_packets", a->qs[q].rx_packets, b->qs[q].rx_packets);
		MONOTONIC("a queue's rx_bytes", a->qs[q].rx_bytes, b->qs[q].rx_bytes);
		MONOTONIC("a queue's tx_packets", a->qs[q].tx_packets, b->qs[q].tx_packets);
		MONOTONIC("a queue's tx_bytes", a->qs[q].tx_bytes, b->qs[q].tx_bytes);
		MONOTONIC("a queue's irq_updates", a->qs[q].irq_updates, b->qs[q].irq_updates);
	}
	for (int i = 0; i < a->nx && i < b->nx; i++)
		if (strncmp(names[i].name, "rx_q", 4) == 0 ||
		    strncmp(names[i].name, "tx_q", 4) == 0 ||
		    strncmp(names[i].name, "irq_q", 5) == 0)
			MONOTONIC(names[i].name, a->xs[i], b->xs[i]);
}

/* On the reader's thread: a failure is told in r->why (cmocka asserts on the main one). */
static void read_port(struct reader *r, unsigned p, struct reading *out)
{
	int rc = myrio_port_stats(r->port[p], &out->ps);
	for (uint16_t q = 0; q < r->nq && rc == 0; q++)
		rc = myrio_port_queue_stats(r->port[p], q, &out->qs[q]);
	out->nx = myrio_port_xstats(r->port[p], out->xs, 512);
	if ((rc < 0 || out->nx <= 0) && !r->why[0])
		snprintf(r->why, sizeof(r->why), "port %c: reading its stats failed (%d, %d)",
			 p ? 'b' : 'a', rc, out->nx);
}

static void *reader_run(void *arg)
{
	struct reader *r = arg;
	static struct myrio_xstat_name names[2][512];
	static struct reading last[2], now[2];
	for (unsigned p = 0; p < 2; p++) {
		int n = myrio_port_xstats_names(r->port[p], names[p], 512);
		if (n <= 0 || n > 512) {
			snprintf(r->why, sizeof(r->why), "%d extended stats", n);
			return NULL;
		}
		read_port(r, p, &last[p]);
	}
	while (!atomic_load(&r->stop)) {
		for (unsigned p = 0; p < 2; p++) {
			read_port(r, p, &now[p]);
			compare(r, p, &last[p], &now[p], names[p]);
			last[p] = now[p];
		}
		r->rounds++;
		nanosleep(&(struct timespec){.tv_nsec = 100000},
			  NULL); /* the queues need the CPU */
	}
	return NULL;
}

/* Each queue's counters are what its thread counted; the port's are their sums. */
static void check_port(struct myrio_port *port, unsigned p, const struct queue_thread *t,
		       uint16_t nq)
{
	struct counted sum = {0};
	for (uint16_t q = 0; q < nq; q++) {
		const struct counted *c = &t[q].on[p];
		struct myrio_queue_stats qs;
		assert_int_equal(myrio_port_queue_stats(port, q, &qs), 0);
		printf("# port %c queue %u: rx %llu packets %llu bytes, tx %llu packets %llu bytes "
		       "%llu refused\n",
		       p ? 'b' : 'a', q, (unsigned long long)qs.rx_packets,
		       (unsigned long long)qs.rx_bytes, (unsigned long long)qs.tx_packets,
		       (unsigned long long)qs.tx_bytes, (unsigned long long)qs.tx_ring_full);
		assert_int_equal(qs.rx_packets, c->rx_packets);
		assert_int_equal(qs.rx_bytes, c->rx_bytes);
		assert_int_equal(qs.tx_packets, c->tx_packets);
		assert_int_equal(qs.tx_bytes, c->tx_bytes);
		assert_int_equal(qs.tx_ring_full, c->tx_refused);
		assert_int_equal(queue_xstat(port, "rx_q%u_packets", q), c->rx_packets);
		assert_int_equal(queue_xstat(port, "tx_q%u_bytes", q), c->tx_bytes);
		sum.rx_packets += c->rx_packets;
		sum.rx_bytes += c->rx_bytes;
		sum.tx_packets += c->tx_packets;
		sum.tx_bytes += c->tx_bytes;
		sum.tx_refused += c->tx_refused;
	}
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(port, &ps), 0);
	assert_int_equal(ps.rx_packets, sum.rx_packets);
	assert_int_equal(ps.rx_bytes, sum.rx_bytes);
	assert_int_equal(ps.tx_packets, sum.tx_packets);
	assert_int_equal(ps.tx_bytes, sum.tx_bytes);
	assert_int_equal(ps.tx_ring_full, sum.tx_refused);
	assert_int_equal(ps.rx_packets, (uint64_t)FRAMES * nq); /* nothing lost */
}

static void run(uint16_t nq)
{
	struct simd_daemon_proc d;
	const char *const args[] = {"--model", "eeprom_fw=rss", NULL};
	char tag[16];
	snprintf(tag, sizeof(tag), "stthr%u", nq);
	assert_int_equal(simd_daemon_start(&d, tag, args), 0);
	char dev[2][PATH_MAX + 16];
	snprintf(dev[0], sizeof(dev[0]), "simd:nic0@%s", d.sock);
	snprintf(dev[1], sizeof(dev[1]), "simd:nic1@%s", d.sock);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	struct myrio_port *port[2];
	uint8_t mac[2][6];
	for (unsigned p = 0; p < 2; p++) {
		assert_int_equal(myrio_port_open_queues(&port[p], dev[p], &pc, nq), 0);
		struct myrio_port_info info;
		myrio_port_info(port[p], &info);
		memcpy(mac[p], info.mac, 6);
	}
	static struct queue_thread t[MAX_Q];
	memset(t, 0, sizeof(t));
	for (uint16_t q = 0; q < nq; q++) {
		t[q].q = q;
		for (unsigned dir = 0; dir < 2; dir++) {
			struct side *s = &t[q].side[dir];
			s->from = port[dir];
			s->to = port[!dir];
			memcpy(s->src, mac[dir], 6);
			memcpy(s->dst, mac[!dir], 6);
			s->sip = dir ? IP_B : IP_A;
			s->dip = dir ? IP_A : IP_B;
			s->dport = (uint16_t)(5001 + dir);
			s->sport = qt_flow(s->to, s->sip, s->dip, q, s->dport, 20000);
			assert_true(s->sport != 0);
			assert_int_equal(myrio_port_pool_create(s->from, 512, 2048, &s->pool), 0);
		}
	}
	struct reader rd = {.port = {port[0], port[1]}, .nq = nq};
	pthread_t rth, th[MAX_Q];
	assert_int_equal(pthread_create(&rth, NULL, reader_run, &rd), 0);
	for (uint16_t q = 0; q < nq; q++)
		assert_int_equal(pthread_create(&th[q], NULL, queue_run, &t[q]), 0);
	for (uint16_t q = 0; q < nq; q++)
		pthread_join(th[q], NULL);
	atomic_store(&rd.stop, true);
	pthread_join(rth, NULL);
	printf("# %u queues: the reader read both ports %llu times\n", nq,
	       (unsigned long long)rd.rounds);
	if (rd.why[0])
		fail_msg("%s", rd.why);
	assert_true(rd.rounds > 10);
	for (uint16_t q = 0; q < nq; q++)
		for (unsigned dir = 0; dir < 2; dir++) {
			assert_int_equal(t[q].side[dir].wrong, 0);
			assert_int_equal(t[q].side[dir].received, FRAMES);
		}
	for (unsigned p = 0; p < 2; p++)
		check_port(port[p], p, t, nq);

	for (uint16_t q = 0; q < nq; q++)
		for (unsigned dir = 0; dir < 2; dir++) {
			myrio_port_tx_drain(port[dir], t[q].side[dir].pool, 1000);
			myrio_pool_destroy(t[q].side[dir].pool);
		}
	myrio_port_close(port[1]);
	myrio_port_close(port[0]);
	assert_int_equal(simd_daemon_stop(&d), 0);
}

static void two_queues_read_while_moving(void **state)
{
	(void)state;
	run(2);
}

static void four_queues_read_while_moving(void **state)
{
	(void)state;
	run(4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(two_queues_read_while_moving),
	    cmocka_unit_test(four_queues_read_while_moving),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
