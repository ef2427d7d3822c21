/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP between two stacks over the pair port: datagrams of every size arrive intact, in
 * both directions, with and without checksum offload; connected sockets filter; full
 * queues drop and count. */
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
#include "test_pattern.h"

static void datagrams(const char *link, const char *opts)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, link, &(struct sp_opts){.opts_a = opts, .opts_b = opts}), 0);
	struct myrio_udp_sock *ua, *ub;
	assert_int_equal(myrio_udp_open(h.a, 7000, NULL, &ua), 0);
	assert_int_equal(myrio_udp_open(h.b, 0, NULL, &ub), 0); /* ephemeral */
	uint16_t pb = myrio_udp_port(ub);
	assert_true(pb >= 49152);
	uint64_t off = 0, roff = 0;
	unsigned sent = 0, got = 0;
	/* sizes 1..1472 (the most that fits a 1500 MTU), 8 per round */
	for (unsigned size = 1; size <= 1472; size += 1) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(h.a);
		assert_non_null(p);
		uint8_t *d = myrio_pkt_data(p);
		for (unsigned i = 0; i < size; i++)
			d[i] = test_pattern(off + i);
		p->len = size;
		assert_int_equal(myrio_udp_sendto(ua, p, SP_IP_B, pb), 0);
		off += size;
		sent++;
		if (size % 8 == 0 || size == 1472) {
			sp_rounds(&h, 3);
			struct myrio_pkt *q;
			uint32_t ip;
			uint16_t port;
			while ((q = myrio_udp_recv(ub, &ip, &port)) != NULL) {
				assert_int_equal(ip, SP_IP_A);
				assert_int_equal(port, 7000);
				const uint8_t *b = myrio_pkt_data(q);
				for (unsigned i = 0; i < q->len; i++)
					assert_int_equal(b[i], test_pattern(roff + i));
				roff += q->len;
				got++;
				/* echo it back, zero copy from B's own pool */
				struct myrio_pkt *e = myrio_stack_pkt_alloc(h.b);
				memcpy(myrio_pkt_data(e), b, q->len);
				e->len = q->len;
				myrio_pkt_free(q);
				assert_int_equal(myrio_udp_sendto(ub, e, ip, port), 0);
			}
		}
	}
	sp_rounds(&h, 4);
	assert_int_equal(got, sent);
	assert_int_equal(roff, off);
	unsigned echoed = 0;
	uint64_t eoff = 0;
	struct myrio_pkt *q;
	while ((q = myrio_udp_recv(ua, NULL, NULL)) != NULL) {
		const uint8_t *b = myrio_pkt_data(q);
		for (unsigned i = 0; i < q->len; i++)
			assert_int_equal(b[i], test_pattern(eoff + i));
		eoff += q->len;
		echoed++;
		myrio_pkt_free(q);
	}
	/* A's queue holds 256: the rest were dropped and counted. */
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_int_equal(echoed, 256);
	assert_int_equal(sa.drop_udp_queue_full, sent - 256);
	assert_int_equal(sa.drop_udp_csum, 0);
	myrio_udp_close(ua);
	myrio_udp_close(ub);
	sp_close(&h);
}

static void datagrams_with_offload(void **state)
{
	datagrams("pair:udp1", NULL);
}

static void datagrams_without_offload(void **state)
{
	datagrams("pair:udp2", "?nocsum");
}

