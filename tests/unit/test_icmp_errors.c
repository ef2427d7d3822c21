/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMP errors about what the stack sent: a refused or unreachable handshake ends at once
 * with the error's errno, a synchronised connection only records it, forged or truncated
 * errors change nothing (RFC 5927), "fragmentation needed" lowers the MSS and resends at
 * the new size (RFC 1191) until the estimate ages out, connected UDP sockets hear of
 * closed ports, and our own unreachables are rate limited. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

/* A connect to the peer's port 7000; the SYN's IP header and 8 bytes of TCP copied out. */
static struct myrio_tcp_conn *connect_syn(struct raw *r, uint8_t quote[28])
{
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r->s, PEER_IP, 7000, NULL, &c), 0);
	raw_poll(r);
	const uint8_t *ip = cap_ip(r, 6, 0);
	assert_non_null(ip);
	memcpy(quote, ip, 28);
	return c;
}

static void handshake_ends_with_the_errors_errno(void **state)
{
	static const struct {
		uint8_t code;
		int err;
	} cases[] = {{3, -ECONNREFUSED}, {1, -EHOSTUNREACH}, {0, -ENETUNREACH}, {2, -ENOPROTOOPT}};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct raw r;
		assert_int_equal(raw_open(&r, "ie1", NULL, NULL, true), 0);
		uint8_t q[28];
		struct myrio_tcp_conn *c = connect_syn(&r, q);
		icmp_in(&r, 3, cases[i].code, 0, q, sizeof(q));
		assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_CLOSED);
		assert_int_equal(myrio_tcp_error(c), cases[i].err);
		assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 1);
		assert_int_equal(raw_stats(&r).tcp_icmp_aborts, 1);
		myrio_tcp_close(c);
		raw_close(&r);
	}
}

static void forged_or_short_errors_change_nothing(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ie2", NULL, NULL, true), 0);
	uint8_t q[28], bad[28];
	struct myrio_tcp_conn *c = connect_syn(&r, q);
	/* Sequence number outside SND.UNA..SND.NXT (RFC 5927 §4.1). */
	memcpy(bad, q, sizeof(bad));
	put_be32(bad + 24, get_be32(q + 24) + 100000);
	icmp_in(&r, 3, 3, 0, bad, sizeof(bad));
	/* Another port: no such connection. */
	memcpy(bad, q, sizeof(bad));
	put_be16(bad + 22, 7001);
	icmp_in(&r, 3, 3, 0, bad, sizeof(bad));
	/* A quote of another host's datagram. */
	memcpy(bad, q, sizeof(bad));
	put_be32(bad + 12, 0x0a000009u);
	icmp_in(&r, 3, 3, 0, bad, sizeof(bad));
	/* Only 4 bytes of the TCP header quoted. */
	icmp_in(&r, 3, 3, 0, q, 24);
	/* A quoted header length beyond what was quoted (IHL 15 = 60 bytes). */
	memcpy(bad, q, sizeof(bad));
	bad[0] = 0x4f;
	icmp_in(&r, 3, 3, 0, bad, sizeof(bad));
	/* The quote of a later fragment (no ports in it). */
	memcpy(bad, q, sizeof(bad));
	put_be16(bad + 6, 0x0010);
	icmp_in(&r, 3, 3, 0, bad, sizeof(bad));
	/* Nothing but the ICMP header. */
	icmp_in(&r, 3, 3, 0, q, 0);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_SYN_SENT);
	assert_int_equal(myrio_tcp_error(c), 0);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.icmp_errors_ignored, 7);
	assert_int_equal(st.icmp_errors_rx, 0);
	/* The genuine one still works afterwards. */
	icmp_in(&r, 3, 3, 0, q, sizeof(q));
	assert_int_equal(myrio_tcp_error(c), -ECONNREFUSED);
	myrio_tcp_close(c);
	raw_close(&r);
}

static void few_retries(struct myrio_stack_conf *c)
{
	c->max_retries = 2;
	c->tso = false;
}

/* Sends n bytes from the established connection and returns the IP header of the first
 * data segment the stack sent (copied: 28 bytes). */
