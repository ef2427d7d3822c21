/* SPDX-License-Identifier: BSD-3-Clause */
/* IGMP (RFC 2236, RFC 3376) and UDP multicast in tcp_lite: messages checked against bytes
 * worked out by hand from the RFCs' layouts, hostile messages dropped and counted, and the
 * host's behaviour against a querier crafted byte by byte on a pair link: reports on join
 * and their repetition, leaves, answers to v1/v2/v3 queries within Max Resp, report
 * suppression in v2 mode, UDP sockets that join, share a port and send to a group. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/igmp.h"
#include "tcp_lite/stack.h"

#define GROUP 0xef010203u  /* 239.1.2.3 */
#define GROUP2 0xef818182u /* 239.129.129.130: the MAC drops bit 23 */

/* ---- the wire format ---- */

static void mac_mapping_keeps_the_low_23_bits(void **state)
{
	uint8_t m[6];
	ipv4_mcast_mac(GROUP, m);
	assert_memory_equal(m, ((uint8_t[]){0x01, 0x00, 0x5e, 0x01, 0x02, 0x03}), 6);
	ipv4_mcast_mac(GROUP2, m);
	assert_memory_equal(m, ((uint8_t[]){0x01, 0x00, 0x5e, 0x01, 0x81, 0x82}), 6);
	ipv4_mcast_mac(IGMP_ALL_HOSTS, m);
	assert_memory_equal(m, ((uint8_t[]){0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}), 6);
}

/* The checksums worked out by hand: the 16-bit words summed, folded, inverted. */
static void v2_messages_as_rfc_2236_lays_them_out(void **state)
{
	uint8_t m[8];
	igmp_build_v2(m, IGMP_V2_REPORT, GROUP); /* 1600+ef01+0203 = 0705 (folded), ~ = f8fa */
	assert_memory_equal(m, ((uint8_t[]){0x16, 0x00, 0xf8, 0xfa, 0xef, 0x01, 0x02, 0x03}), 8);
	igmp_build_v2(m, IGMP_V2_LEAVE, GROUP); /* 1700+ef01+0203 = 0805, ~ = f7fa */
	assert_memory_equal(m, ((uint8_t[]){0x17, 0x00, 0xf7, 0xfa, 0xef, 0x01, 0x02, 0x03}), 8);
	struct igmp_msg q;
	assert_int_equal(igmp_parse(m, 8, &q), 0);
	assert_int_equal(q.type, IGMP_V2_LEAVE);
	assert_int_equal(q.group, GROUP);
}

static void v3_report_as_rfc_3376_lays_it_out(void **state)
{
	uint8_t m[32];
	uint32_t g = GROUP;
	/* 2200 + 0001 + 0400 + ef01 + 0203 = 1706 (folded), ~ = e8f9 */
	assert_int_equal(igmp_build_v3_report(m, IGMP_CHANGE_TO_EXCLUDE, &g, 1), 16);
	static const uint8_t want[16] = {0x22, 0x00, 0xe8, 0xf9, 0x00, 0x00, 0x00, 0x01,
					 0x04, 0x00, 0x00, 0x00, 0xef, 0x01, 0x02, 0x03};
	assert_memory_equal(m, want, 16);
	struct igmp_msg r;
	assert_int_equal(igmp_parse(m, 16, &r), 0);
	assert_int_equal(r.type, IGMP_V3_REPORT);
}