static void connected_socket_filters_and_too_big_is_refused(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:udp3", NULL), 0);
	struct myrio_udp_sock *ua, *ua2, *ub;
	assert_int_equal(myrio_udp_open(h.a, 1000, NULL, &ua), 0);
	assert_int_equal(myrio_udp_open(h.a, 1001, NULL, &ua2), 0);
	assert_int_equal(myrio_udp_open(h.a, 1000, NULL, &ub), -EADDRINUSE);
	assert_int_equal(myrio_udp_open(h.b, 2000, NULL, &ub), 0);
	assert_int_equal(myrio_udp_connect(ub, SP_IP_A, 1000), 0);
	struct myrio_pkt *p = myrio_stack_pkt_alloc(h.a);
	p->len = 1473;
	assert_int_equal(myrio_udp_sendto(ua, p, SP_IP_B, 2000), -EMSGSIZE);
	p->len = 4;
	memcpy(myrio_pkt_data(p), "good", 4);
	assert_int_equal(myrio_udp_sendto(ua, p, SP_IP_B, 2000), 0);
	p = myrio_stack_pkt_alloc(h.a);
	p->len = 4;
	memcpy(myrio_pkt_data(p), "evil", 4);
	assert_int_equal(myrio_udp_sendto(ua2, p, SP_IP_B, 2000), 0);
	sp_rounds(&h, 4);
	struct myrio_pkt *q = myrio_udp_recv(ub, NULL, NULL);
	assert_non_null(q);
	assert_memory_equal(myrio_pkt_data(q), "good", 4);
	myrio_pkt_free(q);
	assert_null(myrio_udp_recv(ub, NULL, NULL));
	assert_true(h.nudp >= 1);
	/* send() on the connected socket */
	p = myrio_stack_pkt_alloc(h.b);
	p->len = 3;
	memcpy(myrio_pkt_data(p), "ack", 3);
	assert_int_equal(myrio_udp_send(ub, p), 0);
	sp_rounds(&h, 4);
	q = myrio_udp_recv(ua, NULL, NULL);
	assert_non_null(q);
	assert_memory_equal(myrio_pkt_data(q), "ack", 3);
	myrio_pkt_free(q);
	myrio_udp_close(ua);
	myrio_udp_close(ua2);
	myrio_udp_close(ub);
	sp_close(&h);
}

/* Two sockets on one port (myrio_udp_open_shared, as SO_REUSEADDR; a socket that does not
 * share is refused the port): a datagram from the source one is connected to goes to it,
 * any other to the unconnected one, whatever the order they were opened in. */
static void shared_port_goes_to_the_connected_socket(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:udp4", NULL), 0);
	struct myrio_udp_sock *open_sock, *conn_sock, *refused, *a1, *a2;
	assert_int_equal(myrio_udp_open_shared(h.b, 3000, NULL, &open_sock), 0);
	assert_int_equal(myrio_udp_open(h.b, 3000, NULL, &refused), -EADDRINUSE);
	assert_int_equal(myrio_udp_open_shared(h.b, 3000, NULL, &conn_sock), 0);
	assert_int_equal(myrio_udp_connect(conn_sock, SP_IP_A, 1000), 0);
	assert_int_equal(myrio_udp_open(h.a, 1000, NULL, &a1), 0);
	assert_int_equal(myrio_udp_open(h.a, 1001, NULL, &a2), 0);
	assert_int_equal(myrio_udp_sendto_copy(a1, "one", 3, SP_IP_B, 3000), 0);
	assert_int_equal(myrio_udp_sendto_copy(a2, "two", 3, SP_IP_B, 3000), 0);
	sp_rounds(&h, 4);
	struct myrio_pkt *q = myrio_udp_recv(conn_sock, NULL, NULL);
	assert_non_null(q);
	assert_memory_equal(myrio_pkt_data(q), "one", 3);
	myrio_pkt_free(q);
	assert_null(myrio_udp_recv(conn_sock, NULL, NULL));
	q = myrio_udp_recv(open_sock, NULL, NULL);
	assert_non_null(q);
	assert_memory_equal(myrio_pkt_data(q), "two", 3);
	myrio_pkt_free(q);
	assert_null(myrio_udp_recv(open_sock, NULL, NULL));
	myrio_udp_close(open_sock);
	myrio_udp_close(conn_sock);
	myrio_udp_close(a1);
	myrio_udp_close(a2);
	sp_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(datagrams_with_offload),
	    cmocka_unit_test(datagrams_without_offload),
	    cmocka_unit_test(connected_socket_filters_and_too_big_is_refused),
	    cmocka_unit_test(shared_port_goes_to_the_connected_socket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
