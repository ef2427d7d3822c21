/* SPDX-License-Identifier: BSD-3-Clause */
/* Work that must not grow with the number of connections: a timer that comes due visits
 * its own connection only, and a SYN to a full table finds a slot (the oldest reusable
 * TIME_WAIT) or a SYN cookie without looking at the others. Counted with the stack's
 * work counters, not timed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

#define NCONNS 1000u

static void table_conf(struct myrio_stack_conf *c)
{
	c->max_tcp_conns = NCONNS;
	c->delayed_ack_ms = 40;
	c->time_wait_ms = 60000;
}

/* NCONNS - 1 connections opened by the stack towards a peer that never answers: each
 * has its SYN retransmission timer pending (1 s). */
static void many_pending_timers(struct raw *r)
{
	for (unsigned i = 0; i < NCONNS - 1; i++) {
		struct myrio_tcp_conn *c;
		assert_int_equal(myrio_tcp_connect(r->s, PEER_IP, 9, NULL, &c), 0);
		if (i % 32 == 31)
			raw_poll(r); /* the SYNs go out, and are ignored */
	}
	raw_poll(r);
}

static void due_timer_visits_only_its_connection(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "sc1", NULL, table_conf, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 4, NULL, &l), 0);
	struct peer p;
	peer_connect(&r, &p, 40000, 80, 1, true);
	assert_non_null(p.c);
	many_pending_timers(&r);

	/* Milliseconds pass with nothing due: no connection is looked at. */
	uint64_t v0 = r.s->timer_visits;
	for (int i = 0; i < 20; i++)
		raw_wait_ms(&r, 1);
	assert_int_equal(r.s->timer_visits - v0, 0);

	/* One segment: its ACK is delayed 40 ms; when that comes due, the ACK goes out and
	 * only this connection was visited, not the 999 with a timer pending. */
	peer_send_poll(&r, &p, F_ACK | F_PSH, "x", 1);
	assert_int_equal(cap_count_tcp(&r), 0);
	v0 = r.s->timer_visits;
	raw_wait_ms(&r, 40);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, p.snd_nxt);
	assert_int_equal(r.s->timer_visits - v0, 1);

	/* ACKs that postpone a retransmission timer cost nothing each: the entry fires at the
	 * old deadline and files itself at the new one. 50 ACKs in 250 ms with a probe
	 * timeout of about 50 ms (2 RTT + the peer's delayed ACK): some 5 visits, not 50. */
	uint8_t data[100] = {0};
	v0 = r.s->timer_visits;
	for (int i = 0; i < 50; i++) {
		assert_int_equal(myrio_tcp_write(p.c, data, sizeof(data)), (ssize_t)sizeof(data));
		raw_wait_ms(&r, 5);
		p.rcv_nxt += sizeof(data);
		peer_ack(&r, &p);
	}
	assert_true(r.s->timer_visits - v0 <= 7);
	myrio_tcp_close(p.c);
	raw_close(&r);
}

/* The stack closes first and the peer answers with FIN+ACK: TIME_WAIT, the application
 * let go. */
static void time_wait_conn(struct raw *r, struct peer *p, uint16_t sport)
{
	peer_connect(r, p, sport, 80, 1000u * sport, true);
	assert_non_null(p->c);
	myrio_tcp_close(p->c);
	raw_poll(r);
	p->rcv_nxt++; /* our FIN */
	peer_send_poll(r, p, F_ACK | F_FIN, NULL, 0);
	assert_int_equal(myrio_tcp_state(p->c), MYRIO_TCP_TIME_WAIT);
}

static bool tuple_known(struct raw *r, uint16_t sport)
{
	return tcp_lookup(r->s, STACK_IP, 80, PEER_IP, sport) != NULL;
}

static void full_table_syn_recycles_the_oldest_time_wait(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "sc2", NULL, table_conf, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 4, NULL, &l), 0);
	struct peer old, young, p;
	time_wait_conn(&r, &old, 1000);
	time_wait_conn(&r, &young, 1001);
	for (unsigned i = 2; i < NCONNS; i++) {
		peer_connect(&r, &p, (uint16_t)(1000 + i), 80, i, true);
		assert_non_null(p.c);
	}
	assert_int_equal(r.s->free_head, UINT32_MAX); /* full */

	uint64_t v0 = r.s->alloc_visits;
	peer_connect(&r, &p, 5000, 80, 5, true);
	assert_non_null(p.c);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	assert_true(r.s->alloc_visits - v0 <= 1);
	assert_false(tuple_known(&r, 1000)); /* the oldest TIME_WAIT gave its slot */
	assert_true(tuple_known(&r, 1001));

	v0 = r.s->alloc_visits;
	peer_connect(&r, &p, 5001, 80, 6, true);
	assert_non_null(p.c);
	assert_true(r.s->alloc_visits - v0 <= 1);
	assert_false(tuple_known(&r, 1001));
	raw_close(&r);
}

static void full_table_without_time_wait_answers_with_a_cookie(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "sc3", NULL, table_conf, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 4, NULL, &l), 0);
	struct peer p;
	for (unsigned i = 0; i < NCONNS; i++) {
		peer_connect(&r, &p, (uint16_t)(1000 + i), 80, i, true);
		assert_non_null(p.c);
	}
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_syncookies_sent, 0);

	uint64_t v0 = r.s->alloc_visits;
	uint8_t o[4] = {2, 4, 0x05, 0xb4};
	struct tcpf t = {.sport = 6000,
			 .dport = 80,
			 .seq = 4242,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = 4};
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(r.s->alloc_visits - v0, 0);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_SYN | F_ACK);
	assert_int_equal(v.ack, 4243);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_syncookies_sent, 1);
	assert_int_equal(st.drop_tcp_table_full, 1);

	/* The cookie's ACK while the table is still full: dropped, not reset, so that the
	 * peer's retransmission can still get in. */
	int accepted = r.ev_count[MYRIO_TCP_EV_ACCEPTED];
	struct tcpf a = {.sport = 6000,
			 .dport = 80,
			 .seq = 4243,
			 .ack = v.seq + 1,
			 .flags = F_ACK | F_PSH,
			 .data = (const uint8_t *)"hi",
			 .len = 2,
			 .win = 65535};
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(cap_count_tcp(&r), 0);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], accepted);

	/* A slot frees up: the retransmission makes the connection. */
	struct myrio_tcp_conn *first = tcp_lookup(r.s, STACK_IP, 80, PEER_IP, 1000);
	assert_non_null(first);
	myrio_tcp_abort(first);
	raw_poll(&r);
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], accepted + 1);
	char b[4];
	assert_int_equal(myrio_tcp_read(r.last_conn, b, sizeof(b)), 2);
	assert_int_equal(myrio_tcp_state(r.last_conn), MYRIO_TCP_ESTABLISHED);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(due_timer_visits_only_its_connection),
	    cmocka_unit_test(full_table_syn_recycles_the_oldest_time_wait),
	    cmocka_unit_test(full_table_without_time_wait_answers_with_a_cookie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
