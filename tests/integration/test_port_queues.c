/* SPDX-License-Identifier: BSD-3-Clause */
/* A port of several queues on the model's RSS firmware: flows land on the queue their
 * hash names (myrio_port_rss_flow_queue), every packet of a flow on one queue with its hash;
 * a new table and key move them; four threads poll four queues without locks; each queue
 * sends from its own ring; per-queue counters and interrupts; queue 0 as a port of one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "myrio/myrio.h"
#include "myrio/publish.h"
#include "queue_threads.h"

#define NQ 4
#define FLOWS 96
#define PER_FLOW 5

struct ctx {
	struct myrio_sim *w;
	struct myrio_port *a, *b; /* a: one queue, sends; b: NQ queues */
	struct myrio_pool *pool;  /* a's transmit buffers */
	uint8_t mac_b[6];
};

static int open_ports(struct ctx *c, bool irq, const char *args)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (myrio_sim_conf_parse(&sc, "eeprom_fw=rss,link=unlimited") < 0 ||
	    myrio_sim_create(&c->w, &sc) < 0)
		return -1;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = c->w;
	if (myrio_port_open(&c->a, "sim:sim0", &pc) < 0)
		return -1;
	pc.irq = irq;
	pc.driver_args = args;
	if (myrio_port_open_queues(&c->b, "sim:sim1", &pc, NQ) < 0)
		return -1;
	struct myrio_port_info info;
	myrio_port_info(c->b, &info);
	memcpy(c->mac_b, info.mac, 6);
	return myrio_port_pool_create(c->a, 1024, 2048, &c->pool);
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c || open_ports(c, false, NULL) < 0)
		return -1;
	*state = c;
	return 0;
}

static int setup_irq(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c || open_ports(c, true, NULL) < 0)
		return -1;
	*state = c;
	return 0;
}

/* b without 802.3x pause: a full queue drops rather than holding the link */
static int setup_no_pause(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c || open_ports(c, false, "pause=0") < 0)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	myrio_port_tx_drain(c->a, c->pool, 1000);
	myrio_pool_destroy(c->pool);
	myrio_port_close(c->b);
	myrio_port_close(c->a);
	myrio_sim_destroy(c->w);
	free(c);
	return 0;
}

static const uint32_t src_ip = 0x0a000001, dst_ip = 0x0a000002; /* host order */

/* A TCP (or UDP) frame of flow f, sequence k in its payload, into p. */
static void flow_frame(struct ctx *c, struct myrio_pkt *p, uint8_t proto, uint16_t sport,
		       uint16_t dport, uint32_t k)
{
	uint8_t *f = myrio_pkt_data(p);
	static const uint8_t mac_a[6] = {0x02};
	qt_headers(f, c->mac_b, mac_a, proto, src_ip, dst_ip, sport, dport);
	memset(f + QT_HDR, 0, 80 - QT_HDR);
	memcpy(f + 60, &k, 4);
	p->len = 80;
}

static void send_flow(struct ctx *c, struct myrio_port *from, uint16_t queue, uint8_t proto,
		      uint16_t sport, uint16_t dport, uint32_t k)
{
	struct myrio_pkt *p;
	while (!(p = myrio_pkt_alloc(c->pool)))
		myrio_tx_burst(from, NULL, 0); /* reap */
	flow_frame(c, p, proto, sport, dport, k);
	while (myrio_tx_burst_queue(from, queue, &p, 1) != 1)
		;
}

static int flow_queue(struct ctx *c, uint8_t proto, uint16_t sport, uint16_t dport, uint32_t *hash)
{
	return myrio_port_rss_flow_queue(c->b, proto, htonl(src_ip), htonl(dst_ip), htons(sport),
					 htons(dport), hash);
}

