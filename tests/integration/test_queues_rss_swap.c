/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio_port_rss_set while four threads poll the four queues and frames keep arriving: the
 * table changes a hundred times; every frame arrives exactly once, on the queue the table in
 * force when it was sent said or the one that replaced it (the NIC reads its table entry by
 * entry, §7.3), with the hash of the key in force. Then keys change too: every frame still
 * arrives once, with a hash of one of the two keys, never a mixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "queue_threads.h"

#define FLOWS 64
#define PER_FLOW 2
#define VERSIONS 100
#define BATCH (FLOWS * PER_FLOW)
#define TOTAL (VERSIONS * BATCH)
#define TABLE 128

struct swap {
	struct myrio_sim *w;
	struct myrio_port *a, *b; /* a: one queue, sends; b: QT_NQ queues */
	struct myrio_pool *pool;
	uint8_t mac_b[6];
	struct myrio_rss_conf conf[VERSIONS];
	uint32_t hash[2][FLOWS]; /* each flow's hash under key 0 and key 1 */
	bool keys;		 /* versions alternate between two keys */
	_Atomic uint64_t received;
	_Atomic bool stop;
};

struct receiver {
	struct swap *s;
	uint16_t q;
	uint8_t *seen; /* frames received here, by number */
	unsigned got, wrong_queue, wrong_hash;
	char why[160];
};

static uint16_t sport_of(unsigned f)
{
	return (uint16_t)(40000 + f * 13);
}

static unsigned key_of(const struct swap *s, unsigned v)
{
	return s->keys ? v & 1 : 0;
}

static void *receive(void *arg)
{
	struct receiver *r = arg;
	struct swap *s = r->s;
	while (!atomic_load(&s->stop)) {
		struct myrio_pkt *pk[32];
		uint16_t n = myrio_rx_burst_queue(s->b, r->q, pk, 32);
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *f = myrio_pkt_data(pk[i]);
			uint32_t seq, v;
			uint16_t flow;
			memcpy(&seq, f + 56, 4);
			memcpy(&v, f + 60, 4);
			memcpy(&flow, f + 64, 2);
			if (seq >= TOTAL || v >= VERSIONS || flow >= FLOWS) {
				snprintf(r->why, sizeof(r->why), "a frame not sent: %u", seq);
				continue;
			}
			r->seen[seq]++;
			r->got++;
			/* sent under version v: v or v + 1 may have placed it (entry by entry) */
			unsigned k0 = key_of(s, v), k1 = key_of(s, v + 1);
			uint32_t h0 = s->hash[k0][flow], h1 = s->hash[k1][flow];
			bool on = s->conf[v].table[h0 % TABLE] == r->q ||
				  (v + 1 < VERSIONS && s->conf[v + 1].table[h1 % TABLE] == r->q);
			r->wrong_queue += !s->keys && !on;
			r->wrong_hash += pk[i]->rss_hash != h0 && pk[i]->rss_hash != h1;
			myrio_pkt_free(pk[i]);
		}
		atomic_fetch_add(&s->received, n);
		if (!n)
			sched_yield();
	}
	return NULL;
}

static int open_swap(struct swap *s)
{
	struct myrio_port_conf pc;
	if (qt_world(&s->w, "eeprom_fw=rss,link=unlimited", &pc) < 0 ||
	    myrio_port_open(&s->a, "sim:sim0", &pc) < 0 ||
	    myrio_port_open_queues(&s->b, "sim:sim1", &pc, QT_NQ) < 0)
		return -1;
	struct myrio_port_info info;
	myrio_port_info(s->b, &info);
	memcpy(s->mac_b, info.mac, 6);
	return myrio_port_pool_create(s->a, 1024, 2048, &s->pool);
}

/* Version v's table (a different spread each time) and key; each flow's hashes. */
static void make_versions(struct swap *s)
{
	struct myrio_rss_conf base;
	assert_int_equal(myrio_port_rss_get(s->b, &base), 0);
	uint8_t key1[MYRIO_RSS_KEY_LEN];
	for (unsigned i = 0; i < MYRIO_RSS_KEY_LEN; i++)
		key1[i] = (uint8_t)(i * 29 + 3);
	for (unsigned v = 0; v < VERSIONS; v++) {
		struct myrio_rss_conf *c = &s->conf[v];
		*c = base;
		c->table_size = TABLE;
		for (unsigned i = 0; i < TABLE; i++)
			c->table[i] = (uint8_t)((i * 7 + v * 3 + (i >> 3) * v) % QT_NQ);
		if (key_of(s, v))
			memcpy(c->key, key1, sizeof(key1));
	}
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(myrio_port_rss_set(s->b, &s->conf[k && s->keys ? 1 : 0]), 0);
		for (unsigned f = 0; f < FLOWS; f++)
			myrio_port_rss_flow_queue(s->b, 6, htonl(QT_IP_A), htonl(QT_IP_B),
						  htons(sport_of(f)), htons(80), &s->hash[k][f]);
	}
}

