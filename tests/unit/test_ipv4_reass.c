/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 reassembly: fragments in any order, repeated, overlapping, late, too many at once,
 * too long; the datagram reaches UDP whole and checked, or not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

#define UPORT 7
#define MAXDG 9000

struct frag {
	uint32_t off, len; /* bytes of the IP payload (the UDP datagram) */
};

static uint8_t dg[MAXDG];

/* A UDP datagram of n payload bytes from the peer, pattern from seed, checksum right. */
static uint32_t make_dg(uint32_t n, uint8_t seed)
{
	uint32_t len = 8 + n;
	put_be16(dg, 5555);
	put_be16(dg + 2, UPORT);
	put_be16(dg + 4, (uint16_t)len);
	put_be16(dg + 6, 0);
	for (uint32_t i = 0; i < n; i++)
		dg[8 + i] = (uint8_t)(i * 13 + seed);
	uint16_t c = l4_csum(PEER_IP, STACK_IP, 17, dg, (uint16_t)len);
	put_be16(dg + 6, c ? c : 0xffff);
	return len;
}

/* One fragment of dg as a frame: IP id, MF unless it ends at total; opt bytes of IP
 * options (NOPs, a multiple of 4). */
static void send_frag_proto(struct raw *r, uint8_t proto, uint16_t id, struct frag f,
			    uint32_t total, unsigned opt)
{
	uint8_t fr[2048];
	uint32_t n = build_eth(fr, r->smac, 0x0800);
	uint8_t *ip = fr + n;
	build_ip(ip, proto, PEER_IP, STACK_IP, (uint16_t)(f.len + opt));
	ip[0] = (uint8_t)(0x40 | (20 + opt) / 4);
	memset(ip + 20, 1, opt);
	ip += opt; /* the payload follows the options: shift the view, fields stay put */
	put_be16(ip - opt + 4, id);
	uint8_t *h = ip - opt;
	put_be16(h + 6, (uint16_t)((f.off + f.len < total ? 0x2000 : 0) | f.off / 8));
	put_be16(h + 10, 0);
	put_be16(h + 10, csum_finish(csum_add(0, h, 20 + opt)));
	memcpy(ip + 20, f.off + f.len <= MAXDG ? dg + f.off : dg, f.len); /* far ones: any bytes */
	n += 20 + opt + f.len;
	raw_send(r, fr, n < 60 ? 60 : n);
	raw_poll(r);
}

static void send_frag_opts(struct raw *r, uint16_t id, struct frag f, uint32_t total,
			   unsigned opt)
{
	send_frag_proto(r, 17, id, f, total, opt);
}

static void send_frag(struct raw *r, uint16_t id, struct frag f, uint32_t total)
{
	send_frag_proto(r, 17, id, f, total, 0);
}

static void send_frags(struct raw *r, uint16_t id, const struct frag *f, unsigned nf,
		       uint32_t total)
{
	for (unsigned i = 0; i < nf; i++)
		send_frag(r, id, f[i], total);
}

static struct myrio_udp_sock *open_udp(struct raw *r, const char *name,
				       void (*tweak)(struct myrio_stack_conf *))
{
	assert_int_equal(raw_open(r, name, NULL, tweak, true), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r->s, UPORT, NULL, &u), 0);
	return u;
}

/* The next datagram is the n-byte payload of seed, whole. */
static void expect_dg(struct myrio_udp_sock *u, uint32_t n, uint8_t seed)
{
	uint32_t ip;
	uint16_t port;
	struct myrio_pkt *p = myrio_udp_recv(u, &ip, &port);
	assert_non_null(p);
	assert_int_equal(p->len, n);
	assert_int_equal(ip, PEER_IP);
	assert_int_equal(port, 5555);
	const uint8_t *d = myrio_pkt_data(p);
	for (uint32_t i = 0; i < n; i++)
		if (d[i] != (uint8_t)(i * 13 + seed))
			fail_msg("byte %u of %u differs", i, n);
	myrio_pkt_free(p);
}

static struct myrio_stack_stats stats(struct raw *r)
{
	struct myrio_stack_stats st;
	myrio_stack_stats(r->s, &st);
	return st;
}

static void in_order_and_reversed_with_repeats(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr1", NULL);
	uint32_t total = make_dg(3992, 1); /* 4000 bytes of IP payload */
	const struct frag f[] = {{0, 1480}, {1480, 1480}, {2960, 1040}};
	send_frags(&r, 1, f, 3, total);
	expect_dg(u, 3992, 1);
	const struct frag g[] = {{2960, 1040}, {1480, 1480}, {1480, 1480}, {0, 1480}, {0, 1480}};
	send_frags(&r, 2, g, 5, total);
	expect_dg(u, 3992, 1);
	assert_null(myrio_udp_recv(u, NULL, NULL)); /* the repeat after completion is alone */
	struct myrio_stack_stats st = stats(&r);
	assert_int_equal(st.ip_reassembled, 2);
	assert_int_equal(st.drop_udp_csum, 0);
	raw_close(&r);
}