static void query_versions_by_length_and_max_resp(void **state)
{
	struct igmp_msg q;
	/* v1: 8 bytes, Max Resp 0 (1100 -> ~ eeff): 10 s (RFC 2236 §4) */
	static const uint8_t v1[8] = {0x11, 0x00, 0xee, 0xff, 0, 0, 0, 0};
	assert_int_equal(igmp_parse(v1, 8, &q), 0);
	assert_int_equal(q.query_version, 1);
	assert_int_equal(q.max_resp_ms, 10000);
	/* v2: Max Resp 100 tenths (1164 -> ~ ee9b) */
	static const uint8_t v2[8] = {0x11, 0x64, 0xee, 0x9b, 0, 0, 0, 0};
	assert_int_equal(igmp_parse(v2, 8, &q), 0);
	assert_int_equal(q.query_version, 2);
	assert_int_equal(q.max_resp_ms, 10000);
	/* v3: 12 bytes, QRV 2, QQIC 125 (1164 + 027d = 13e1 -> ~ ec1e) */
	static const uint8_t v3[12] = {0x11, 0x64, 0xec, 0x1e, 0, 0, 0, 0, 0x02, 0x7d, 0, 0};
	assert_int_equal(igmp_parse(v3, 12, &q), 0);
	assert_int_equal(q.query_version, 3);
	assert_int_equal(q.max_resp_ms, 10000);
	assert_int_equal(q.robustness, 2);
	assert_int_equal(q.nsrc, 0);
	/* RFC 3376 §4.1.1: exponent 0, mantissa 0 -> 0x10 << 3 = 128 tenths; the largest,
	 * 0xff -> 0x1f << 10 = 31744 tenths */
	assert_int_equal(igmp_v3_code_ms(0x80), 12800);
	assert_int_equal(igmp_v3_code_ms(0xff), 3174400);
	assert_int_equal(igmp_v3_code_ms(127), 12700);
}

static void fix_csum(uint8_t *m, uint32_t len)
{
	put_be16(m + 2, 0);
	put_be16(m + 2, csum_finish(csum_add(0, m, len)));
}

static void hostile_messages_refused(void **state)
{
	struct igmp_msg q;
	uint8_t m[64];
	memset(m, 0, sizeof(m));
	m[0] = IGMP_QUERY;
	fix_csum(m, 8);
	assert_int_equal(igmp_parse(m, 7, &q), IGMP_BAD_SHORT);
	m[3] ^= 1;
	assert_int_equal(igmp_parse(m, 8, &q), IGMP_BAD_CSUM);
	fix_csum(m, 10); /* RFC 3376 §7.1: a 10-byte query is ignored */
	assert_int_equal(igmp_parse(m, 10, &q), IGMP_BAD_LEN);
	put_be16(m + 10, 0xffff); /* 65535 sources in a 12-byte query */
	fix_csum(m, 12);
	assert_int_equal(igmp_parse(m, 12, &q), IGMP_BAD_LEN);
	put_be16(m + 10, 1); /* one source, 4 bytes short */
	fix_csum(m, 12);
	assert_int_equal(igmp_parse(m, 12, &q), IGMP_BAD_LEN);
	fix_csum(m, 16);
	assert_int_equal(igmp_parse(m, 16, &q), 0);
	/* v3 reports: a record of 65535 sources, a record of 255 aux words, 65535 records */
	memset(m, 0, sizeof(m));
	m[0] = IGMP_V3_REPORT;
	put_be16(m + 6, 1);
	m[8] = IGMP_MODE_IS_EXCLUDE;
	put_be16(m + 10, 0xffff);
	fix_csum(m, 64);
	assert_int_equal(igmp_parse(m, 64, &q), IGMP_BAD_LEN);
	put_be16(m + 10, 0);
	m[9] = 0xff;
	fix_csum(m, 64);
	assert_int_equal(igmp_parse(m, 64, &q), IGMP_BAD_LEN);
	m[9] = 0;
	put_be16(m + 6, 0xffff);
	fix_csum(m, 64);
	assert_int_equal(igmp_parse(m, 64, &q), IGMP_BAD_LEN);
	m[0] = 0x13; /* a DVMRP-style type no host takes */
	put_be16(m + 6, 0);
	fix_csum(m, 8);
	assert_int_equal(igmp_parse(m, 8, &q), IGMP_BAD_TYPE);
}

/* ---- the host against a crafted querier ---- */

