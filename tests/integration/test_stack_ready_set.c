/* SPDX-License-Identifier: BSD-3-Clause */
/* The readiness set between two stacks on the pair port: listeners, connections and UDP
 * sockets reported when ready, level- and edge-triggered, OUT after a refused send, HUP
 * and ERR, removal on close, and a wait that visits only what is ready. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_pair.h"
#include "tcp_lite/stack.h" /* ready_listed */

#define PORT 7200

static int wait_all(struct myrio_ready_set *set, struct myrio_ready_event *ev)
{
	return myrio_ready_wait(set, ev, 16);
}

/* b listens in a set, a opens n connections; returns b's accepted connections in order. */
static void accept_n(struct stack_pair *h, struct myrio_ready_set *set,
		     struct myrio_tcp_listener *l, struct myrio_tcp_conn **ac,
		     struct myrio_tcp_conn **bc, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(myrio_tcp_connect(h->a, SP_IP_B, PORT, NULL, &ac[i]), 0);
	sp_rounds(h, 50);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 1);
	assert_int_equal(ev[0].events, MYRIO_READY_IN);
	assert_ptr_equal(ev[0].user, l);
	for (unsigned i = 0; i < n; i++) {
		bc[i] = myrio_tcp_accept(l);
		assert_non_null(bc[i]);
		assert_int_equal(myrio_tcp_state(bc[i]), MYRIO_TCP_ESTABLISHED);
	}
	assert_null(myrio_tcp_accept(l));
	assert_int_equal(wait_all(set, ev), 0); /* nothing left to accept */
}

static void level_triggered_reports_until_drained(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:rs_lt", NULL), 0);
	struct myrio_ready_set *set;
	assert_int_equal(myrio_ready_create(h.b, &set), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, 16, NULL, &l), 0);
	assert_int_equal(myrio_ready_add_listener(set, l, MYRIO_READY_IN, l), 0);
	assert_int_equal(myrio_ready_add_listener(set, l, MYRIO_READY_IN, l), -EBUSY);
	struct myrio_tcp_conn *ac[3], *bc[3];
	accept_n(&h, set, l, ac, bc, 3);
	for (unsigned i = 0; i < h.nev; i++)
		assert_int_equal(h.ev[i].accepted, 0); /* queued, not announced */
	for (uintptr_t i = 0; i < 3; i++)
		assert_int_equal(myrio_ready_add_tcp(set, bc[i], MYRIO_READY_IN, (void *)(i + 1)),
				 0);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 0);
	assert_int_equal(ready_listed(set), 0);

	assert_int_equal(myrio_tcp_write(ac[1], "hello", 5), 5);
	sp_rounds(&h, 20);
	for (int k = 0; k < 3; k++) { /* reported while the data stays unread */
		assert_int_equal(wait_all(set, ev), 1);
		assert_int_equal(ev[0].events, MYRIO_READY_IN);
		assert_ptr_equal(ev[0].user, (void *)2);
	}
	char buf[16];
	assert_int_equal(myrio_tcp_read(bc[1], buf, sizeof(buf)), 5);
	assert_int_equal(wait_all(set, ev), 0);

	/* The peer's FIN: IN (end of stream), then HUP once both sides closed. */
	assert_int_equal(myrio_tcp_shutdown(ac[2]), 0);
	sp_rounds(&h, 20);
	assert_int_equal(wait_all(set, ev), 1);
	assert_ptr_equal(ev[0].user, (void *)3);
	assert_int_equal(ev[0].events, MYRIO_READY_IN);
	assert_int_equal(myrio_tcp_read(bc[2], buf, sizeof(buf)), 0);
	/* A reset: ERR and HUP, whatever the interest. */
	myrio_tcp_abort(ac[0]);
	sp_rounds(&h, 20);
	assert_int_equal(wait_all(set, ev), 2);
	bool seen_err = false;
	for (int i = 0; i < 2; i++) {
		if (ev[i].user == (void *)1) {
			assert_int_equal(ev[i].events,
					 MYRIO_READY_IN | MYRIO_READY_HUP | MYRIO_READY_ERR);
			seen_err = true;
		} else {
			assert_ptr_equal(ev[i].user, (void *)3); /* still at end of stream */
		}
	}
	assert_true(seen_err);
	/* Closing removes: nothing reported for them any more. */
	myrio_tcp_close(bc[0]);
	myrio_tcp_close(bc[2]);
	assert_int_equal(wait_all(set, ev), 0);
	assert_int_equal(myrio_ready_del_tcp(set, bc[1]), 0);
	assert_int_equal(myrio_ready_del_tcp(set, bc[1]), -ENOENT);
	myrio_ready_destroy(set);
	myrio_tcp_close(bc[1]);
	for (int i = 1; i < 3; i++)
		myrio_tcp_close(ac[i]);
	myrio_tcp_listener_close(l);
	sp_rounds(&h, 10); /* the closes go out */
	sp_close(&h);
}

