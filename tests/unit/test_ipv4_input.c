/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 and ICMP input: header checks, truncated and inconsistent frames, bad checksums
 * (with and without the receive checksum offload), fragments, echo replies, port
 * unreachable. Every drop must be counted under its reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

static uint32_t build_echo(struct raw *r, uint8_t *f, uint16_t id, uint16_t seq, uint16_t plen)
{
	uint32_t n = build_eth(f, r->smac, 0x0800);
	uint16_t l4 = (uint16_t)(8 + plen);
	n += build_ip(f + n, 1, PEER_IP, STACK_IP, l4);
	uint8_t *m = f + n;
	memset(m, 0, 8);
	m[0] = 8;
	put_be16(m + 4, id);
	put_be16(m + 6, seq);
	for (uint16_t i = 0; i < plen; i++)
		m[8 + i] = (uint8_t)(i * 3);
	put_be16(m + 2, csum_finish(csum_add(0, m, l4)));
	return n + l4;
}

static const uint8_t *cap_proto(struct raw *r, uint8_t proto, uint32_t *len)
{
	for (unsigned j = 0; j < r->ncap; j++) {
		const uint8_t *f = myrio_pkt_data(r->cap[j]);
		if (r->cap[j]->len >= 34 && get_be16(f + 12) == 0x0800 && f[23] == proto) {
			*len = r->cap[j]->len;
			return f;
		}
	}
	return NULL;
}

static void echo_request_gets_reply(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ip1", NULL, NULL, true), 0);
	uint8_t f[1600];
	uint32_t n = build_echo(&r, f, 0x4242, 7, 1000);
	raw_send(&r, f, n);
	raw_poll(&r);
	uint32_t len;
	const uint8_t *e = cap_proto(&r, 1, &len);
	assert_non_null(e);
	assert_memory_equal(e, peer_mac, 6);
	const uint8_t *ip = e + 14;
	assert_int_equal(get_be32(ip + 12), STACK_IP);
	assert_int_equal(get_be32(ip + 16), PEER_IP);
	assert_int_equal(csum_fold(csum_add(0, ip, 20)), 0xffff);
	const uint8_t *m = ip + 20;
	assert_int_equal(m[0], 0);
	assert_int_equal(get_be16(m + 4), 0x4242);
	assert_int_equal(get_be16(m + 6), 7);
	assert_memory_equal(m + 8, f + 14 + 20 + 8, 1000);
	assert_int_equal(csum_fold(csum_add(0, m, 1008)), 0xffff);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.icmp_echo_replies, 1);
	raw_close(&r);
}

#define expect_counter(r, f, n, off) expect_counter_at(r, f, n, off, __LINE__)
static void expect_counter_at(struct raw *r, const uint8_t *f, uint32_t n, size_t off, int line)
{
	struct myrio_stack_stats before = raw_stats(r);
	raw_send(r, f, n);
	raw_poll(r);
	struct myrio_stack_stats after = raw_stats(r);
	uint64_t b, a;
	memcpy(&b, (const uint8_t *)&before + off, 8);
	memcpy(&a, (const uint8_t *)&after + off, 8);
	if (a != b + 1 || r->ncap != 0)
		print_message("expectation at line %d: counter %llu -> %llu, %u frames out\n", line,
			      (unsigned long long)b, (unsigned long long)a, r->ncap);
	assert_int_equal(a, b + 1);
	assert_int_equal(r->ncap, 0); /* and nothing answered */
}

#define COUNTER(name) offsetof(struct myrio_stack_stats, name)

/* Recomputes the IPv4 header checksum of frame g after an edit of its header. */
static void ip_resum(uint8_t *g)
{
	put_be16(g + 24, 0);
	put_be16(g + 24, csum_finish(csum_add(0, g + 14, 20)));
}