static void send_frame(struct swap *s, uint32_t seq, uint32_t v, uint16_t flow)
{
	struct myrio_pkt *p;
	while (!(p = myrio_pkt_alloc(s->pool)))
		myrio_tx_burst(s->a, NULL, 0);
	uint8_t *f = myrio_pkt_data(p);
	static const uint8_t mac_a[6] = {0x02};
	qt_headers(f, s->mac_b, mac_a, 6, QT_IP_A, QT_IP_B, sport_of(flow), 80);
	memset(f + QT_HDR, 0, 80 - QT_HDR);
	memcpy(f + 56, &seq, 4);
	memcpy(f + 60, &v, 4);
	memcpy(f + 64, &flow, 2);
	p->len = 80;
	while (myrio_tx_burst(s->a, &p, 1) != 1)
		;
}

static void swap_under_traffic(bool keys)
{
	struct swap *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->keys = keys;
	assert_int_equal(open_swap(s), 0);
	make_versions(s);
	struct receiver rcv[QT_NQ];
	pthread_t th[QT_NQ];
	for (uint16_t q = 0; q < QT_NQ; q++) {
		rcv[q] = (struct receiver){.s = s, .q = q, .seen = calloc(TOTAL, 1)};
		assert_non_null(rcv[q].seen);
		assert_int_equal(pthread_create(&th[q], NULL, receive, &rcv[q]), 0);
	}
	uint32_t seq = 0;
	for (uint32_t v = 0; v < VERSIONS; v++) {
		/* version v - 2's frames are in: at most two tables place a frame */
		uint64_t until = qt_ms() + 30000;
		while (v >= 2 && atomic_load(&s->received) < (uint64_t)(v - 1) * BATCH &&
		       qt_ms() < until)
			sched_yield();
		assert_int_equal(myrio_port_rss_set(s->b, &s->conf[v]), 0);
		for (unsigned k = 0; k < PER_FLOW; k++)
			for (uint16_t f = 0; f < FLOWS; f++)
				send_frame(s, seq++, v, f);
	}
	uint64_t until = qt_ms() + 30000;
	while (atomic_load(&s->received) < TOTAL && qt_ms() < until)
		usleep(1000);
	atomic_store(&s->stop, true);
	for (uint16_t q = 0; q < QT_NQ; q++) {
		pthread_join(th[q], NULL);
		if (rcv[q].why[0])
			fail_msg("queue %u: %s", q, rcv[q].why);
		assert_int_equal(rcv[q].wrong_queue, 0);
		assert_int_equal(rcv[q].wrong_hash, 0);
		assert_true(rcv[q].got > 0); /* the tables spread the flows over every queue */
	}
	/* every frame exactly once, over all queues */
	for (uint32_t i = 0; i < TOTAL; i++) {
		unsigned n = 0;
		for (uint16_t q = 0; q < QT_NQ; q++)
			n += rcv[q].seen[i];
		if (n != 1)
			fail_msg("frame %u arrived %u times", i, n);
	}
	struct myrio_port_stats st;
	myrio_port_stats(s->b, &st);
	assert_int_equal(st.rx_packets, TOTAL);
	assert_int_equal(st.rx_missed, 0);
	for (uint16_t q = 0; q < QT_NQ; q++)
		free(rcv[q].seen);
	myrio_port_tx_drain(s->a, s->pool, 1000);
	myrio_pool_destroy(s->pool);
	myrio_port_close(s->b);
	myrio_port_close(s->a);
	myrio_sim_destroy(s->w);
	free(s);
}

static void table_changes_under_traffic(void **state)
{
	(void)state;
	swap_under_traffic(false);
}

static void key_changes_under_traffic(void **state)
{
	(void)state;
	swap_under_traffic(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(table_changes_under_traffic),
	    cmocka_unit_test(key_changes_under_traffic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