/* Odd sizes: fragments of 8-byte multiples, a short last one. */
static void odd_sizes(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr2", NULL);
	uint32_t total = make_dg(8993 - 8, 7);
	struct frag f[16];
	unsigned nf = 0;
	for (uint32_t off = 0; off < total; off += 8 * 71)
		f[nf++] = (struct frag){off, total - off < 8 * 71 ? total - off : 8 * 71};
	for (unsigned i = 0; i < nf; i += 2) /* evens first, then odds */
		send_frag(&r, 3, f[i], total);
	for (unsigned i = 1; i < nf; i += 2)
		send_frag(&r, 3, f[i], total);
	expect_dg(u, 8993 - 8, 7);
	raw_close(&r);
}

/* A fragment overlapping part of another (not a repeat) drops the datagram. */
static void overlap_drops_datagram(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr3", NULL);
	uint32_t total = make_dg(3992, 2);
	const struct frag f[] = {{0, 1480}, {1472, 1480}, {2960, 1040}};
	send_frags(&r, 4, f, 3, total);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	const struct frag rest[] = {{1480, 1480}}; /* too late: the datagram is gone */
	send_frags(&r, 4, rest, 1, total);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	struct myrio_stack_stats st = stats(&r);
	assert_true(st.ip_reass_drops >= 1);
	assert_int_equal(st.ip_reassembled, 0);
	/* an end that moves is refused too */
	const struct frag e[] = {{0, 1480}, {1480, 1000}, {2480, 1480}};
	send_frags(&r, 5, e, 2, 2480);
	send_frag(&r, 5, e[2], 3960);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	raw_close(&r);
}

/* Fragments older than reass_timeout_ms are forgotten. */
static void late_fragments_time_out(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr4", NULL);
	uint32_t total = make_dg(2952, 3);
	const struct frag f[] = {{0, 1480}, {1480, 1480}};
	send_frags(&r, 6, f, 1, total);
	raw_advance_ms(&r, 30001);
	send_frags(&r, 6, f + 1, 1, total);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	assert_int_equal(stats(&r).ip_reass_drops, 1);
	send_frags(&r, 6, f, 1, total); /* within the new slot's time: completes */
	expect_dg(u, 2952, 3);
	raw_close(&r);
}

/* More datagrams in progress than slots: the oldest is given up, the others complete. */
static void oldest_gives_way(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr5", NULL);
	uint32_t total = make_dg(2952, 4);
	const struct frag first = {0, 1480}, second = {1480, 1480};
	for (uint16_t id = 10; id < 15; id++) { /* 5 datagrams, 4 slots */
		send_frag(&r, id, first, total);
		raw_advance_ms(&r, 1);
	}
	for (uint16_t id = 11; id < 15; id++) {
		send_frag(&r, id, second, total);
		expect_dg(u, 2952, 4);
	}
	send_frag(&r, 10, second, total); /* the oldest was given up */
	assert_null(myrio_udp_recv(u, NULL, NULL));
	assert_true(stats(&r).ip_reass_drops >= 1);
	raw_close(&r);
}

/* Beyond 65535 bytes, an empty fragment, a non-final one not a multiple of 8: dropped. */
static void impossible_fragments(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr6", NULL);
	make_dg(1000, 5);
	uint64_t before = stats(&r).drop_ip_frag;
	send_frag(&r, 20, (struct frag){65528, 8}, 65536); /* ends at 65536 */
	send_frag(&r, 21, (struct frag){8, 0}, 100);
	send_frag(&r, 22, (struct frag){0, 1001}, 2000);
	assert_int_equal(stats(&r).drop_ip_frag, before + 3);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	raw_close(&r);
}

/* The first fragment's header (with options) heads the datagram: with it, payload that
 * fits behind 20-byte headers would make a datagram longer than 65535 bytes: dropped. */
static void header_makes_it_too_long(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr9", NULL);
	make_dg(1000, 9);
	const uint32_t total = 65535 - 20;
	send_frag_opts(&r, 50, (struct frag){0, 1472}, total, 8);
	for (uint32_t off = 1472; off < total; off += 1480)
		send_frag(&r, 50, (struct frag){off, total - off < 1480 ? total - off : 1480}, total);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	struct myrio_stack_stats st = stats(&r);
	assert_int_equal(st.ip_reassembled, 0);
	assert_int_equal(st.ip_reass_drops, 1);
	assert_int_equal(st.drop_ip_frag, 0);
	raw_close(&r);
}

/* The reassembled datagram's UDP checksum is checked (in software). */
static void bad_checksum_after_reassembly(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr7", NULL);
	uint32_t total = make_dg(2952, 6);
	dg[2000] ^= 0x40;
	const struct frag f[] = {{0, 1480}, {1480, 1480}};
	send_frags(&r, 30, f, 2, total);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	struct myrio_stack_stats st = stats(&r);
	assert_int_equal(st.ip_reassembled, 1);
	assert_int_equal(st.drop_udp_csum, 1);
	raw_close(&r);
}