static void send_data(struct raw *r, struct peer *p, uint32_t n, uint8_t quote[28])
{
	static uint8_t buf[65536];
	for (uint32_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(myrio_tcp_write(p->c, buf, n), (ssize_t)n);
	raw_poll(r);
	const uint8_t *ip = cap_ip(r, 6, 0);
	assert_non_null(ip);
	memcpy(quote, ip, 28);
}

/* A stack on link name listening on port 80, and the peer connected to it (all options). */
static void established(struct raw *r, const char *name, void (*tweak)(struct myrio_stack_conf *),
			struct peer *p)
{
	assert_int_equal(raw_open(r, name, NULL, tweak, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r->s, 80, 4, NULL, &l), 0);
	peer_connect(r, p, 40000, 80, 100, true);
	assert_non_null(p->c);
}

static void established_keeps_going_and_reports_the_error_on_timeout(void **state)
{
	struct raw r;
	struct peer p;
	established(&r, "ie3", few_retries, &p);
	myrio_tcp_set_user(p.c, NULL);
	uint8_t q[28];
	send_data(&r, &p, 100, q);
	icmp_in(&r, 3, 1, 0, q, sizeof(q)); /* host unreachable: soft */
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(myrio_tcp_soft_error(p.c), -EHOSTUNREACH);
	icmp_in(&r, 3, 3, 0, q, sizeof(q)); /* port unreachable: hard, still not fatal */
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(myrio_tcp_soft_error(p.c), -ECONNREFUSED);
	/* No answer: the connection times out, and says why. */
	for (int i = 0; i < 200 && myrio_tcp_state(p.c) != MYRIO_TCP_CLOSED; i++)
		raw_wait_ms(&r, 1000);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(p.c), -ECONNREFUSED);
	raw_close(&r);
}

static void soft_error_is_stale_after_progress(void **state)
{
	struct raw r;
	struct peer p;
	established(&r, "ie4", few_retries, &p);
	uint8_t q[28];
	send_data(&r, &p, 100, q);
	icmp_in(&r, 11, 0, 0, q, sizeof(q)); /* time exceeded */
	assert_int_equal(myrio_tcp_soft_error(p.c), -EHOSTUNREACH);
	p.rcv_nxt += 100;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_soft_error(p.c), 0);
	/* Now acknowledged: an error quoting it is stale (RFC 5927 §4.1). */
	icmp_in(&r, 3, 1, 0, q, sizeof(q));
	assert_int_equal(myrio_tcp_soft_error(p.c), 0);
	raw_close(&r);
}

/* Every TCP frame captured fits in mtu bytes of IP; returns the payload bytes they carry
 * from seq on, checked against the pattern send_data wrote (offset = seq - base). */
static uint32_t resent_bytes(struct raw *r, uint32_t mtu, uint32_t base)
{
	uint32_t bytes = 0;
	struct tcpv v;
	for (unsigned i = 0; cap_tcp(r, i, &v); i++) {
		const uint8_t *ip = cap_ip(r, 6, i);
		assert_true(get_be16(ip + 2) <= mtu);
		for (unsigned k = 0; k < v.len; k++)
			assert_int_equal(v.data[k], (uint8_t)((v.seq - base + k) * 7 + 3));
		bytes += v.len;
	}
	return bytes;
}

static void no_tso(struct myrio_stack_conf *c)
{
	c->tso = false;
}

static void frag_needed_lowers_mss_and_resends(void **state)
{
	struct raw r;
	struct peer p;
	established(&r, "ie5", no_tso, &p);
	assert_int_equal(myrio_tcp_mss(p.c), 1448); /* 1500 - 40 - timestamps */
	uint8_t q[28];
	send_data(&r, &p, 4 * 1448, q);
	uint32_t base = get_be32(q + 24);
	/* Forged: an MTU larger than the one in use, and one below the floor. */
	icmp_in(&r, 3, 4, 1600, q, sizeof(q));
	icmp_in(&r, 3, 4, 300, q, sizeof(q));
	assert_int_equal(myrio_tcp_mss(p.c), 1448);
	assert_int_equal(r.ncap, 0);
	assert_int_equal(raw_stats(&r).icmp_errors_ignored, 2);
	/* The real one: the four segments again, now at most 1000 bytes of IP each. */
	icmp_in(&r, 3, 4, 1000, q, sizeof(q));
	assert_int_equal(myrio_tcp_mss(p.c), 1000 - 52);
	assert_int_equal(resent_bytes(&r, 1000, base), 4 * 1448);
	assert_int_equal(raw_stats(&r).tcp_pmtu_lowered, 1);
	/* The peer takes it all; new writes are cut at the new size too. */
	p.rcv_nxt = base + 4 * 1448;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	send_data(&r, &p, 3000, q);
	assert_int_equal(resent_bytes(&r, 1000, get_be32(q + 24)), 3000);
	p.rcv_nxt += 3000;
	peer_ack(&r, &p);
	/* A new connection to the same host starts at the known path MTU. */
	struct peer p2;
	peer_connect(&r, &p2, 40001, 80, 5000, true);
	assert_non_null(p2.c);
	assert_int_equal(myrio_tcp_mss(p2.c), 1000 - 52);
	/* RFC 1191 §6.3: after 10 minutes the estimate is forgotten. */
	raw_wait_ms(&r, 9 * 60 * 1000);
	assert_int_equal(myrio_tcp_mss(p.c), 1000 - 52);
	raw_wait_ms(&r, 60 * 1000 + 1);
	assert_int_equal(myrio_tcp_mss(p.c), 1448);
	assert_int_equal(myrio_tcp_mss(p2.c), 1448);
	assert_int_equal(raw_stats(&r).tcp_pmtu_expired, 1);
	raw_close(&r);
}

