/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-queue counters on a port of 2 and of 4 queues (the model's RSS firmware, threaded):
 * port a sends flows that RSS spreads over b's queues; a thread per queue of b receives
 * them and sends frames of its own back, counting what it got and what tx_burst took or
 * refused. Each queue's counters (myrio_port_queue_stats, and the same figures among the
 * extended stats that are published) match what its thread counted, and they sum to the
 * port's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrio/myrio.h"
#include "queue_xstat.h"

#define MAX_Q 4
#define FRAMES 3000
#define BACK 400 /* frames each queue's thread sends */

static const uint32_t src_ip = 0x0a000001, dst_ip = 0x0a000002; /* host order */

struct queue_thread {
	struct myrio_port *b;
	struct myrio_pool *pool; /* this queue's transmit buffers */
	uint16_t q;
	uint8_t mac_a[6];
	unsigned want, ring;
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, tx_refused;
};

/* A UDP frame from 10.0.0.1 + host (RSS hashes UDP by its addresses) to dst_ip. */
static void udp_frame(uint8_t *f, const uint8_t dst_mac[6], uint16_t host, uint32_t len)
{
	memset(f, 0, len);
	memcpy(f, dst_mac, 6);
	f[6] = 0x02;
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = 17;
	uint32_t s = htonl(src_ip + host), d = htonl(dst_ip);
	memcpy(f + 26, &s, 4);
	memcpy(f + 30, &d, 4);
	uint16_t sp = htons(7), dp = htons(9);
	memcpy(f + 34, &sp, 2);
	memcpy(f + 36, &dp, 2);
}

static void *queue_run(void *arg)
{
	struct queue_thread *t = arg;
	/* First more than the ring holds, at once: tx_burst refuses the rest. */
	unsigned k = t->ring + 32;
	struct myrio_pkt **out = calloc(k, sizeof(*out));
	if (!out || !myrio_pkt_alloc_bulk(t->pool, out, k)) {
		free(out);
		return NULL; /* the thread's counts then fail the test */
	}
	for (unsigned i = 0; i < k; i++) {
		udp_frame(myrio_pkt_data(out[i]), t->mac_a, 1, 60);
		out[i]->len = 60;
	}
	uint16_t took = myrio_tx_burst_queue(t->b, t->q, out, (uint16_t)k);
	t->tx_packets = took;
	t->tx_bytes = 60ull * took;
	t->tx_refused = k - took;
	myrio_pkt_free_bulk(out + took, (uint16_t)(k - took));
	unsigned sent = 0;
	for (unsigned long spins = 0; (t->rx_packets < t->want || sent < BACK) && spins < 50000000;
	     spins++) {
		struct myrio_pkt *pk[32];
		uint16_t n = myrio_rx_burst_queue(t->b, t->q, pk, 32);
		for (uint16_t i = 0; i < n; i++) {
			t->rx_packets++;
			t->rx_bytes += pk[i]->len;
			myrio_pkt_free(pk[i]);
		}
		if (sent < BACK) { /* bursts of 8 */
			k = myrio_pkt_alloc_bulk(t->pool, out, 8) ? 8 : 0;
			for (unsigned i = 0; i < k; i++) {
				uint32_t len = 60 + 4 * t->q + i;
				udp_frame(myrio_pkt_data(out[i]), t->mac_a, (uint16_t)i, len);
				out[i]->len = len;
			}
			took = myrio_tx_burst_queue(t->b, t->q, out, (uint16_t)k);
			for (unsigned i = 0; i < took; i++)
				t->tx_bytes += out[i]->len;
			t->tx_packets += took;
			t->tx_refused += k - took;
			myrio_pkt_free_bulk(out + took, (uint16_t)(k - took));
			sent += k;
		} else {
			myrio_tx_burst_queue(t->b, t->q, NULL, 0); /* reap */
		}
	}
	free(out);
	return NULL;
}