static void edge_triggered_once_per_event(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:rs_et", NULL), 0);
	struct myrio_ready_set *set;
	assert_int_equal(myrio_ready_create(h.b, &set), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, 16, NULL, &l), 0);
	assert_int_equal(myrio_ready_add_listener(set, l, MYRIO_READY_IN | MYRIO_READY_ET, l), 0);
	struct myrio_tcp_conn *ac[1], *bc[1];
	accept_n(&h, set, l, ac, bc, 1);
	assert_int_equal(myrio_ready_add_tcp(set, bc[0], MYRIO_READY_IN | MYRIO_READY_ET, &h), 0);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 0);
	assert_int_equal(myrio_tcp_write(ac[0], "abc", 3), 3);
	sp_rounds(&h, 20);
	assert_int_equal(wait_all(set, ev), 1);
	assert_int_equal(wait_all(set, ev), 0); /* unread, but no new event */
	assert_int_equal(myrio_tcp_write(ac[0], "def", 3), 3);
	sp_rounds(&h, 20);
	assert_int_equal(wait_all(set, ev), 1);
	char buf[16];
	assert_int_equal(myrio_tcp_read(bc[0], buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "abcdef", 6);
	myrio_ready_destroy(set);
	myrio_tcp_close(ac[0]);
	myrio_tcp_close(bc[0]);
	myrio_tcp_listener_close(l);
	sp_rounds(&h, 10); /* the closes go out */
	sp_close(&h);
}

static void short_send_queue(struct myrio_stack_conf *c)
{
	c->snd_queue_segs = 4;
	c->delayed_ack_ms = 0;
}

/* OUT is reported while a send would be taken, not after one was refused, and again
 * (without any send being tried) once the peer's ACKs make room. */
static void out_after_refused_send(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:rs_out", &(struct sp_opts){.tweak = short_send_queue}),
			 0);
	struct myrio_ready_set *set, *bset;
	assert_int_equal(myrio_ready_create(h.a, &set), 0);
	assert_int_equal(myrio_ready_create(h.b, &bset), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, 16, NULL, &l), 0);
	assert_int_equal(myrio_ready_add_listener(bset, l, MYRIO_READY_IN, l), 0);
	struct myrio_tcp_conn *ac[1], *bc[1];
	accept_n(&h, bset, l, ac, bc, 1);
	assert_int_equal(myrio_ready_add_tcp(set, ac[0], MYRIO_READY_OUT, &h), 0);
	assert_int_equal(myrio_ready_add_tcp(set, bc[0], MYRIO_READY_IN, &h), -EINVAL);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 1);
	assert_int_equal(ev[0].events, MYRIO_READY_OUT);
	static uint8_t big[64 * 1024];
	ssize_t took = myrio_tcp_write(ac[0], big, sizeof(big));
	assert_true(took > 0 && (size_t)took < sizeof(big));
	assert_int_equal(wait_all(set, ev), 0); /* the queue is full */
	uint8_t buf[4096];
	size_t rd = 0;
	for (int r = 0; r < 200 && rd < (size_t)took; r++) {
		sp_round(&h);
		ssize_t k;
		while ((k = myrio_tcp_read(bc[0], buf, sizeof(buf))) > 0)
			rd += (size_t)k;
	}
	assert_int_equal(rd, (size_t)took);
	sp_rounds(&h, 20); /* the last ACKs */
	assert_int_equal(wait_all(set, ev), 1);
	assert_int_equal(ev[0].events, MYRIO_READY_OUT);
	/* Interest changed: no OUT wanted, nothing to report. */
	assert_int_equal(myrio_ready_mod_tcp(set, ac[0], MYRIO_READY_IN), 0);
	assert_int_equal(wait_all(set, ev), 0);
	myrio_ready_destroy(set);
	myrio_ready_destroy(bset);
	myrio_tcp_close(ac[0]);
	myrio_tcp_close(bc[0]);
	myrio_tcp_listener_close(l);
	sp_rounds(&h, 10); /* the closes go out */
	sp_close(&h);
}