struct igmp_seen {
	const uint8_t *eth, *ip, *msg;
	uint32_t len; /* IGMP bytes */
};

/* The n-th IGMP frame the stack sent in the last poll. */
static bool igmp_sent(struct raw *r, unsigned n, struct igmp_seen *out)
{
	for (unsigned j = 0; j < r->ncap; j++) {
		const uint8_t *f = myrio_pkt_data(r->cap[j]);
		if (r->cap[j]->len < 34 || get_be16(f + 12) != 0x0800 || f[23] != IPPROTO_IGMP_)
			continue;
		if (n--)
			continue;
		out->eth = f;
		out->ip = f + 14;
		unsigned ihl = (out->ip[0] & 15) * 4u;
		out->msg = out->ip + ihl;
		out->len = get_be16(out->ip + 2) - ihl;
		return true;
	}
	return false;
}

static unsigned igmp_count(struct raw *r)
{
	struct igmp_seen x;
	unsigned n = 0;
	while (igmp_sent(r, n, &x))
		n++;
	return n;
}

/* What every IGMP message of ours carries: TTL 1, Router Alert, sums right, the
 * destination's group MAC. */
static void check_envelope(const struct igmp_seen *x, uint32_t dst)
{
	uint8_t mac[6];
	ipv4_mcast_mac(dst, mac);
	assert_memory_equal(x->eth, mac, 6);
	assert_int_equal(x->ip[0], 0x46);
	assert_int_equal(x->ip[8], 1);
	assert_memory_equal(x->ip + 20, ((uint8_t[]){0x94, 0x04, 0x00, 0x00}), 4);
	assert_int_equal(csum_fold(csum_add(0, x->ip, 24)), 0xffff);
	assert_int_equal(get_be32(x->ip + 16), dst);
	assert_int_equal(csum_fold(csum_add(0, x->msg, x->len)), 0xffff);
}

/* Sends an IGMP message from the querier to dst. */
static void send_igmp(struct raw *r, uint32_t dst, const uint8_t *msg, uint32_t len)
{
	uint8_t f[128], mac[6];
	ipv4_mcast_mac(dst, mac);
	uint32_t n = build_eth(f, mac, 0x0800);
	n += build_ip(f + n, IPPROTO_IGMP_, PEER_IP, dst, (uint16_t)len);
	memcpy(f + n, msg, len);
	n += len;
	if (n < 60)
		memset(f + n, 0, 60 - n);
	raw_send(r, f, n < 60 ? 60 : n);
}

static void send_query(struct raw *r, unsigned version, uint32_t group, uint8_t max_resp)
{
	uint8_t m[12] = {IGMP_QUERY, version == 1 ? 0 : max_resp};
	put_be32(m + 4, group);
	uint32_t len = version == 3 ? 12 : 8;
	if (version == 3)
		m[8] = 2;
	fix_csum(m, len);
	send_igmp(r, group ? group : IGMP_ALL_HOSTS, m, len);
}

/* Polls every 10 ms for up to ms; returns the IGMP messages seen, the first in *first. */
static unsigned run_ms(struct raw *r, unsigned ms, struct igmp_seen *first, uint8_t *copy)
{
	unsigned n = 0;
	for (unsigned t = 0; t < ms; t += 10) {
		raw_wait_ms(r, 10);
		struct igmp_seen x;
		for (unsigned k = 0; igmp_sent(r, k, &x); k++) {
			if (n++ == 0 && copy) {
				memcpy(copy, x.eth, 14 + 24 + x.len);
				first->eth = copy;
				first->ip = copy + 14;
				first->msg = copy + 38;
				first->len = x.len;
			}
		}
	}
	return n;
}

/* A stack on link name with a socket in GROUP. */
static struct myrio_udp_sock *member(struct raw *r, const char *name)
{
	struct myrio_udp_sock *u;
	assert_int_equal(raw_open(r, name, NULL, NULL, true), 0);
	assert_int_equal(myrio_udp_open(r->s, 5000, NULL, &u), 0);
	assert_int_equal(myrio_udp_join(u, GROUP), 0);
	return u;
}