static void run(uint16_t nq)
{
	struct myrio_sim *w;
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	assert_int_equal(myrio_sim_conf_parse(&sc, "eeprom_fw=rss,link=unlimited"), 0);
	assert_int_equal(myrio_sim_create(&w, &sc), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	struct myrio_port *a, *b;
	assert_int_equal(myrio_port_open(&a, "sim:sim0", &pc), 0);
	assert_int_equal(myrio_port_open_queues(&b, "sim:sim1", &pc, nq), 0);
	struct myrio_port_info ia, ib;
	myrio_port_info(a, &ia);
	myrio_port_info(b, &ib);
	struct myrio_pool *apool;
	assert_int_equal(myrio_port_pool_create(a, 1024, 2048, &apool), 0);
	struct queue_thread t[MAX_Q];
	memset(t, 0, sizeof(t));
	for (uint16_t q = 0; q < nq; q++) {
		t[q].b = b;
		t[q].q = q;
		memcpy(t[q].mac_a, ia.mac, 6);
		t[q].ring = ib.tx_ring_entries;
		assert_int_equal(
		    myrio_port_pool_create(b, ib.tx_ring_entries + 64, 2048, &t[q].pool), 0);
	}
	for (unsigned i = 0; i < FRAMES; i++) {
		int q = myrio_port_rss_flow_queue(b, 17, htonl(src_ip + i % 300), htonl(dst_ip),
						  htons(7), htons(9), NULL);
		assert_true(q >= 0 && q < nq);
		t[q].want++;
	}
	pthread_t th[MAX_Q];
	for (uint16_t q = 0; q < nq; q++)
		assert_int_equal(pthread_create(&th[q], NULL, queue_run, &t[q]), 0);
	for (unsigned i = 0; i < FRAMES;) {
		struct myrio_pkt *p = myrio_pkt_alloc(apool);
		if (!p) {
			myrio_tx_burst(a, NULL, 0);
			continue;
		}
		udp_frame(myrio_pkt_data(p), ib.mac, (uint16_t)(i % 300), 64 + i % 64);
		p->len = 64 + i % 64;
		while (myrio_tx_burst(a, &p, 1) != 1)
			;
		i++;
		struct myrio_pkt *in[32]; /* what b's queues send back */
		myrio_pkt_free_bulk(in, myrio_rx_burst(a, in, 32));
	}
	for (uint16_t q = 0; q < nq; q++)
		pthread_join(th[q], NULL);

	struct myrio_port_stats port;
	assert_int_equal(myrio_port_stats(b, &port), 0);
	struct myrio_queue_stats sum = {0};
	for (uint16_t q = 0; q < nq; q++) {
		struct myrio_queue_stats qs;
		assert_int_equal(myrio_port_queue_stats(b, q, &qs), 0);
		printf(
		    "queue %u: rx %llu/%u packets, %llu bytes; tx %llu packets, %llu bytes, %llu "
		    "ring full; %llu status updates\n",
		    q, (unsigned long long)qs.rx_packets, t[q].want,
		    (unsigned long long)qs.rx_bytes, (unsigned long long)qs.tx_packets,
		    (unsigned long long)qs.tx_bytes, (unsigned long long)qs.tx_ring_full,
		    (unsigned long long)qs.irq_updates);
		assert_int_equal(t[q].rx_packets, t[q].want); /* nothing lost on the way */
		assert_int_equal(qs.rx_packets, t[q].rx_packets);
		assert_int_equal(qs.rx_bytes, t[q].rx_bytes);
		assert_int_equal(qs.tx_packets, t[q].tx_packets);
		assert_int_equal(qs.tx_bytes, t[q].tx_bytes);
		assert_int_equal(qs.tx_ring_full, t[q].tx_refused);
		assert_true(qs.tx_ring_full >= 32);
		assert_true(qs.irq_updates > 0);
		assert_int_equal(queue_xstat(b, "rx_q%u_packets", q), qs.rx_packets);
		assert_int_equal(queue_xstat(b, "rx_q%u_bytes", q), qs.rx_bytes);
		assert_int_equal(queue_xstat(b, "tx_q%u_packets", q), qs.tx_packets);
		assert_int_equal(queue_xstat(b, "tx_q%u_bytes", q), qs.tx_bytes);
		assert_int_equal(queue_xstat(b, "tx_q%u_ring_full", q), qs.tx_ring_full);
		assert_int_equal(queue_xstat(b, "rx_q%u_refill_failed", q), qs.rx_refill_failed);
		assert_int_equal(queue_xstat(b, "irq_q%u_updates", q), qs.irq_updates);
		sum.rx_packets += qs.rx_packets;
		sum.rx_bytes += qs.rx_bytes;
		sum.tx_packets += qs.tx_packets;
		sum.tx_bytes += qs.tx_bytes;
		sum.tx_ring_full += qs.tx_ring_full;
		sum.rx_refill_failed += qs.rx_refill_failed;
		sum.rx_bad_completion += qs.rx_bad_completion;
		sum.tx_dropped_bad += qs.tx_dropped_bad;
	}
	assert_int_equal(sum.rx_packets, FRAMES);
	assert_int_equal(sum.rx_packets, port.rx_packets);
	assert_int_equal(sum.rx_bytes, port.rx_bytes);
	assert_int_equal(sum.tx_packets, port.tx_packets);
	assert_int_equal(sum.tx_bytes, port.tx_bytes);
	assert_int_equal(sum.tx_ring_full, port.tx_ring_full);
	assert_int_equal(sum.rx_refill_failed, port.rx_refill_failed);
	assert_int_equal(sum.rx_bad_completion, port.rx_bad_completion);
	assert_int_equal(sum.tx_dropped_bad, port.tx_dropped_bad);
	struct myrio_queue_stats none;
	assert_int_equal(myrio_port_queue_stats(b, nq, &none), -EINVAL);

	for (uint16_t q = 0; q < nq; q++) {
		myrio_port_tx_drain(b, t[q].pool, 1000);
		myrio_pool_destroy(t[q].pool);
	}
	myrio_port_tx_drain(a, apool, 1000);
	myrio_pool_destroy(apool);
	myrio_port_close(b);
	myrio_port_close(a);
	myrio_sim_destroy(w);
}

static void two_queues(void **state)
{
	(void)state;
	run(2);
}

static void four_queues(void **state)
{
	(void)state;
	run(4);
}

/* A port of one queue without queues of its driver's: queue 0's are the port's. */
static void one_queue_is_the_port(void **state)
{
	(void)state;
	struct myrio_port *a, *b;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	assert_int_equal(myrio_port_open(&a, "pair:qs/0", &pc), 0);
	assert_int_equal(myrio_port_open(&b, "pair:qs/1", &pc), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(a, 64, 2048, &pool), 0);
	struct myrio_port_info ib;
	myrio_port_info(b, &ib);
	for (unsigned i = 0; i < 10; i++) {
		struct myrio_pkt *p = myrio_pkt_alloc(pool);
		udp_frame(myrio_pkt_data(p), ib.mac, 1, 70);
		p->len = 70;
		assert_int_equal(myrio_tx_burst(a, &p, 1), 1);
	}
	unsigned got = 0;
	for (unsigned spins = 0; got < 10 && spins < 1000000; spins++) {
		struct myrio_pkt *in[16];
		uint16_t n = myrio_rx_burst(b, in, 16);
		got += n;
		myrio_pkt_free_bulk(in, n);
	}
	struct myrio_queue_stats qs;
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_queue_stats(b, 0, &qs), 0);
	assert_int_equal(myrio_port_stats(b, &ps), 0);
	assert_int_equal(qs.rx_packets, 10);
	assert_int_equal(qs.rx_bytes, ps.rx_bytes);
	assert_int_equal(myrio_port_queue_stats(b, 1, &qs), -EINVAL);
	myrio_port_close(b);
	myrio_port_tx_drain(a, pool, 1000);
	myrio_pool_destroy(pool);
	myrio_port_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(two_queues),
	    cmocka_unit_test(four_queues),
	    cmocka_unit_test(one_queue_is_the_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