/* The captured fragments of one datagram put together; returns its IP payload length. */
static uint32_t gather(struct raw *r, uint8_t proto, uint8_t *out)
{
	uint32_t got = 0;
	uint16_t id = 0;
	for (unsigned i = 0; i < r->ncap; i++) {
		const uint8_t *ip = myrio_pkt_data(r->cap[i]) + 14;
		uint16_t tot = get_be16(ip + 2), frag = get_be16(ip + 6);
		assert_int_equal(csum_fold(csum_add(0, ip, 20)), 0xffff);
		assert_int_equal(ip[9], proto);
		if (i == 0)
			id = get_be16(ip + 4);
		assert_int_equal(get_be16(ip + 4), id);
		assert_int_equal((frag & 0x1fff) * 8u, got);
		assert_int_equal(!!(frag & 0x2000), i + 1 < r->ncap);
		assert_true(tot <= 1500);
		memcpy(out + got, ip + 20, tot - 20u);
		got += tot - 20u;
	}
	return got;
}

/* An echo request that came in fragments is answered in fragments: same ID, offsets in
 * 8-byte units, MF on all but the last, together the request with type 0. */
static void echo_reply_in_fragments(void **state)
{
	(void)state;
	struct raw r;
	assert_int_equal(raw_open(&r, "fr10", NULL, NULL, true), 0);
	const uint32_t total = 3008; /* ICMP header + 3000 bytes */
	memset(dg, 0, 8);
	dg[0] = 8; /* echo request */
	put_be16(dg + 4, 0x77);
	for (uint32_t i = 8; i < total; i++)
		dg[i] = (uint8_t)(i * 5);
	put_be16(dg + 2, csum_finish(csum_add(0, dg, total)));
	raw_drop_captured(&r);
	for (uint32_t off = 0; off < total; off += 1480)
		send_frag_proto(&r, 1, 60, (struct frag){off, total - off < 1480 ? total - off : 1480},
				total, 0);
	assert_int_equal(r.ncap, 3);
	static uint8_t back[4096];
	uint32_t got = gather(&r, 1, back);
	assert_int_equal(got, total);
	assert_int_equal(back[0], 0); /* echo reply */
	assert_int_equal(csum_fold(csum_add(0, back, total)), 0xffff);
	assert_memory_equal(back + 4, dg + 4, total - 4);
	struct myrio_stack_stats st = stats(&r);
	assert_int_equal(st.ip_frags_tx, 3);
	assert_int_equal(st.icmp_echo_replies, 1);
	raw_close(&r);
}

/* A copying UDP send longer than a frame goes out in fragments, checksum over the whole. */
static void udp_send_in_fragments(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr11", NULL);
	static uint8_t msg[65508], back[65536];
	for (uint32_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 3 + 1);
	raw_drop_captured(&r);
	assert_int_equal(myrio_udp_sendto_copy(u, msg, 5001, PEER_IP, 9999), 0);
	raw_poll(&r);
	assert_int_equal(r.ncap, 4);
	uint32_t n = gather(&r, 17, back);
	assert_int_equal(n, 8 + 5001);
	assert_int_equal(get_be16(back + 4), 8 + 5001);
	assert_int_equal(get_be16(back + 2), 9999);
	assert_int_equal(l4_csum(STACK_IP, PEER_IP, 17, back, (uint16_t)n), 0);
	assert_memory_equal(back + 8, msg, 5001);
	/* one frame's worth: no fragments */
	raw_drop_captured(&r);
	assert_int_equal(myrio_udp_sendto_copy(u, msg, 1472, PEER_IP, 9999), 0);
	raw_poll(&r);
	assert_int_equal(r.ncap, 1);
	assert_int_equal(get_be16(myrio_pkt_data(r.cap[0]) + 20), 0); /* no MF, no offset */
	assert_int_equal(myrio_udp_sendto_copy(u, msg, 65508, PEER_IP, 9999), -EMSGSIZE);
	assert_int_equal(stats(&r).ip_frags_tx, 4);
	raw_close(&r);
}

static void no_slots(struct myrio_stack_conf *c)
{
	c->reass_slots = 0;
}

static void reassembly_off(void **state)
{
	(void)state;
	struct raw r;
	struct myrio_udp_sock *u = open_udp(&r, "fr8", no_slots);
	uint32_t total = make_dg(2952, 8);
	const struct frag f[] = {{0, 1480}, {1480, 1480}};
	send_frags(&r, 40, f, 2, total);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	assert_int_equal(stats(&r).drop_ip_frag, 2);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_and_reversed_with_repeats),
		cmocka_unit_test(odd_sizes),
		cmocka_unit_test(overlap_drops_datagram),
		cmocka_unit_test(late_fragments_time_out),
		cmocka_unit_test(oldest_gives_way),
		cmocka_unit_test(impossible_fragments),
		cmocka_unit_test(header_makes_it_too_long),
		cmocka_unit_test(bad_checksum_after_reassembly),
		cmocka_unit_test(echo_reply_in_fragments),
		cmocka_unit_test(udp_send_in_fragments),
		cmocka_unit_test(reassembly_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