static void join_reports_v3_and_repeats_once(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp1");
	raw_poll(&r);
	struct igmp_seen x;
	assert_true(igmp_sent(&r, 0, &x));
	check_envelope(&x, IGMP_V3_ROUTERS);
	assert_int_equal(x.ip[1], 0xc0);
	assert_int_equal(x.len, 16);
	assert_int_equal(x.msg[0], IGMP_V3_REPORT);
	assert_int_equal(x.msg[8], IGMP_CHANGE_TO_EXCLUDE);
	assert_int_equal(get_be32(x.msg + 12), GROUP);
	/* robustness 2: one more within the 1 s unsolicited report interval, then quiet */
	uint8_t copy[128];
	assert_int_equal(run_ms(&r, 1000, &x, copy), 1);
	assert_int_equal(x.msg[8], IGMP_CHANGE_TO_EXCLUDE);
	assert_int_equal(run_ms(&r, 5000, &x, NULL), 0);
	/* leave: CHANGE_TO_INCLUDE {}, repeated once */
	assert_int_equal(myrio_udp_leave(u, GROUP), 0);
	raw_poll(&r);
	assert_true(igmp_sent(&r, 0, &x));
	check_envelope(&x, IGMP_V3_ROUTERS);
	assert_int_equal(x.msg[8], IGMP_CHANGE_TO_INCLUDE);
	assert_int_equal(run_ms(&r, 1000, &x, copy), 1);
	assert_int_equal(x.msg[8], IGMP_CHANGE_TO_INCLUDE);
	assert_int_equal(run_ms(&r, 3000, &x, NULL), 0);
	assert_int_equal(myrio_udp_leave(u, GROUP), -EADDRNOTAVAIL);
	myrio_udp_close(u);
	raw_close(&r);
}

static void v3_queries_answered_within_max_resp(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp2");
	assert_int_equal(myrio_udp_join(u, GROUP2), 0);
	run_ms(&r, 2000, NULL, NULL); /* the unsolicited reports */
	/* general query, Max Resp 1 s: one report listing both groups, within the second */
	send_query(&r, 3, 0, 10);
	struct igmp_seen x;
	uint8_t copy[128];
	assert_int_equal(run_ms(&r, 1010, &x, copy), 1);
	check_envelope(&x, IGMP_V3_ROUTERS);
	assert_int_equal(get_be16(x.msg + 6), 2);
	assert_int_equal(x.msg[8], IGMP_MODE_IS_EXCLUDE);
	assert_int_equal(x.msg[16], IGMP_MODE_IS_EXCLUDE);
	uint32_t a = get_be32(x.msg + 12), b = get_be32(x.msg + 20);
	assert_true((a == GROUP && b == GROUP2) || (a == GROUP2 && b == GROUP));
	/* a group's query, to the group: that group alone */
	send_query(&r, 3, GROUP2, 5);
	assert_int_equal(run_ms(&r, 510, &x, copy), 1);
	assert_int_equal(get_be16(x.msg + 6), 1);
	assert_int_equal(get_be32(x.msg + 12), GROUP2);
	/* a query for a group not joined: nothing */
	send_query(&r, 3, 0xef090909u, 5);
	assert_int_equal(run_ms(&r, 1000, &x, NULL), 0);
	assert_int_equal(raw_stats(&r).igmp_queries_rx, 2); /* the last never reached IGMP */
	myrio_udp_close(u);
	raw_close(&r);
}