/* Receives `want` packets over all queues; checks each against its flow's queue and hash. */
static void receive_checked(struct ctx *c, unsigned want, uint8_t proto, unsigned got_q[NQ])
{
	unsigned got = 0;
	for (unsigned spins = 0; got < want && spins < 20000000; spins++) {
		for (uint16_t q = 0; q < NQ; q++) {
			struct myrio_pkt *pk[32];
			uint16_t n = myrio_rx_burst_queue(c->b, q, pk, 32);
			for (uint16_t i = 0; i < n; i++) {
				const uint8_t *f = myrio_pkt_data(pk[i]);
				uint16_t sp, dp;
				memcpy(&sp, f + 34, 2);
				memcpy(&dp, f + 36, 2);
				uint32_t h = 0;
				int wq = flow_queue(c, proto, ntohs(sp), ntohs(dp), &h);
				assert_int_equal(q, wq);
				assert_true(pk[i]->ol_flags & MYRIO_PKT_RX_RSS_HASH);
				assert_int_equal(pk[i]->rss_hash, h);
				got_q[q]++;
				myrio_pkt_free(pk[i]);
			}
			got += n;
		}
	}
	assert_int_equal(got, want);
}

static void flows_land_on_their_queue(void **state)
{
	struct ctx *c = *state;
	assert_int_equal(myrio_port_queues(c->b), NQ);
	assert_int_equal(myrio_port_queues(c->a), 1);
	assert_int_equal(myrio_port_rss_flow_queue(c->a, 6, 0, 0, 0, 0, NULL), -ENOTSUP);
	unsigned got_q[NQ] = {0}, want_q[NQ] = {0};
	for (uint32_t k = 0; k < PER_FLOW; k++)
		for (uint16_t f = 0; f < FLOWS; f++) {
			send_flow(c, c->a, 0, 6, (uint16_t)(33000 + f * 7), 80, k);
			if (k == 0)
				want_q[flow_queue(c, 6, (uint16_t)(33000 + f * 7), 80, NULL)] +=
				    PER_FLOW;
		}
	receive_checked(c, FLOWS * PER_FLOW, 6, got_q);
	for (unsigned q = 0; q < NQ; q++) {
		assert_int_equal(got_q[q], want_q[q]);
		assert_true(got_q[q] > 0); /* 96 flows reach every queue */
		char name[32];
		uint64_t v = 0;
		snprintf(name, sizeof(name), "rx_q%u_packets", q);
		assert_int_equal(myrio_port_xstat(c->b, name, &v), 0);
		assert_int_equal(v, got_q[q]);
	}
	struct myrio_port_stats st;
	myrio_port_stats(c->b, &st);
	assert_int_equal(st.rx_packets, FLOWS * PER_FLOW); /* the port's sum of its queues */

	/* Everything to queue 3, by a new table; then a new key and the port hash. */
	struct myrio_rss_conf rc;
	assert_int_equal(myrio_port_rss_get(c->b, &rc), 0);
	assert_int_equal(rc.hash, MYRIO_RSS_IPV4 | MYRIO_RSS_TCP_IPV4);
	memset(rc.table, 3, sizeof(rc.table));
	rc.table_size = 64;
	assert_int_equal(myrio_port_rss_set(c->b, &rc), 0);
	memset(got_q, 0, sizeof(got_q));
	for (uint16_t f = 0; f < 40; f++)
		send_flow(c, c->a, 0, 6, (uint16_t)(1000 + f), 443, 0);
	receive_checked(c, 40, 6, got_q);
	assert_int_equal(got_q[3], 40);
	for (unsigned i = 0; i < 64; i++)
		rc.table[i] = (uint8_t)(i * 5 % NQ);
	for (unsigned i = 0; i < MYRIO_RSS_KEY_LEN; i++)
		rc.key[i] = (uint8_t)(i * 29 + 3);
	assert_int_equal(myrio_port_rss_set(c->b, &rc), 0);
	memset(got_q, 0, sizeof(got_q));
	for (uint16_t f = 0; f < 64; f++)
		send_flow(c, c->a, 0, 6, (uint16_t)(2000 + f * 3), 443, 0);
	receive_checked(c, 64, 6, got_q);
	rc.hash = MYRIO_RSS_PORTS;
	assert_int_equal(myrio_port_rss_set(c->b, &rc), 0);
	memset(got_q, 0, sizeof(got_q));
	for (uint16_t f = 0; f < 64; f++)
		send_flow(c, c->a, 0, 17, (uint16_t)(5000 + f), 53, 0);
	receive_checked(c, 64, 17, got_q);
	for (unsigned q = 0; q < NQ; q++)
		assert_true(got_q[q] > 0);
	/* refused: a queue that does not exist, a hash that is no type */
	rc.table[0] = NQ;
	assert_int_equal(myrio_port_rss_set(c->b, &rc), -EINVAL);
	rc.table[0] = 0;
	rc.hash = MYRIO_RSS_PORTS | MYRIO_RSS_IPV4;
	assert_int_equal(myrio_port_rss_set(c->b, &rc), -EINVAL);
	struct myrio_pkt *none;
	assert_int_equal(myrio_rx_burst_queue(c->b, NQ, &none, 1), 0);
}

