/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP sends into a NIC whose send ring stays full: over the pair link, whose ring empties
 * only when the receiving end polls, a sender fills the ring and the stack's batch. The
 * sends are then refused (-EAGAIN), not taken and dropped; a refused zero-copy buffer is
 * still the caller's, unchanged; a datagram in fragments goes whole or not at all; once
 * the NIC completes sends the same call succeeds; every datagram taken arrives, in order;
 * every transmit buffer comes home. A stack destroyed with datagrams in its batch sends
 * them first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "stack_pair.h"
#include "tcp_lite/stack.h" /* the batch: TX_BATCH, ntx, the pool */
#include "test_pattern.h"
#include "wall_clock.h"

#define PORT_A 7000
#define PORT_B 7001
#define SMALL 64	/* bytes of a datagram of one frame */
#define BIG 65507	/* the longest datagram: 45 fragments at MTU 1500 */
#define RING "?ring=16" /* a's send ring: 13 frames fill it */

/* A datagram of len bytes: its sequence number, then the pattern from an offset of its own. */
static void fill(uint8_t *d, uint64_t seq, uint32_t len)
{
	memcpy(d, &seq, sizeof(seq));
	test_pattern_fill(d + sizeof(seq), len - sizeof(seq), seq * 131);
}

static struct myrio_pkt *datagram(struct myrio_stack *s, uint64_t seq)
{
	struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
	assert_non_null(p);
	fill(myrio_pkt_data(p), seq, SMALL);
	p->len = SMALL;
	return p;
}

/* What b received, checked: datagrams of seqs in order (next), each intact. */
struct rcv {
	uint64_t next;
	unsigned big; /* BIG datagrams among them */
};

static void take(struct myrio_udp_sock *u, struct rcv *r)
{
	static uint8_t want[BIG];
	struct myrio_pkt *q;
	while ((q = myrio_udp_recv(u, NULL, NULL)) != NULL) {
		assert_true(q->len == SMALL || q->len == BIG);
		fill(want, r->next, q->len);
		assert_memory_equal(myrio_pkt_data(q), want, q->len);
		r->big += q->len == BIG;
		r->next++;
		myrio_pkt_free(q);
	}
}

struct setup {
	struct stack_pair h;
	struct myrio_udp_sock *ua, *ub;
};

static void open_setup(struct setup *t, const char *link)
{
	assert_int_equal(sp_open(&t->h, link, &(struct sp_opts){.opts_a = RING}), 0);
	assert_int_equal(sp_static_arp(&t->h), 0);
	assert_int_equal(myrio_udp_open(t->h.a, PORT_A, NULL, &t->ua), 0);
	assert_int_equal(myrio_udp_open(t->h.b, PORT_B, NULL, &t->ub), 0);
	assert_int_equal(myrio_udp_connect(t->ua, SP_IP_B, PORT_B), 0);
	sp_rounds(&t->h, 4); /* the announcements at create */
}

/* Every transmit buffer of a back in its pool (none leaked, none still at the NIC). */
static void all_home(struct setup *t)
{
	sp_rounds(&t->h, 4);
	assert_int_equal(myrio_pool_free_count(t->h.a->pool), t->h.a->pool->count);
}

/* Opens the pair and sends small datagrams (zero copy, by send and sendto in turn) while b
 * does not poll: taken until the ring and the batch are full, then refused. Returns how
 * many were taken; *p is the one refused, still the caller's. */
static uint64_t open_full(struct setup *t, const char *link, struct myrio_pkt **p)
{
	open_setup(t, link);
	uint64_t seq = 0;
	int rc = 0;
	for (int i = 0; i < 1000; i++) {
		*p = datagram(t->h.a, seq);
		rc = seq % 2 ? myrio_udp_send(t->ua, *p)
			     : myrio_udp_sendto(t->ua, *p, SP_IP_B, PORT_B);
		if (rc != 0)
			break;
		seq++;
	}
	assert_int_equal(rc, -EAGAIN);
	assert_true(t->h.a->ntx >= TX_BATCH - 1); /* the batch is full, not a ring of few */
	return seq;
}

/* Rounds until b has received datagrams 0..seq-1. */
static void receive_all(struct setup *t, struct rcv *r, uint64_t seq)
{
	for (int i = 0; i < 200 && r->next < seq; i++) {
		sp_round(&t->h);
		take(t->ub, r);
	}
	assert_int_equal(r->next, seq); /* every datagram taken arrived, once, in order */
}