static void malformed_ip_is_dropped_and_counted(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ip2", NULL, NULL, true), 0);
	uint8_t f[200];
	uint32_t n = build_echo(&r, f, 1, 1, 20);
	uint8_t g[200];

	/* truncated IP header */
	expect_counter(&r, f, 14 + 10, COUNTER(drop_ip_short));
	/* version 6 in an IPv4 EtherType */
	memcpy(g, f, n);
	g[14] = 0x65;
	expect_counter(&r, g, n, COUNTER(drop_ip_version));
	/* IHL below 5 */
	memcpy(g, f, n);
	g[14] = 0x44;
	expect_counter(&r, g, n, COUNTER(drop_ip_len));
	/* total length beyond the frame */
	memcpy(g, f, n);
	put_be16(g + 16, (uint16_t)(n));
	ip_resum(g);
	expect_counter(&r, g, n, COUNTER(drop_ip_len));
	/* header checksum wrong */
	memcpy(g, f, n);
	g[24] ^= 0x55;
	expect_counter(&r, g, n, COUNTER(drop_ip_hdr_csum));
	/* not our address */
	memcpy(g, f, n);
	put_be32(g + 30, 0x0a000009u);
	ip_resum(g);
	expect_counter(&r, g, n, COUNTER(drop_ip_not_for_us));
	/* a fragment (MF set) whose length is not a multiple of 8: impossible; a last
	 * fragment (offset): taken for reassembly (test_ipv4_reass); nothing answered */
	memcpy(g, f, n);
	put_be16(g + 20, 0x2000);
	ip_resum(g);
	expect_counter(&r, g, n, COUNTER(drop_ip_frag));
	put_be16(g + 20, 0x0010);
	ip_resum(g);
	expect_counter(&r, g, n, COUNTER(ip_frags_rx));
	/* unknown protocol */
	memcpy(g, f, n);
	g[23] = 47;
	ip_resum(g);
	expect_counter(&r, g, n, COUNTER(drop_ip_proto));
	/* ICMP checksum wrong */
	memcpy(g, f, n);
	g[40] ^= 1;
	expect_counter(&r, g, n, COUNTER(drop_icmp));
	/* Ethernet: runt, other EtherType, other MAC */
	struct myrio_pkt *runt = myrio_pkt_alloc(r.pool); /* the port refuses these itself */
	memcpy(myrio_pkt_data(runt), f, 10);
	runt->len = 10;
	eth_input(r.s, runt);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.drop_eth_short, 1);
	memcpy(g, f, n);
	put_be16(g + 12, 0x86dd);
	expect_counter(&r, g, n, COUNTER(drop_eth_type));
	memcpy(g, f, n);
	g[0] ^= 0x40;
	expect_counter(&r, g, n, COUNTER(drop_eth_not_for_us));
	raw_close(&r);
}

static void malformed_tcp_and_udp(struct raw *r)
{
	uint8_t f[200], g[200];
	static const char data[] = "payload!";
	struct tcpf t = {.sport = 1,
			 .dport = 2,
			 .seq = 3,
			 .flags = F_ACK,
			 .data = (const uint8_t *)data,
			 .len = 8};
	uint32_t n = build_tcp(f, &t);
	memcpy(f, r->smac, 6);
	/* bad TCP checksum */
	memcpy(g, f, n);
	g[n - 1] ^= 0x80;
	expect_counter(r, g, n, COUNTER(drop_tcp_csum));
	/* data offset beyond the segment */
	memcpy(g, f, n);
	g[14 + 20 + 12] = 0xf0;
	expect_counter(r, g, n, COUNTER(drop_tcp_bad_off));
	/* data offset below 5 */
	g[14 + 20 + 12] = 0x40;
	expect_counter(r, g, n, COUNTER(drop_tcp_bad_off));
	/* TCP header cut short by the IP length */
	memcpy(g, f, n);
	put_be16(g + 16, 20 + 12);
	ip_resum(g);
	expect_counter(r, g, 14 + 32, COUNTER(drop_tcp_short));
	/* Ethernet padding after the IP packet is fine (and not summed), even when it is
	 * not zero and starts at an odd offset (odd IP length). */
	memcpy(g, f, n);
	memset(g + n, 0xee, 20);
	g[n + 1] = 0x17;
	struct myrio_stack_stats st = raw_stats(r);
	raw_send(r, g, n + 20);
	raw_poll(r);
	struct myrio_stack_stats st2 = raw_stats(r);
	assert_int_equal(st2.drop_tcp_csum, st.drop_tcp_csum);
	assert_int_equal(st2.drop_tcp_no_conn, st.drop_tcp_no_conn + 1); /* reached TCP */
	t.len = 7; /* odd: the padding starts at an odd distance from byte 14 */
	uint32_t n7 = build_tcp(g, &t);
	memcpy(g, r->smac, 6);
	for (unsigned i = n7; i < n7 + 25; i++)
		g[i] = (uint8_t)(i * 13 + 1);
	raw_send(r, g, n7 + 25);
	raw_poll(r);
	st = raw_stats(r);
	assert_int_equal(st.drop_tcp_csum, st2.drop_tcp_csum);
	assert_int_equal(st.drop_tcp_no_conn, st2.drop_tcp_no_conn + 1);
	/* ...and a wrong checksum behind padding is still caught. */
	g[n7 - 1] ^= 0x40;
	raw_send(r, g, n7 + 25);
	raw_poll(r);
	st2 = raw_stats(r);
	assert_int_equal(st2.drop_tcp_csum, st.drop_tcp_csum + 1);

	/* UDP: length field beyond the IP payload, below 8, bad checksum */
	uint32_t m = build_eth(f, r->smac, 0x0800);
	m += build_ip(f + m, 17, PEER_IP, STACK_IP, 16);
	uint8_t *uh = f + m;
	put_be16(uh, 9);
	put_be16(uh + 2, 9);
	put_be16(uh + 4, 16);
	put_be16(uh + 6, 0);
	memcpy(uh + 8, "12345678", 8);
	put_be16(uh + 6, l4_csum(PEER_IP, STACK_IP, 17, uh, 16));
	m += 16;
	memcpy(g, f, m);
	put_be16(g + 14 + 20 + 4, 17);
	expect_counter(r, g, m, COUNTER(drop_udp_short));
	put_be16(g + 14 + 20 + 4, 7);
	expect_counter(r, g, m, COUNTER(drop_udp_short));
	memcpy(g, f, m);
	g[m - 1] ^= 1;
	expect_counter(r, g, m, COUNTER(drop_udp_csum));
	/* UDP header cut short by the IP length */
	memcpy(g, f, m);
	put_be16(g + 16, 20 + 4);
	ip_resum(g);
	expect_counter(r, g, 60, COUNTER(drop_udp_short));
}