static void udp_datagram_and_error(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:rs_udp", NULL), 0);
	struct myrio_ready_set *set;
	assert_int_equal(myrio_ready_create(h.a, &set), 0);
	struct myrio_udp_sock *ua, *ub;
	assert_int_equal(myrio_udp_open(h.a, 5000, NULL, &ua), 0);
	assert_int_equal(myrio_udp_open(h.b, 5001, NULL, &ub), 0);
	assert_int_equal(myrio_ready_add_udp(set, ua, MYRIO_READY_IN, ua), 0);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 0);
	assert_int_equal(myrio_udp_sendto_copy(ub, "ping", 4, SP_IP_A, 5000), 0);
	sp_rounds(&h, 10); /* the closes go out */
	assert_int_equal(wait_all(set, ev), 1);
	assert_ptr_equal(ev[0].user, ua);
	struct myrio_pkt *p = myrio_udp_recv(ua, NULL, NULL);
	assert_non_null(p);
	myrio_pkt_free(p);
	assert_int_equal(wait_all(set, ev), 0);
	/* A connected socket's request to a closed port: the ICMP error makes it ready. */
	assert_int_equal(myrio_udp_connect(ua, SP_IP_B, 5999), 0);
	assert_int_equal(myrio_udp_sendto_copy(ua, "ping", 4, SP_IP_B, 5999), 0);
	sp_rounds(&h, 10); /* the closes go out */
	assert_int_equal(wait_all(set, ev), 1);
	assert_int_equal(myrio_udp_error(ua), -ECONNREFUSED);
	assert_int_equal(wait_all(set, ev), 0);
	myrio_udp_close(ua); /* leaves the set */
	assert_int_equal(ready_listed(set), 0);
	myrio_ready_destroy(set);
	myrio_udp_close(ub);
	sp_close(&h);
}

/* Listeners and UDP sockets change interest as connections do: reported again under the
 * new one at the next wait, and -ENOENT from a set they are not in. */