struct poller {
	struct ctx *c;
	uint16_t q;
	unsigned want, got, wrong;
};

static void *poll_queue(void *arg)
{
	struct poller *pl = arg;
	for (unsigned spins = 0; pl->got < pl->want && spins < 50000000; spins++) {
		struct myrio_pkt *pk[32];
		uint16_t n = myrio_rx_burst_queue(pl->c->b, pl->q, pk, 32);
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *f = myrio_pkt_data(pk[i]);
			uint16_t sp;
			memcpy(&sp, f + 34, 2);
			int wq = flow_queue(pl->c, 6, ntohs(sp), 80, NULL);
			pl->wrong += wq != pl->q;
			myrio_pkt_free(pk[i]); /* this queue's pools: this thread's */
		}
		pl->got += n;
	}
	return NULL;
}

static void one_thread_per_queue(void **state)
{
	struct ctx *c = *state;
	struct poller pl[NQ];
	pthread_t th[NQ];
	unsigned total = 4000;
	for (uint16_t q = 0; q < NQ; q++)
		pl[q] = (struct poller){.c = c, .q = q};
	for (unsigned i = 0; i < total; i++)
		pl[flow_queue(c, 6, (uint16_t)(10000 + i % 500), 80, NULL)].want++;
	for (uint16_t q = 0; q < NQ; q++)
		assert_int_equal(pthread_create(&th[q], NULL, poll_queue, &pl[q]), 0);
	for (unsigned i = 0; i < total; i++)
		send_flow(c, c->a, 0, 6, (uint16_t)(10000 + i % 500), 80, i);
	for (uint16_t q = 0; q < NQ; q++) {
		pthread_join(th[q], NULL);
		assert_int_equal(pl[q].got, pl[q].want);
		assert_int_equal(pl[q].wrong, 0);
	}
}