static void v2_querier_switches_to_v2_with_suppression_and_leave(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp3");
	run_ms(&r, 2000, NULL, NULL);
	/* a v2 general query, Max Resp 2 s: a v2 report to the group within 2 s */
	send_query(&r, 2, 0, 20);
	struct igmp_seen x;
	uint8_t copy[128];
	assert_int_equal(run_ms(&r, 2010, &x, copy), 1);
	check_envelope(&x, GROUP);
	assert_int_equal(x.len, 8);
	assert_memory_equal(x.msg, ((uint8_t[]){0x16, 0x00, 0xf8, 0xfa, 0xef, 0x01, 0x02, 0x03}),
			    8);
	/* another member answers first: ours is suppressed (RFC 2236 §3) */
	send_query(&r, 2, 0, 100);
	raw_poll(&r);
	uint8_t rep[8];
	igmp_build_v2(rep, IGMP_V2_REPORT, GROUP);
	send_igmp(&r, GROUP, rep, 8);
	raw_poll(&r);
	assert_int_equal(run_ms(&r, 10010, &x, NULL), 0);
	assert_int_equal(raw_stats(&r).igmp_reports_suppressed, 1);
	/* v3 queries are answered as v2 while the v2 querier is remembered */
	send_query(&r, 3, 0, 10);
	assert_int_equal(run_ms(&r, 1010, &x, copy), 1);
	assert_int_equal(x.msg[0], IGMP_V2_REPORT);
	/* ours was the last report: the leave goes to all routers */
	myrio_udp_close(u);
	raw_poll(&r);
	assert_true(igmp_sent(&r, 0, &x));
	check_envelope(&x, IGMP_ALL_ROUTERS);
	assert_memory_equal(x.msg, ((uint8_t[]){0x17, 0x00, 0xf7, 0xfa, 0xef, 0x01, 0x02, 0x03}),
			    8);
	assert_int_equal(run_ms(&r, 3000, &x, NULL), 0); /* v2 leaves once */
	raw_close(&r);
}

static void v1_querier_gets_v1_reports_and_no_leave(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp4");
	run_ms(&r, 2000, NULL, NULL);
	send_query(&r, 1, 0, 0);
	struct igmp_seen x;
	uint8_t copy[128];
	assert_int_equal(run_ms(&r, 10010, &x, copy), 1); /* within 10 s */
	check_envelope(&x, GROUP);
	assert_int_equal(x.msg[0], IGMP_V1_REPORT);
	myrio_udp_close(u);
	raw_poll(&r);
	assert_int_equal(igmp_count(&r), 0);
	raw_close(&r);
}

/* A snooping bridge's querier speaks from 0.0.0.0 (RFC 4541 §2.1.1; Linux's bridge by
 * default): its queries are answered, while other datagrams from 0.0.0.0 stay martians. */
static void querier_without_address_answered(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp8");
	run_ms(&r, 2000, NULL, NULL);
	uint8_t q[8] = {IGMP_QUERY, 10}, f[64], mac[6];
	fix_csum(q, 8);
	ipv4_mcast_mac(IGMP_ALL_HOSTS, mac);
	uint32_t n = build_eth(f, mac, 0x0800);
	n += build_ip(f + n, IPPROTO_IGMP_, 0, IGMP_ALL_HOSTS, 8);
	memcpy(f + n, q, 8);
	memset(f + n + 8, 0, 60 - n - 8);
	raw_send(&r, f, 60);
	struct igmp_seen x;
	uint8_t copy[128];
	assert_int_equal(run_ms(&r, 1010, &x, copy), 1);
	assert_int_equal(x.msg[0], IGMP_V2_REPORT);
	assert_int_equal(raw_stats(&r).igmp_queries_rx, 1);
	uint64_t martians = raw_stats(&r).drop_ip_not_for_us;
	f[14 + 9] = 17; /* the same from 0.0.0.0 as UDP: dropped */
	put_be16(f + 14 + 10, 0);
	put_be16(f + 14 + 10, csum_finish(csum_add(0, f + 14, 20)));
	raw_send(&r, f, 60);
	raw_poll(&r);
	assert_int_equal(raw_stats(&r).drop_ip_not_for_us, martians + 1);
	myrio_udp_close(u);
	raw_close(&r);
}