static void zero_copy_send_refused_then_taken(void **state)
{
	(void)state;
	struct setup t;
	struct myrio_pkt *p;
	uint64_t seq = open_full(&t, "pair:udpfull_zc", &p);
	/* The refused buffer is the caller's, as it gave it: no header written into it. */
	uint16_t off = p->data_off;
	assert_int_equal(p->len, SMALL);
	uint8_t want[SMALL];
	fill(want, seq, SMALL);
	assert_memory_equal(myrio_pkt_data(p), want, SMALL);
	assert_int_equal(myrio_udp_sendto(t.ua, p, SP_IP_B, PORT_B), -EAGAIN); /* still full */
	assert_int_equal(myrio_udp_send(t.ua, p), -EAGAIN);
	assert_int_equal(p->data_off, off);
	struct myrio_stack_stats st;
	myrio_stack_stats(t.h.a, &st);
	assert_int_equal(st.tx_dropped_full, 0);

	/* b receives, the NIC completes sends: the same buffer goes. */
	struct rcv r = {0};
	int rc = -EAGAIN;
	for (int i = 0; i < 100 && rc == -EAGAIN; i++) {
		sp_round(&t.h);
		take(t.ub, &r);
		rc = myrio_udp_send(t.ua, p);
	}
	assert_int_equal(rc, 0);
	seq++;
	receive_all(&t, &r, seq);
	myrio_stack_stats(t.h.a, &st);
	assert_int_equal(st.tx_dropped_full, 0);
	assert_int_equal(st.udp_tx, seq);
	all_home(&t);
	myrio_udp_close(t.ua);
	myrio_udp_close(t.ub);
	sp_close(&t.h);
}

/* The copying send: one frame refused as the zero-copy one; a datagram in 45 fragments is
 * refused while the batch has room for fewer, with no fragment sent, even when a datagram
 * of one frame would be taken. */
static void copy_send_takes_every_fragment_or_none(void **state)
{
	(void)state;
	struct setup t;
	struct myrio_pkt *p;
	uint64_t seq = open_full(&t, "pair:udpfull_copy", &p);
	myrio_pkt_free(p);
	static uint8_t big[BIG];
	uint8_t small[SMALL];
	fill(small, seq, SMALL);
	assert_int_equal(myrio_udp_sendto_copy(t.ua, small, SMALL, SP_IP_B, PORT_B), -EAGAIN);
	fill(big, seq, BIG);
	assert_int_equal(myrio_udp_sendto_copy(t.ua, big, BIG, SP_IP_B, PORT_B), -EAGAIN);

	/* b takes one burst: the NIC completes a ring's worth, room for a few frames. */
	struct rcv r = {0};
	myrio_stack_poll(t.h.b);
	take(t.ub, &r);
	assert_true(r.next > 0);
	unsigned before = t.h.a->ntx;
	assert_int_equal(myrio_udp_sendto_copy(t.ua, big, BIG, SP_IP_B, PORT_B), -EAGAIN);
	assert_true(t.h.a->ntx < before); /* the batch moved on, yet not room for 45 */
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(t.h.a, &sa);
	assert_int_equal(sa.ip_frags_tx, 0); /* no fragment went */
	assert_int_equal(myrio_udp_sendto_copy(t.ua, small, SMALL, SP_IP_B, PORT_B), 0);
	seq++;

	/* The big one goes once there is room for all of it. */
	fill(big, seq, BIG);
	int rc = -EAGAIN;
	for (int i = 0; i < 100 && rc == -EAGAIN; i++) {
		sp_round(&t.h);
		take(t.ub, &r);
		rc = myrio_udp_sendto_copy(t.ua, big, BIG, SP_IP_B, PORT_B);
	}
	assert_int_equal(rc, 0);
	seq++;
	receive_all(&t, &r, seq);
	assert_int_equal(r.big, 1);
	myrio_stack_stats(t.h.a, &sa);
	myrio_stack_stats(t.h.b, &sb);
	assert_int_equal(sa.tx_dropped_full, 0);
	assert_int_equal(sb.ip_reass_drops, 0); /* no datagram came in part */
	assert_int_equal(sb.ip_reassembled, 1);
	all_home(&t);
	myrio_udp_close(t.ua);
	myrio_udp_close(t.ub);
	sp_close(&t.h);
}

struct receiver {
	struct stack_pair *h;
	struct myrio_udp_sock *ub;
	struct rcv r;
	uint64_t want;
};

static void *receive(void *arg)
{
	struct receiver *rv = arg;
	uint64_t end = wall_ns() + 10000000000ull;
	while (rv->r.next < rv->want && wall_ns() < end) {
		myrio_stack_poll(rv->h->b);
		take(rv->ub, &rv->r);
	}
	return NULL;
}

/* The last datagrams, taken into the batch right before destroy, reach the peer: destroy
 * hands the batch to the NIC as its ring empties (the peer polls on its own thread). */
static void destroy_sends_the_batch(void **state)
{
	(void)state;
	struct setup t;
	struct myrio_pkt *p;
	uint64_t seq = open_full(&t, "pair:udpfull_destroy", &p);
	myrio_pkt_free(p);
	struct receiver rv = {.h = &t.h, .ub = t.ub, .want = seq};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, receive, &rv), 0);
	myrio_udp_close(t.ua);
	myrio_stack_destroy(t.h.a);
	t.h.a = NULL;
	pthread_join(th, NULL);
	assert_int_equal(rv.r.next, seq);
	myrio_udp_close(t.ub);
	sp_close(&t.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(zero_copy_send_refused_then_taken),
	    cmocka_unit_test(copy_send_takes_every_fragment_or_none),
	    cmocka_unit_test(destroy_sends_the_batch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