/* Queue 2 of b sends from its own ring, with a pool of its own. */
static void a_queue_sends_from_its_ring(void **state)
{
	struct ctx *c = *state;
	struct myrio_pool *bp;
	assert_int_equal(myrio_port_pool_create(c->b, 64, 2048, &bp), 0);
	struct myrio_port_info ia;
	myrio_port_info(c->a, &ia);
	for (unsigned i = 0; i < 10; i++) {
		struct myrio_pkt *p = myrio_pkt_alloc(bp);
		assert_non_null(p);
		uint8_t *f = myrio_pkt_data(p);
		memset(f, (int)i, 100);
		memcpy(f, ia.mac, 6);
		f[12] = 0x88;
		f[13] = 0xB5;
		p->len = 100;
		assert_int_equal(myrio_tx_burst_queue(c->b, 2, &p, 1), 1);
	}
	unsigned got = 0;
	for (unsigned spins = 0; got < 10 && spins < 10000000; spins++) {
		struct myrio_pkt *pk[16];
		uint16_t n = myrio_rx_burst(c->a, pk, 16);
		for (uint16_t i = 0; i < n; i++) {
			assert_int_equal(myrio_pkt_data(pk[i])[20], got + i);
			myrio_pkt_free(pk[i]);
		}
		got += n;
		myrio_tx_burst_queue(c->b, 2, NULL, 0); /* reap */
	}
	assert_int_equal(got, 10);
	uint64_t v = 0;
	assert_int_equal(myrio_port_xstat(c->b, "tx_q2_packets", &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(myrio_port_xstat(c->b, "tx_q0_packets", &v), 0);
	assert_int_equal(v, 0);
	for (unsigned i = 0; i < 1000 && myrio_pool_free_count(bp) != 64; i++) {
		myrio_tx_burst_queue(c->b, 2, NULL, 0);
		usleep(1000);
	}
	assert_int_equal(myrio_pool_free_count(bp), 64);
	myrio_pool_destroy(bp);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, ms) == 1;
}

/* Each queue's eventfd wakes for its own flows only. */
static void each_queue_has_its_interrupt(void **state)
{
	struct ctx *c = *state;
	int fd[NQ];
	for (uint16_t q = 0; q < NQ; q++) {
		fd[q] = myrio_port_irq_fd_queue(c->b, q);
		assert_true(fd[q] >= 0);
		for (int k = 0; k < q; k++)
			assert_int_not_equal(fd[q], fd[k]);
	}
	assert_int_equal(myrio_port_irq_fd_queue(c->b, NQ), -EINVAL);
	for (uint16_t sport = 7000; sport < 7012; sport++) {
		int q = flow_queue(c, 6, sport, 80, NULL);
		for (uint16_t k = 0; k < NQ; k++) {
			uint64_t v;
			struct myrio_pkt *pk[8];
			uint16_t n;
			while ((n = myrio_rx_burst_queue(c->b, k, pk, 8)) > 0)
				myrio_pkt_free_bulk(pk, n);
			myrio_port_irq_arm_queue(c->b, k);
			while (read(fd[k], &v, sizeof(v)) == sizeof(v))
				;
		}
		send_flow(c, c->a, 0, 6, sport, 80, 0);
		assert_true(readable(fd[q], 5000));
		for (uint16_t k = 0; k < NQ; k++)
			if (k != q)
				assert_false(readable(fd[k], 0));
	}
}

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sends up to n frames of a flow from a's queue 0 within ms milliseconds; returns how many
 * the driver took (a paused NIC fills its ring and takes no more). */
static unsigned send_for(struct ctx *c, uint16_t sport, unsigned n, unsigned ms)
{
	unsigned sent = 0;
	for (uint64_t end = ms_now() + ms; sent < n && ms_now() < end;) {
		struct myrio_pkt *p;
		for (; sent < n && (p = myrio_pkt_alloc(c->pool)) != NULL; sent++) {
			flow_frame(c, p, 6, sport, 80, sent);
			if (myrio_tx_burst(c->a, &p, 1) != 1) {
				myrio_pkt_free(p);
				break;
			}
		}
		myrio_tx_burst(c->a, NULL, 0); /* reap */
		usleep(100);
	}
	return sent;
}

static uint16_t port_on(struct ctx *c, uint16_t q, uint16_t from)
{
	uint16_t sport = from;
	while (flow_queue(c, 6, sport, 80, NULL) != q)
		sport++;
	return sport;
}

/* Fills queue 1's ring (its thread stops polling: descheduled, busy), then sends a flow of
 * queue 0 for 250 ms: how many of its N frames queue 0 receives within 500 ms, well below
 * the NIC's 2 s limit on pausing. */
enum { N_BEHIND = 200 };
static unsigned behind_a_full_queue(struct ctx *c)
{
	struct myrio_port_info ib;
	myrio_port_info(c->b, &ib);
	send_for(c, port_on(c, 1, 9000), ib.rx_ring_entries * 3, 500);
	uint64_t end = ms_now() + 500;
	unsigned sent = send_for(c, port_on(c, 0, 9100), N_BEHIND, 250), got = 0;
	while (got < N_BEHIND && ms_now() < end) {
		struct myrio_pkt *pk[32];
		uint16_t n = myrio_rx_burst_queue(c->b, 0, pk, 32);
		got += n;
		myrio_pkt_free_bulk(pk, n);
		if (!n)
			usleep(100);
	}
	printf("# queue 0: %u sent, %u received while queue 1 was full\n", sent, got);
	return got;
}

/* With pause (the default, as Linux's): one queue's full ring holds the link for all, the
 * head-of-line blocking that makes queues of descheduled threads stop each other. */
static void pause_lets_a_full_queue_hold_the_others(void **state)
{
	struct ctx *c = *state;
	assert_true(behind_a_full_queue(c) < N_BEHIND);
	uint64_t v = 0;
	assert_int_equal(myrio_port_xstat(c->a, "dropped_pause", &v), 0);
	assert_true(v > 0);
}

/* With pause=0: queue 1's frames beyond its ring are dropped and counted, queue 0 goes on,
 * and queue 1 delivers what its ring held. */
static void without_pause_a_full_queue_drops_alone(void **state)
{
	struct ctx *c = *state;
	assert_int_equal(behind_a_full_queue(c), N_BEHIND);
	struct myrio_port_stats st = {0};
	for (uint64_t end = ms_now() + 1000; !st.rx_missed && ms_now() < end; usleep(1000)) {
		struct myrio_pkt *pk[32]; /* the NIC's counters come with queue 0's status */
		myrio_pkt_free_bulk(pk, myrio_rx_burst_queue(c->b, 0, pk, 32));
		assert_int_equal(myrio_port_stats(c->b, &st), 0);
	}
	assert_true(st.rx_missed > 0);
	uint64_t v = 1;
	assert_int_equal(myrio_port_xstat(c->a, "dropped_pause", &v), 0);
	assert_int_equal(v, 0);
	unsigned q1 = 0;
	for (uint64_t end = ms_now() + 1000; ms_now() < end;) {
		struct myrio_pkt *pk[32];
		uint16_t n = myrio_rx_burst_queue(c->b, 1, pk, 32);
		q1 += n;
		myrio_pkt_free_bulk(pk, n);
		if (!n && q1)
			break;
	}
	assert_true(q1 > 0);
}

/* Capture refuses a port of several queues (one pcap writer; no lock between the queues'
 * threads) and still works on a port of one. */
static void capture_refuses_several_queues(void **state)
{
	struct ctx *c = *state;
	char path[] = "/tmp/myrio-queues-pcap.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(myrio_port_capture_start(c->b, path), -ENOTSUP);
	assert_int_equal(myrio_port_capture_start(c->a, path), 0);
	myrio_port_capture_stop(c->a);
	unlink(path);
}

static uint64_t published(const struct myrio_published *pb, const char *group, const char *name)
{
	for (unsigned i = 0; i < pb->n; i++)
		if (!strcmp(pb->counters[i].group, group) && !strcmp(pb->counters[i].name, name))
			return pb->counters[i].value;
	return UINT64_MAX;
}

/* The published counters are the port's: every queue's traffic, in the sums and per queue,
 * copied by the thread that polls queue 0. */
static void published_counters_see_every_queue(void **state)
{
	struct ctx *c = *state;
	unsigned got_q[NQ] = {0}, want = 0;
	for (uint16_t sport = 7100; sport < 7140; sport++, want++)
		send_flow(c, c->a, 0, 6, sport, 80, 0);
	receive_checked(c, want, 6, got_q);
	assert_true(got_q[1] > 0 && got_q[2] > 0);
	struct myrio_published pb = {0};
	uint64_t q1 = UINT64_MAX, all = UINT64_MAX;
	for (uint64_t end = ms_now() + 3000; ms_now() < end && (q1 != got_q[1] || all != want);) {
		struct myrio_pkt *pk[8];
		myrio_pkt_free_bulk(pk, myrio_rx_burst(c->b, pk, 8)); /* queue 0's poll copies */
		usleep(1000);
		if (myrio_published_read(getpid(), &pb) < 0)
			continue;
		q1 = published(&pb, "port sim:sim1", "rx_q1_packets");
		all = published(&pb, "port sim:sim1", "rx_packets");
		myrio_published_free(&pb);
	}
	assert_int_equal(q1, got_q[1]);
	assert_int_equal(all, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(flows_land_on_their_queue, setup, teardown),
	    cmocka_unit_test_setup_teardown(one_thread_per_queue, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_queue_sends_from_its_ring, setup, teardown),
	    cmocka_unit_test_setup_teardown(each_queue_has_its_interrupt, setup_irq, teardown),
	    cmocka_unit_test_setup_teardown(pause_lets_a_full_queue_hold_the_others, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(without_pause_a_full_queue_drops_alone, setup_no_pause,
					    teardown),
	    cmocka_unit_test_setup_teardown(capture_refuses_several_queues, setup, teardown),
	    cmocka_unit_test_setup_teardown(published_counters_see_every_queue, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