static void hostile_input_dropped_and_counted(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp5");
	run_ms(&r, 2000, NULL, NULL);
	uint8_t m[64] = {IGMP_QUERY, 10};
	send_igmp(&r, IGMP_ALL_HOSTS, m, 4); /* short */
	fix_csum(m, 8);
	m[2] ^= 0x40;
	send_igmp(&r, IGMP_ALL_HOSTS, m, 8); /* bad checksum */
	put_be16(m + 10, 0xffff);
	fix_csum(m, 12);
	send_igmp(&r, IGMP_ALL_HOSTS, m, 12); /* 65535 sources in 12 bytes */
	memset(m, 0, sizeof(m));
	m[0] = IGMP_V3_REPORT;
	put_be16(m + 6, 1);
	put_be16(m + 10, 0x4000);
	fix_csum(m, 16);
	send_igmp(&r, IGMP_ALL_HOSTS, m, 16); /* a record of 16384 sources in 8 bytes */
	memset(m, 0, sizeof(m));
	m[0] = 0x99;
	fix_csum(m, 8);
	send_igmp(&r, IGMP_ALL_HOSTS, m, 8);
	memset(m, 0, sizeof(m));
	m[0] = IGMP_QUERY;
	m[1] = 10;
	fix_csum(m, 8);
	send_igmp(&r, GROUP, m, 8); /* a general query sent to a group */
	raw_poll(&r);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.igmp_rx, 6);
	assert_int_equal(st.drop_igmp_short, 1);
	assert_int_equal(st.drop_igmp_csum, 1);
	assert_int_equal(st.drop_igmp_len, 2);
	assert_int_equal(st.drop_igmp_type, 1);
	assert_int_equal(st.drop_igmp_bad_dst, 1);
	assert_int_equal(run_ms(&r, 2000, NULL, NULL), 0); /* nothing answered */
	myrio_udp_close(u);
	raw_close(&r);
}

/* ---- UDP sockets in groups ---- */

static void send_udp(struct raw *r, uint32_t dst, uint16_t dport, const char *text)
{
	uint8_t f[256], mac[6];
	ipv4_mcast_mac(dst, mac);
	uint16_t plen = (uint16_t)strlen(text), l4 = (uint16_t)(8 + plen);
	uint32_t n = build_eth(f, ipv4_is_multicast(dst) ? mac : r->smac, 0x0800);
	n += build_ip(f + n, 17, PEER_IP, dst, l4);
	uint8_t *uh = f + n;
	put_be16(uh, 7000);
	put_be16(uh + 2, dport);
	put_be16(uh + 4, l4);
	put_be16(uh + 6, 0);
	memcpy(uh + 8, text, plen);
	put_be16(uh + 6, l4_csum(PEER_IP, dst, 17, uh, l4));
	n += l4;
	if (n < 60)
		memset(f + n, 0, 60 - n);
	raw_send(r, f, n < 60 ? 60 : n);
}

static bool got(struct myrio_udp_sock *u, const char *text)
{
	uint32_t ip;
	struct myrio_pkt *p = myrio_udp_recv(u, &ip, NULL);
	if (!p)
		return false;
	bool ok =
	    p->len == strlen(text) && !memcmp(myrio_pkt_data(p), text, p->len) && ip == PEER_IP;
	myrio_pkt_free(p);
	return ok;
}