/* One 10-byte datagram from u to the peer's port; the IP header and UDP header copied. */
static void udp_out(struct raw *r, struct myrio_udp_sock *u, uint16_t port, uint8_t quote[28])
{
	assert_int_equal(myrio_udp_sendto_copy(u, "0123456789", 10, PEER_IP, port), 0);
	raw_poll(r);
	const uint8_t *ip = cap_ip(r, 17, 0);
	assert_non_null(ip);
	memcpy(quote, ip, 28);
}

static void connected_udp_hears_port_unreachable(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ie6", NULL, NULL, true), 0);
	struct myrio_udp_sock *u, *v;
	assert_int_equal(myrio_udp_open(r.s, 5000, NULL, &u), 0);
	assert_int_equal(myrio_udp_connect(u, PEER_IP, 9), 0);
	assert_int_equal(myrio_udp_open(r.s, 5001, NULL, &v), 0);
	uint8_t q[28];
	/* Unconnected: nothing kept (as Linux without IP_RECVERR). */
	udp_out(&r, v, 9, q);
	icmp_in(&r, 3, 3, 0, q, sizeof(q));
	assert_int_equal(myrio_udp_error(v), 0);
	/* Connected, but about another destination port: not its peer. */
	udp_out(&r, u, 10, q);
	icmp_in(&r, 3, 3, 0, q, sizeof(q));
	assert_int_equal(myrio_udp_error(u), 0);
	assert_int_equal(r.udp_events, 0);
	/* Its peer's port is closed: the error, an event, and the error is read once. */
	udp_out(&r, u, 9, q);
	icmp_in(&r, 3, 3, 0, q, sizeof(q));
	assert_int_equal(r.udp_events, 1);
	assert_ptr_equal(r.udp_last, u);
	assert_null(myrio_udp_recv(u, NULL, NULL));
	assert_int_equal(myrio_udp_error(u), -ECONNREFUSED);
	assert_int_equal(myrio_udp_error(u), 0);
	assert_int_equal(raw_stats(&r).udp_icmp_errors, 1);
	/* Soft errors are not reported to UDP (as Linux). */
	icmp_in(&r, 3, 1, 0, q, sizeof(q));
	assert_int_equal(myrio_udp_error(u), 0);
	myrio_udp_close(u);
	myrio_udp_close(v);
	raw_close(&r);
}

/* The peer sends a datagram to a port nobody listens on. */
static void udp_to_closed_port(struct raw *r, uint16_t i)
{
	uint8_t f[64];
	uint32_t n = build_eth(f, r->smac, 0x0800);
	n += build_ip(f + n, 17, PEER_IP, STACK_IP, 12);
	uint8_t *uh = f + n;
	put_be16(uh, (uint16_t)(30000 + i));
	put_be16(uh + 2, 9999);
	put_be16(uh + 4, 12);
	put_be16(uh + 6, 0);
	memset(uh + 8, 'x', 4);
	memset(uh + 12, 0, 14);
	raw_send(r, f, 60);
}

static unsigned unreach_sent_in(struct raw *r, unsigned datagrams)
{
	unsigned got = 0;
	for (unsigned i = 0; i < datagrams; i += 16) {
		for (unsigned k = 0; k < 16; k++)
			udp_to_closed_port(r, (uint16_t)(i + k));
		raw_poll(r);
		for (unsigned k = 0; cap_ip(r, 1, k); k++)
			got++;
	}
	return got;
}

static void port_unreachables_are_rate_limited(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ie7", NULL, NULL, true), 0);
	/* A burst of 50, then none while the clock stands still. */
	assert_int_equal(unreach_sent_in(&r, 160), 50);
	assert_int_equal(raw_stats(&r).icmp_unreach_limited, 110);
	/* One more per millisecond. */
	raw_advance_ms(&r, 10);
	assert_int_equal(unreach_sent_in(&r, 32), 10);
	raw_advance_ms(&r, 1000);
	assert_int_equal(unreach_sent_in(&r, 64), 50);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(handshake_ends_with_the_errors_errno),
	    cmocka_unit_test(forged_or_short_errors_change_nothing),
	    cmocka_unit_test(established_keeps_going_and_reports_the_error_on_timeout),
	    cmocka_unit_test(soft_error_is_stale_after_progress),
	    cmocka_unit_test(frag_needed_lowers_mss_and_resends),
	    cmocka_unit_test(connected_udp_hears_port_unreachable),
	    cmocka_unit_test(port_unreachables_are_rate_limited),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
