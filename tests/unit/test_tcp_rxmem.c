/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive memory against a hostile peer: out-of-order segments and tiny in-order segments
 * nobody reads must not take the port's receive pool from the stack (a new connection and a
 * hole-filling segment still get in), and every buffer comes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

#define RX_POOL 1024 /* the stack port's receive buffers */
#define NCONN 6
#define TINY_IN_ORDER 300 /* one-byte segments per connection, never read */
#define OOO_PER_CONN 256  /* conf.ooo_max_segs: one-byte segments with holes between */

static uint8_t pattern(unsigned conn, uint32_t off)
{
	return (uint8_t)(off * 7u + conn);
}

/* Sends len bytes of connection conn's pattern at offset off from base, without polling. */
static void send_at(struct raw *r, struct peer *p, unsigned conn, uint32_t base, uint32_t off,
		    uint16_t len)
{
	uint8_t d[16];
	for (uint16_t i = 0; i < len; i++)
		d[i] = pattern(conn, off + i);
	p->snd_nxt = base + off;
	peer_send(r, p, F_ACK, d, len);
}

/* The stack's receive pool, found through a byte the peer sends and the test takes back. */
static const struct myrio_pool *rx_pool_of(struct raw *r, struct peer *p)
{
	uint8_t one = 0;
	peer_send_poll(r, p, F_ACK, &one, 1);
	struct myrio_pkt *b = myrio_tcp_recv(p->c);
	assert_non_null(b);
	const struct myrio_pool *pool = b->pool;
	myrio_tcp_release(p->c, b);
	return pool;
}

/* Reads everything in order and checks it is conn's pattern; returns the bytes read. */
static uint32_t read_all(struct myrio_tcp_conn *c, unsigned conn)
{
	uint8_t buf[4096];
	uint32_t off = 0;
	ssize_t n;
	while ((n = myrio_tcp_read(c, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			assert_int_equal(buf[i], pattern(conn, off + (uint32_t)i));
		off += (uint32_t)n;
	}
	return off;
}

static void small_ooo_conf(struct myrio_stack_conf *c)
{
	c->max_tcp_conns = 32;
}

static void hostile_segments_leave_the_pool_usable(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "rxm1", "?rxpool=1024", small_ooo_conf, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 16, NULL, &l), 0);
	struct peer p[NCONN];
	uint32_t base[NCONN];
	for (unsigned i = 0; i < NCONN; i++) {
		peer_connect(&r, &p[i], (uint16_t)(42000 + i), 80, 1000u * i, true);
		assert_non_null(p[i].c);
	}
	const struct myrio_pool *pool = rx_pool_of(&r, &p[0]);
	assert_int_equal(pool->count, RX_POOL);
	for (unsigned i = 0; i < NCONN; i++)
		base[i] = p[i].snd_nxt;

	/* Each connection: tiny in-order segments, then one-byte segments beyond a hole. */
	uint32_t hole = TINY_IN_ORDER;
	for (unsigned i = 0; i < NCONN; i++) {
		for (uint32_t k = 0; k < TINY_IN_ORDER; k++) {
			send_at(&r, &p[i], i, base[i], k, 1);
			if (k % 16 == 15)
				raw_poll(&r);
		}
		for (uint32_t k = 1; k <= OOO_PER_CONN; k++) {
			send_at(&r, &p[i], i, base[i], hole + 2 * k, 1);
			if (k % 16 == 0)
				raw_poll(&r);
		}
		raw_poll(&r);
	}
	struct myrio_stack_stats st = raw_stats(&r);
	/* The pool was never emptied: a reserve stayed free. */
	assert_true(myrio_pool_free_count(pool) > RX_POOL / 16);
	assert_true(st.tcp_ooo_pruned > 0);
	print_message(
	    "rx pool free %u of %u; held %llu, coalesced %llu, pruned %llu, "
	    "pressure %llu, dropped %llu\n",
	    myrio_pool_free_count(pool), pool->count, (unsigned long long)st.tcp_rx_bufs_held,
	    (unsigned long long)st.tcp_rx_coalesced, (unsigned long long)st.tcp_ooo_pruned,
	    (unsigned long long)st.tcp_rx_pressure, (unsigned long long)st.drop_tcp_rx_pressure);

	/* A new connection is still accepted. */
	int accepted = r.ev_count[MYRIO_TCP_EV_ACCEPTED];
	struct peer late;
	peer_connect(&r, &late, 43000, 80, 777, true);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], accepted + 1);
	assert_non_null(late.c);

	/* The hole of every connection fills: acknowledged at least past it. */
	for (unsigned i = 0; i < NCONN; i++) {
		send_at(&r, &p[i], i, base[i], hole, 2);
		raw_poll(&r);
		struct tcpv v;
		assert_true(cap_tcp(&r, 0, &v));
		assert_true(seq_ge(v.ack, base[i] + hole + 2));
	}

	/* Everything acknowledged is there, in order; then every buffer comes home. */
	for (unsigned i = 0; i < NCONN; i++) {
		uint32_t got = read_all(p[i].c, i);
		assert_true(got >= hole + 2);
		myrio_tcp_abort(p[i].c);
	}
	myrio_tcp_abort(late.c);
	raw_poll(&r);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_rx_bufs_held, 0);
	assert_int_equal(myrio_pool_free_count(pool), RX_POOL);
	raw_close(&r);
}

static void a_slow_reader_of_tiny_segments_pins_few_buffers(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "rxm2", "?rxpool=1024", NULL, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 4, NULL, &l), 0);
	struct peer p;
	peer_connect(&r, &p, 42100, 80, 5, true);
	assert_non_null(p.c);
	const struct myrio_pool *pool = rx_pool_of(&r, &p);
	uint32_t base = p.snd_nxt;
	const uint32_t n = 3000; /* three pools' worth if each kept its own buffer */
	for (uint32_t k = 0; k < n; k++) {
		send_at(&r, &p, 0, base, k, 1);
		if (k % 16 == 15)
			raw_poll(&r);
	}
	raw_poll(&r);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, base + n); /* all taken */
	/* A buffer holds some 1900 bytes of payload: two of them, not 3000. */
	assert_true(myrio_pool_free_count(pool) >= RX_POOL - 4);
	assert_int_equal(read_all(p.c, 0), n);
	assert_int_equal(myrio_pool_free_count(pool), RX_POOL);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hostile_segments_leave_the_pool_usable),
	    cmocka_unit_test(a_slow_reader_of_tiny_segments_pins_few_buffers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