static void sockets_in_a_group_each_get_a_copy(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "igmp6", NULL, NULL, true), 0);
	struct myrio_udp_sock *a, *b, *c, *x;
	assert_int_equal(myrio_udp_open_shared(r.s, 5000, NULL, &a), 0);
	assert_int_equal(myrio_udp_open_shared(r.s, 5000, NULL, &b), 0);
	assert_int_equal(myrio_udp_open_shared(r.s, 5000, NULL, &c), 0);
	assert_int_equal(myrio_udp_open(r.s, 5000, NULL, &x), -EADDRINUSE);
	assert_int_equal(myrio_udp_join(a, GROUP), 0);
	assert_int_equal(myrio_udp_join(b, GROUP), 0);
	assert_int_equal(myrio_udp_join(b, GROUP), -EADDRINUSE);
	assert_int_equal(myrio_udp_join(c, GROUP2), 0);
	assert_int_equal(myrio_udp_join(c, PEER_IP), -EINVAL);
	send_udp(&r, GROUP, 5000, "to group one");
	raw_poll(&r);
	assert_true(got(a, "to group one"));
	assert_true(got(b, "to group one"));
	assert_null(myrio_udp_recv(c, NULL, NULL)); /* joined another group */
	assert_int_equal(raw_stats(&r).udp_mcast_copies, 1);
	/* a group nobody joined, another port: not taken */
	send_udp(&r, 0xef050505u, 5000, "nobody");
	send_udp(&r, GROUP, 5001, "other port");
	raw_poll(&r);
	assert_null(myrio_udp_recv(a, NULL, NULL));
	assert_null(myrio_udp_recv(b, NULL, NULL));
	/* b leaves; a, still in, keeps receiving */
	assert_int_equal(myrio_udp_leave(b, GROUP), 0);
	send_udp(&r, GROUP, 5000, "after b left");
	raw_poll(&r);
	assert_true(got(a, "after b left"));
	assert_null(myrio_udp_recv(b, NULL, NULL));
	/* the last member leaves: the stack takes the group's datagrams no more */
	uint64_t before = raw_stats(&r).drop_ip_not_for_us;
	myrio_udp_close(a);
	send_udp(&r, GROUP, 5000, "after all left");
	raw_poll(&r);
	assert_int_equal(raw_stats(&r).drop_ip_not_for_us, before + 1);
	myrio_udp_close(b);
	myrio_udp_close(c);
	raw_close(&r);
}

static void sending_to_a_group_ttl_1_by_default(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "igmp7", NULL, NULL, false), 0); /* no ARP entry */
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 0, NULL, &u), 0);
	assert_int_equal(myrio_udp_sendto_copy(u, "tick", 4, GROUP2, 6000), 0);
	raw_poll(&r);
	assert_int_equal(r.ncap, 1); /* no ARP: the group's MAC */
	const uint8_t *f = myrio_pkt_data(r.cap[0]);
	assert_memory_equal(f, ((uint8_t[]){0x01, 0x00, 0x5e, 0x01, 0x81, 0x82}), 6);
	assert_int_equal(f[14 + 8], 1);
	assert_int_equal(get_be32(f + 14 + 16), GROUP2);
	assert_int_equal(l4_csum(STACK_IP, GROUP2, 17, f + 34, 12), 0);
	myrio_udp_set_mcast_ttl(u, 16);
	struct myrio_pkt *p = myrio_stack_pkt_alloc(r.s);
	memcpy(myrio_pkt_data(p), "tock", 4);
	p->len = 4;
	assert_int_equal(myrio_udp_sendto(u, p, GROUP2, 6000), 0);
	raw_poll(&r);
	assert_int_equal(r.ncap, 1);
	assert_int_equal(myrio_pkt_data(r.cap[0])[14 + 8], 16);
	myrio_udp_close(u);
	raw_close(&r);
}

/* A v2 querier heard while a v3 general response is pending: the host moves to v2 mode,
 * cancels the v3 response (RFC 3376 §7.2.1) and answers in v2. */
static void v2_querier_cancels_a_pending_v3_response(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp9");
	run_ms(&r, 2000, NULL, NULL); /* the join's reports */
	send_query(&r, 3, 0, 100);    /* Max Resp 10 s: a v3 report pending */
	raw_poll(&r);
	send_query(&r, 2, 0, 10);
	raw_poll(&r);
	unsigned v3 = 0, v2 = 0;
	for (unsigned t = 0; t < 10500; t += 10) {
		raw_wait_ms(&r, 10);
		struct igmp_seen x;
		for (unsigned k = 0; igmp_sent(&r, k, &x); k++) {
			v3 += x.msg[0] == IGMP_V3_REPORT;
			v2 += x.msg[0] == IGMP_V2_REPORT;
		}
	}
	assert_int_equal(v3, 0);
	assert_int_equal(v2, 1);
	myrio_udp_close(u);
	raw_close(&r);
}