static void listener_and_udp_interest_modified(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:rs_mod", NULL), 0);
	struct myrio_ready_set *set, *other;
	assert_int_equal(myrio_ready_create(h.b, &set), 0);
	assert_int_equal(myrio_ready_create(h.b, &other), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, 16, NULL, &l), 0);
	assert_int_equal(myrio_ready_add_listener(set, l, 0, l), 0);
	struct myrio_udp_sock *ua, *ub;
	assert_int_equal(myrio_udp_open(h.a, 5000, NULL, &ua), 0);
	assert_int_equal(myrio_udp_open(h.b, 5001, NULL, &ub), 0);
	assert_int_equal(myrio_ready_add_udp(set, ub, MYRIO_READY_IN, ub), 0);
	struct myrio_tcp_conn *ac;
	assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, PORT, NULL, &ac), 0);
	assert_int_equal(myrio_udp_sendto_copy(ua, "ping", 4, SP_IP_B, 5001), 0);
	sp_rounds(&h, 50);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 1); /* the datagram; the listener wants nothing */
	assert_ptr_equal(ev[0].user, ub);

	assert_int_equal(myrio_ready_mod_udp(set, ub, 0), 0);
	assert_int_equal(myrio_ready_mod_listener(set, l, MYRIO_READY_IN | MYRIO_READY_ET), 0);
	assert_int_equal(wait_all(set, ev), 1);
	assert_ptr_equal(ev[0].user, l);
	assert_int_equal(ev[0].events, MYRIO_READY_IN);
	assert_int_equal(wait_all(set, ev), 0); /* edge-triggered: once */

	assert_int_equal(myrio_ready_mod_udp(set, ub, MYRIO_READY_IN), 0);
	assert_int_equal(wait_all(set, ev), 1);
	assert_ptr_equal(ev[0].user, ub);
	assert_int_equal(myrio_ready_mod_udp(other, ub, MYRIO_READY_IN), -ENOENT);
	assert_int_equal(myrio_ready_mod_listener(other, l, MYRIO_READY_IN), -ENOENT);

	struct myrio_tcp_conn *bc = myrio_tcp_accept(l);
	assert_non_null(bc);
	struct myrio_pkt *p = myrio_udp_recv(ub, NULL, NULL);
	assert_non_null(p);
	myrio_pkt_free(p);
	myrio_ready_destroy(other);
	myrio_ready_destroy(set);
	myrio_tcp_close(ac);
	myrio_tcp_close(bc);
	myrio_tcp_listener_close(l);
	myrio_udp_close(ua);
	myrio_udp_close(ub);
	sp_rounds(&h, 10); /* the closes go out */
	sp_close(&h);
}

/* The stack goes first with a listener, a connection and a UDP socket still in its set:
 * the set is emptied, not left pointing into the freed tables, and can still be destroyed. */
static void stack_destroyed_before_its_set(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:rs_order", NULL), 0);
	struct myrio_ready_set *set, *empty;
	assert_int_equal(myrio_ready_create(h.b, &set), 0);
	assert_int_equal(myrio_ready_create(h.b, &empty), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, 16, NULL, &l), 0);
	assert_int_equal(myrio_ready_add_listener(set, l, MYRIO_READY_IN, l), 0);
	struct myrio_tcp_conn *ac[1], *bc[1];
	accept_n(&h, set, l, ac, bc, 1);
	assert_int_equal(myrio_ready_add_tcp(set, bc[0], MYRIO_READY_IN, bc[0]), 0);
	struct myrio_udp_sock *u, *ua;
	assert_int_equal(myrio_udp_open(h.b, 5000, NULL, &u), 0);
	assert_int_equal(myrio_udp_open(h.a, 5001, NULL, &ua), 0);
	assert_int_equal(myrio_ready_add_udp(set, u, MYRIO_READY_IN, u), 0);
	assert_int_equal(myrio_udp_sendto_copy(ua, "ping", 4, SP_IP_B, 5000), 0);
	assert_int_equal(myrio_tcp_write(ac[0], "data", 4), 4);
	sp_rounds(&h, 10);
	struct myrio_ready_event ev[16];
	assert_int_equal(wait_all(set, ev), 2); /* the datagram and the data, still unread */
	assert_int_equal(ready_listed(set), 2);
	myrio_tcp_close(ac[0]);
	myrio_udp_close(ua);
	sp_close(&h);
	assert_int_equal(ready_listed(set), 0);
	assert_int_equal(wait_all(set, ev), 0);
	myrio_ready_destroy(empty);
	myrio_ready_destroy(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(level_triggered_reports_until_drained),
	    cmocka_unit_test(edge_triggered_once_per_event),
	    cmocka_unit_test(out_after_refused_send),
	    cmocka_unit_test(udp_datagram_and_error),
	    cmocka_unit_test(listener_and_udp_interest_modified),
	    cmocka_unit_test(stack_destroyed_before_its_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