static void malformed_l4_dropped_with_offload(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ip3", NULL, NULL, true), 0);
	malformed_tcp_and_udp(&r);
	raw_close(&r);
}

static void malformed_l4_dropped_without_offload(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ip4", "?nocsum", NULL, true), 0);
	malformed_tcp_and_udp(&r);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_true(st.tcp_csum_sw > 0);
	raw_close(&r);
}

static void udp_to_closed_port_gets_port_unreachable(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ip5", NULL, NULL, true), 0);
	uint8_t f[100] = {0};
	uint32_t m = build_eth(f, r.smac, 0x0800);
	m += build_ip(f + m, 17, PEER_IP, STACK_IP, 12);
	uint8_t *uh = f + m;
	put_be16(uh, 5555);
	put_be16(uh + 2, 6666);
	put_be16(uh + 4, 12);
	put_be16(uh + 6, 0); /* no checksum: allowed */
	memcpy(uh + 8, "ping", 4);
	m += 12;
	raw_send(&r, f, m < 60 ? 60 : m);
	raw_poll(&r);
	uint32_t len;
	const uint8_t *e = cap_proto(&r, 1, &len);
	assert_non_null(e);
	const uint8_t *icmp = e + 34;
	assert_int_equal(icmp[0], 3);
	assert_int_equal(icmp[1], 3);
	/* quotes the offending IP header and 8 bytes of UDP */
	assert_memory_equal(icmp + 8, f + 14, 28);
	uint16_t ilen = (uint16_t)(get_be16(e + 16) - 20);
	assert_int_equal(csum_fold(csum_add(0, icmp, ilen)), 0xffff);
	raw_close(&r);
}

/* RFC 1122 §3.2.1.3: datagrams from sources that cannot be a host (0/8, loopback,
 * multicast, broadcast: limited or our subnet's, our own address) are dropped unanswered. */
static void martian_sources_are_dropped(void **state)
{
	static const uint32_t bad[] = {0x00000000u, 0x00000005u, 0x7f000001u, 0xe0000001u,
				       0xffffffffu, 0x0a0000ffu, STACK_IP};
	struct raw r;
	assert_int_equal(raw_open(&r, "ip9", NULL, NULL, true), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t f[128];
		uint32_t n = build_echo(&r, f, 0x4242, (uint16_t)i, 20);
		uint8_t *ip = f + 14;
		put_be32(ip + 12, bad[i]);
		put_be16(ip + 10, 0);
		put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
		raw_send(&r, f, n < 60 ? 60 : n);
		raw_poll(&r);
		uint32_t len;
		assert_null(cap_proto(&r, 1, &len));
	}
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.drop_ip_not_for_us, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(st.icmp_rx, 0);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(echo_request_gets_reply),
	    cmocka_unit_test(malformed_ip_is_dropped_and_counted),
	    cmocka_unit_test(malformed_l4_dropped_with_offload),
	    cmocka_unit_test(malformed_l4_dropped_without_offload),
	    cmocka_unit_test(udp_to_closed_port_gets_port_unreachable),
	    cmocka_unit_test(martian_sources_are_dropped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