/* RFC 2236 §6: only a Delaying Member clears its "last reporter" flag when it hears another
 * host's report. An Idle Member that answered the last query keeps it: a report heard
 * afterwards (another host's, answering late) must not silence its Leave. */
static void v2_idle_member_keeps_its_flag_and_leaves(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp10");
	run_ms(&r, 2000, NULL, NULL); /* the join's reports */
	send_query(&r, 2, 0, 10);
	assert_int_equal(run_ms(&r, 1010, NULL, NULL), 1); /* ours answered: Idle, flag set */
	uint8_t rep[8];
	igmp_build_v2(rep, IGMP_V2_REPORT, GROUP);
	send_igmp(&r, GROUP, rep, 8);
	raw_poll(&r);
	assert_int_equal(raw_stats(&r).igmp_reports_suppressed, 0);
	myrio_udp_close(u);
	raw_poll(&r);
	struct igmp_seen x;
	assert_true(igmp_sent(&r, 0, &x));
	check_envelope(&x, IGMP_ALL_ROUTERS);
	assert_int_equal(x.msg[0], IGMP_V2_LEAVE);
	assert_int_equal(get_be32(x.msg + 4), GROUP);
	raw_close(&r);
}

/* A querier's QRV of 1: a join is still a state change (RFC 3376 §5.1), sent once. */
static void qrv_1_join_reported_as_a_change_once(void **state)
{
	struct raw r;
	struct myrio_udp_sock *u = member(&r, "igmp10");
	run_ms(&r, 2000, NULL, NULL); /* the first join's reports */
	uint8_t q[12] = {IGMP_QUERY, 1};
	q[8] = 1; /* QRV 1 */
	fix_csum(q, sizeof(q));
	send_igmp(&r, IGMP_ALL_HOSTS, q, sizeof(q));
	run_ms(&r, 200, NULL, NULL); /* its answer */
	assert_int_equal(myrio_udp_join(u, GROUP2), 0);
	raw_poll(&r);
	struct igmp_seen x;
	assert_true(igmp_sent(&r, 0, &x));
	assert_int_equal(get_be32(x.msg + 12), GROUP2);
	assert_int_equal(x.msg[8], IGMP_CHANGE_TO_EXCLUDE);
	assert_int_equal(run_ms(&r, 3000, &x, NULL), 0);
	myrio_udp_close(u);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mac_mapping_keeps_the_low_23_bits),
	    cmocka_unit_test(v2_messages_as_rfc_2236_lays_them_out),
	    cmocka_unit_test(v3_report_as_rfc_3376_lays_it_out),
	    cmocka_unit_test(query_versions_by_length_and_max_resp),
	    cmocka_unit_test(hostile_messages_refused),
	    cmocka_unit_test(join_reports_v3_and_repeats_once),
	    cmocka_unit_test(v3_queries_answered_within_max_resp),
	    cmocka_unit_test(v2_querier_switches_to_v2_with_suppression_and_leave),
	    cmocka_unit_test(v1_querier_gets_v1_reports_and_no_leave),
	    cmocka_unit_test(v2_querier_cancels_a_pending_v3_response),
	    cmocka_unit_test(v2_idle_member_keeps_its_flag_and_leaves),
	    cmocka_unit_test(querier_without_address_answered),
	    cmocka_unit_test(hostile_input_dropped_and_counted),
	    cmocka_unit_test(sockets_in_a_group_each_get_a_copy),
	    cmocka_unit_test(sending_to_a_group_ttl_1_by_default),
	    cmocka_unit_test(qrv_1_join_reported_as_a_change_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
