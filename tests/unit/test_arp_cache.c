/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP: replies to requests, resolution with queued frames (and those the NIC's ring cannot
 * take then), give-up after retries, static entries, gratuitous ARP, cache expiry and
 * re-resolution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

static uint32_t build_arp(uint8_t *f, const uint8_t *dst, uint16_t op, const uint8_t *sha,
			  uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	uint32_t n = build_eth(f, dst, 0x0806);
	uint8_t *a = f + n;
	put_be16(a, 1);
	put_be16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put_be16(a + 6, op);
	memcpy(a + 8, sha, 6);
	put_be32(a + 14, spa);
	memcpy(a + 18, tha, 6);
	put_be32(a + 24, tpa);
	memset(a + 28, 0, 18);
	return 60;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t zero6[6];

/* The i-th captured ARP frame, or NULL. */
/* The peer sends an ARP packet (op 1: request, 2: reply) and the stack takes it in. */
static void arp_in(struct raw *r, const uint8_t *dst, uint16_t op, const uint8_t *sha,
		   uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	uint8_t f[64];
	raw_send(r, f, build_arp(f, dst, op, sha, spa, tha, tpa));
	raw_poll(r);
}

static const uint8_t *cap_arp(struct raw *r, unsigned i)
{
	unsigned k = 0;
	for (unsigned j = 0; j < r->ncap; j++) {
		const uint8_t *f = myrio_pkt_data(r->cap[j]);
		if (r->cap[j]->len >= 42 && get_be16(f + 12) == 0x0806 && k++ == i)
			return f;
	}
	return NULL;
}

/* a is our ARP reply (r's MAC and address) to the host at mac, ip. */
static void assert_reply_to(const struct raw *r, const uint8_t *a, const uint8_t *mac, uint32_t ip)
{
	assert_non_null(a);
	assert_memory_equal(a, mac, 6);
	assert_int_equal(get_be16(a + 20), 2);
	assert_memory_equal(a + 22, r->smac, 6);
	assert_int_equal(get_be32(a + 28), STACK_IP);
	assert_memory_equal(a + 32, mac, 6);
	assert_int_equal(get_be32(a + 38), ip);
}

static void request_for_us_is_answered_and_learned(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp1", NULL, NULL, false), 0);
	arp_in(&r, bcast, 1, peer_mac, PEER_IP, zero6, STACK_IP);
	assert_reply_to(&r, cap_arp(&r, 0), peer_mac, PEER_IP);
	uint8_t mac[6];
	assert_int_equal(myrio_arp_lookup(r.s, PEER_IP, mac), 0); /* RFC 826 merge */
	assert_memory_equal(mac, peer_mac, 6);
	/* A request for someone else: no answer, nothing learned. */
	const uint8_t other[6] = {2, 9, 9, 9, 9, 9};
	arp_in(&r, bcast, 1, other, 0x0a000007u, zero6, 0x0a000008u);
	assert_null(cap_arp(&r, 0));
	assert_int_equal(myrio_arp_lookup(r.s, 0x0a000007u, mac), -ENOENT);
	raw_close(&r);
}

/* Sends n 10-byte datagrams from u to ip:2000, datagram i filled with 'a' + i; the stack
 * must take each (queueing it while the address is unresolved). */
static void send_datagrams(struct raw *r, struct myrio_udp_sock *u, int n, uint32_t ip)
{
	for (int i = 0; i < n; i++) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(r->s);
		assert_non_null(p);
		memset(myrio_pkt_data(p), 'a' + i, 10);
		p->len = 10;
		assert_int_equal(myrio_udp_sendto(u, p, ip, 2000), 0);
	}
}

static void frames_wait_for_resolution(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp2", NULL, NULL, false), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	send_datagrams(&r, u, 3, PEER_IP);
	raw_poll(&r);
	/* One request, no UDP yet. */
	const uint8_t *a = cap_arp(&r, 0);
	assert_non_null(a);
	assert_memory_equal(a, bcast, 6);
	assert_int_equal(get_be16(a + 20), 1);
	assert_int_equal(get_be32(a + 38), PEER_IP);
	assert_null(cap_arp(&r, 1));
	assert_int_equal(r.ncap, 1);
	arp_in(&r, r.smac, 2, peer_mac, PEER_IP, r.smac, STACK_IP);
	/* The three datagrams leave, in order, to the learned MAC. */
	assert_int_equal(r.ncap, 3);
	for (int i = 0; i < 3; i++) {
		const uint8_t *e = myrio_pkt_data(r.cap[i]);
		assert_memory_equal(e, peer_mac, 6);
		assert_int_equal(e[42], 'a' + i);
	}
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.arp_queued, 3);
	raw_close(&r);
}

static void unresolved_gives_up_and_counts(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp3", NULL, NULL, false), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	send_datagrams(&r, u, ARP_QLEN + 2, 0x0a000063u); /* two more than the queue holds */
	raw_poll(&r);
	int requests = cap_arp(&r, 0) ? 1 : 0;
	for (int i = 0; i < 5; i++) {
		raw_advance_ms(&r, 1000);
		raw_poll(&r);
		requests += cap_arp(&r, 0) ? 1 : 0;
	}
	assert_int_equal(requests, 3);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.arp_queue_drop, 2);
	assert_int_equal(st.arp_unresolved_drop, ARP_QLEN);
	raw_poll(&r);
	assert_int_equal(myrio_pool_free_count(r.s->pool), r.s->pool->count);
	raw_close(&r);
}

static struct myrio_pkt *small_datagram(struct raw *r)
{
	struct myrio_pkt *p = myrio_stack_pkt_alloc(r->s);
	memcpy(myrio_pkt_data(p), "hi", 2);
	p->len = 2;
	return p;
}

static void static_entries_and_gratuitous_arp(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp4", NULL, NULL, false), 0);
	const uint8_t smac[6] = {2, 1, 1, 1, 1, 1};
	assert_int_equal(myrio_arp_add_static(r.s, 0x0a000005u, smac), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	assert_int_equal(myrio_udp_sendto(u, small_datagram(&r), 0x0a000005u, 9), 0);
	raw_poll(&r);
	assert_null(cap_arp(&r, 0)); /* no resolution needed */
	assert_int_equal(r.ncap, 1);
	assert_memory_equal(myrio_pkt_data(r.cap[0]), smac, 6);
	/* A gratuitous ARP cannot move a static entry... */
	const uint8_t evil[6] = {2, 6, 6, 6, 6, 6};
	arp_in(&r, bcast, 1, evil, 0x0a000005u, zero6, 0x0a000005u);
	uint8_t mac[6];
	assert_int_equal(myrio_arp_lookup(r.s, 0x0a000005u, mac), 0);
	assert_memory_equal(mac, smac, 6);
	/* ...but updates a learned one (the peer moved to a new MAC). */
	arp_in(&r, bcast, 1, peer_mac, PEER_IP, zero6, STACK_IP);
	const uint8_t moved[6] = {2, 7, 7, 7, 7, 7};
	arp_in(&r, bcast, 1, moved, PEER_IP, zero6, PEER_IP);
	assert_null(cap_arp(&r, 0)); /* gratuitous: never answered */
	assert_int_equal(myrio_arp_lookup(r.s, PEER_IP, mac), 0);
	assert_memory_equal(mac, moved, 6);
	/* Our own announcement: sender = target = our address. */
	assert_int_equal(myrio_arp_announce(r.s), 0);
	raw_poll(&r);
	const uint8_t *a = cap_arp(&r, 0);
	assert_non_null(a);
	assert_int_equal(get_be32(a + 28), STACK_IP);
	assert_int_equal(get_be32(a + 38), STACK_IP);
	raw_close(&r);
}

static void expired_entry_is_refreshed(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp5", NULL, NULL, false), 0);
	arp_in(&r, bcast, 1, peer_mac, PEER_IP, zero6, STACK_IP);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	raw_advance_ms(&r, 60001); /* past arp_timeout_ms */
	assert_int_equal(myrio_udp_sendto(u, small_datagram(&r), PEER_IP, 9), 0);
	raw_poll(&r);
	/* Still sent with the old MAC during the grace period, plus a new request. */
	const uint8_t *a = cap_arp(&r, 0);
	assert_non_null(a);
	assert_int_equal(get_be16(a + 20), 1);
	assert_int_equal(r.ncap, 2);
	/* No answer: after the grace period frames wait again. */
	raw_advance_ms(&r, 5000);
	assert_int_equal(myrio_udp_sendto(u, small_datagram(&r), PEER_IP, 9), 0);
	raw_poll(&r);
	assert_non_null(cap_arp(&r, 0));
	assert_int_equal(r.ncap, 1);
	arp_in(&r, r.smac, 2, peer_mac, PEER_IP, r.smac, STACK_IP);
	assert_int_equal(r.ncap, 1); /* the queued datagram */
	assert_int_equal(get_be16(myrio_pkt_data(r.cap[0]) + 12), 0x0800);
	raw_close(&r);
}

static void small_pool(struct myrio_stack_conf *c)
{
	c->tx_pool_size = 256; /* the waiting frames may take a quarter: 64 */
}

static void queue_is_bounded_stack_wide(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp6", NULL, small_pool, false), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	send_datagrams(&r, u, 40, 0x0a000063u);
	send_datagrams(&r, u, 40, 0x0a000064u);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.arp_queued, 64);
	assert_int_equal(st.arp_queue_drop, 16);
	/* The second address resolves: its 24 leave, the first's 40 still wait. */
	arp_in(&r, r.smac, 2, peer_mac, 0x0a000064u, r.smac, STACK_IP);
	unsigned udp = 0;
	for (unsigned j = 0; j < r.ncap; j++)
		udp += myrio_pkt_data(r.cap[j])[23] == 17;
	assert_int_equal(udp, 24);
	raw_close(&r);
}

/* Issue: a burst of connects to an address not resolved yet lost all but 8 SYNs, which
 * then waited out the 1 s initial RTO. All of them must leave with the ARP reply, and
 * complete as soon as the peer answers. */
static void burst_of_connects_leaves_with_the_arp_reply(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp7", NULL, NULL, false), 0);
	struct myrio_tcp_conn *c[100];
	for (int i = 0; i < 100; i++)
		assert_int_equal(myrio_tcp_connect(r.s, PEER_IP, 80, NULL, &c[i]), 0);
	raw_poll(&r);
	assert_non_null(cap_arp(&r, 0));
	assert_int_equal(cap_count_tcp(&r), 0);
	raw_advance_ms(&r, 2);
	arp_in(&r, r.smac, 2, peer_mac, PEER_IP, r.smac, STACK_IP);
	/* Every SYN, to the learned MAC, at once: no model time passed. */
	assert_int_equal(cap_count_tcp(&r), 100);
	bool seen[100] = {false};
	struct tcpv v;
	for (unsigned i = 0; cap_tcp(&r, i, &v); i++) {
		assert_int_equal(v.flags, F_SYN);
		for (int k = 0; k < 100; k++) {
			uint16_t lport;
			myrio_tcp_addr(c[k], NULL, &lport, NULL, NULL);
			if (lport == v.sport)
				seen[k] = true;
		}
	}
	for (int k = 0; k < 100; k++)
		assert_true(seen[k]);
	for (unsigned j = 0; j < r.ncap; j++)
		assert_memory_equal(myrio_pkt_data(r.cap[j]), peer_mac, 6);
	assert_int_equal(raw_stats(&r).arp_queue_drop, 0);
	/* The peer answers them all, and every connection is up without a retransmission,
	 * 2 ms of model time after the connects. */
	struct tcpf sa[100];
	for (unsigned i = 0; cap_tcp(&r, i, &v); i++)
		sa[i] = (struct tcpf){.sport = 80,
				      .dport = v.sport,
				      .seq = 1000,
				      .ack = v.seq + 1,
				      .flags = F_SYN | F_ACK,
				      .win = 65535};
	for (unsigned i = 0; i < 100; i += 16) {
		for (unsigned k = i; k < i + 16 && k < 100; k++)
			raw_send_tcp(&r, &sa[k]);
		raw_poll(&r);
	}
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_CONNECTED], 100);
	for (int k = 0; k < 100; k++)
		assert_int_equal(myrio_tcp_state(c[k]), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(raw_stats(&r).tcp_retransmits, 0);
	for (int k = 0; k < 100; k++)
		myrio_tcp_abort(c[k]);
	raw_close(&r);
}

/* RFC 5227 §2.1.1: a probe (sender address 0) for our address is answered, to the prober,
 * and teaches nothing; a probe for another address gets no answer. */
static void probe_for_our_address_is_answered(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp8", NULL, NULL, false), 0);
	const uint8_t prober[6] = {2, 7, 7, 7, 7, 7};
	arp_in(&r, bcast, 1, prober, 0, zero6, STACK_IP);
	assert_reply_to(&r, cap_arp(&r, 0), prober, 0);
	uint8_t mac[6];
	assert_int_equal(myrio_arp_lookup(r.s, 0, mac), -ENOENT);
	arp_in(&r, bcast, 1, prober, 0, zero6, 0x0a000008u);
	assert_null(cap_arp(&r, 0));
	raw_close(&r);
}

/* RFC 5227 §2.4: another host using our address is counted, and defended with one
 * announcement per DEFEND_INTERVAL (10 s). */
static void address_conflict_is_counted_and_defended(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arp9", NULL, NULL, false), 0);
	const uint8_t other[6] = {2, 8, 8, 8, 8, 8};
	arp_in(&r, bcast, 2, other, STACK_IP, zero6, STACK_IP); /* its announcement */
	assert_int_equal(raw_stats(&r).arp_conflicts, 1);
	const uint8_t *a = cap_arp(&r, 0);
	assert_non_null(a); /* ours: sender and target our address, broadcast */
	assert_memory_equal(a, bcast, 6);
	assert_memory_equal(a + 22, r.smac, 6);
	assert_int_equal(get_be32(a + 28), STACK_IP);
	assert_int_equal(get_be32(a + 38), STACK_IP);
	/* Again within 10 s: counted, not answered. */
	raw_advance_ms(&r, 5000);
	arp_in(&r, bcast, 1, other, STACK_IP, zero6, PEER_IP);
	assert_int_equal(raw_stats(&r).arp_conflicts, 2);
	assert_null(cap_arp(&r, 0));
	raw_advance_ms(&r, 5001);
	arp_in(&r, bcast, 1, other, STACK_IP, zero6, PEER_IP);
	assert_non_null(cap_arp(&r, 0));
	assert_int_equal(raw_stats(&r).arp_defends, 2);
	/* Nothing learnt for our own address. */
	uint8_t mac[6];
	assert_int_equal(myrio_arp_lookup(r.s, STACK_IP, mac), -ENOENT);
	raw_close(&r);
}

/* Review finding: a connect to an on-link address nobody owns waited out its SYN retries
 * (127 s) and ended -ETIMEDOUT. As Linux's neighbour going FAILED after 3 probes (about
 * 3 s), every connection whose SYN waited ends -EHOSTUNREACH when ARP gives up. */
static void connect_to_silent_host_is_unreachable_at_3s(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arpa", NULL, NULL, false), 0);
	struct myrio_tcp_conn *c[5];
	for (int i = 0; i < 5; i++)
		assert_int_equal(myrio_tcp_connect(r.s, 0x0a000063u, 80 + i, NULL, &c[i]), 0);
	raw_poll(&r);
	unsigned ms = 0, requests = cap_arp(&r, 0) ? 1 : 0;
	while (r.ev_count[MYRIO_TCP_EV_ERROR] == 0 && ms < 10000) {
		raw_wait_ms(&r, 100);
		ms += 100;
		requests += cap_arp(&r, 0) ? 1 : 0;
	}
	assert_int_equal(ms, 3000); /* requests at 0, 1 and 2 s, given up at 3 s */
	assert_int_equal(requests, 3);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(myrio_tcp_state(c[i]), MYRIO_TCP_CLOSED);
		assert_int_equal(myrio_tcp_error(c[i]), -EHOSTUNREACH);
		myrio_tcp_close(c[i]);
	}
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.arp_failed, 1);
	assert_int_equal(st.tcp_icmp_aborts, 5);
	assert_int_equal(st.icmp_errors_ignored, 0); /* one report per connection */
	raw_poll(&r);
	assert_int_equal(myrio_pool_free_count(r.s->pool), r.s->pool->count);
	raw_close(&r);
}

static void via_gateway(struct myrio_stack_conf *c)
{
	c->gateway = 0x0a0000feu;
}

/* Off-link: the gateway is what ARP asks for; its silence ends the handshake just so. */
static void connect_through_silent_gateway_is_unreachable(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arpb", NULL, via_gateway, false), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r.s, 0xc0000205u, 443, NULL, &c), 0);
	raw_poll(&r);
	const uint8_t *a = cap_arp(&r, 0);
	assert_non_null(a);
	assert_int_equal(get_be32(a + 38), 0x0a0000feu);
	for (int ms = 100; ms < 3000; ms += 100)
		raw_wait_ms(&r, 100);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_SYN_SENT);
	raw_wait_ms(&r, 100);
	assert_int_equal(myrio_tcp_error(c), -EHOSTUNREACH);
	myrio_tcp_close(c);
	raw_close(&r);
}

static unsigned reconnects;

/* Connects again from the error callback: ARP must be whole by then. */
static void reconnect_on_error(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct raw *r = arg;
	raw_tcp_event(arg, c, ev);
	if (ev != MYRIO_TCP_EV_ERROR || reconnects == 3)
		return;
	reconnects++;
	struct myrio_tcp_conn *again;
	assert_int_equal(myrio_tcp_connect(r->s, 0x0a000063u, 80, NULL, &again), 0);
}

static void reconnecting_from_callback(struct myrio_stack_conf *c)
{
	c->tcp_event = reconnect_on_error;
}

/* Each attempt resolves afresh (as Linux re-probes a FAILED neighbour) and fails alike. */
static void reconnect_from_the_error_callback_resolves_again(void **state)
{
	struct raw r;
	reconnects = 0;
	assert_int_equal(raw_open(&r, "arpc", NULL, reconnecting_from_callback, false), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r.s, 0x0a000063u, 80, NULL, &c), 0);
	unsigned requests = 0;
	for (int ms = 0; ms <= 12000; ms += 100) {
		raw_wait_ms(&r, 100);
		requests += cap_arp(&r, 0) ? 1 : 0;
	}
	assert_int_equal(reconnects, 3);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 4);
	assert_int_equal(requests, 4 * 3);
	assert_int_equal(raw_stats(&r).arp_failed, 4);
	raw_close(&r);
}

static void short_arp_life(struct myrio_stack_conf *c)
{
	c->arp_timeout_ms = 1000;
	c->max_retries = 8;
}

/* Connects to the peer's port 80, resolving its address (the reply comes at once) and
 * answering the SYN; returns the established connection, its SYN in syn. */
static struct myrio_tcp_conn *connect_resolving(struct raw *r, struct tcpv *syn)
{
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r->s, PEER_IP, 80, NULL, &c), 0);
	raw_poll(r);
	arp_in(r, r->smac, 2, peer_mac, PEER_IP, r->smac, STACK_IP);
	assert_true(cap_tcp(r, 0, syn));
	struct tcpf sa = {.sport = 80,
			  .dport = syn->sport,
			  .seq = 1000,
			  .ack = syn->seq + 1,
			  .flags = F_SYN | F_ACK,
			  .win = 65535};
	raw_send_tcp_poll(r, &sa);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	return c;
}

/* A peer that vanishes once connected: its address fails to resolve again, which is a
 * soft error (Linux: the connection keeps its own retransmission timeout, and reports the
 * error it last heard when that runs out). */
static void established_peer_gone_is_a_soft_error(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arpd", NULL, short_arp_life, false), 0);
	struct tcpv syn;
	struct myrio_tcp_conn *c = connect_resolving(&r, &syn);
	assert_int_equal(myrio_tcp_write(c, "hello", 5), 5);
	raw_poll(&r);
	/* Nobody acknowledges or answers ARP again. */
	unsigned ms = 0;
	while (!myrio_tcp_soft_error(c) && ms < 30000) {
		raw_wait_ms(&r, 100);
		ms += 100;
	}
	assert_int_equal(myrio_tcp_soft_error(c), -EHOSTUNREACH);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(raw_stats(&r).tcp_icmp_aborts, 0);
	while (myrio_tcp_state(c) == MYRIO_TCP_ESTABLISHED && ms < 200000) {
		raw_wait_ms(&r, 100);
		ms += 100;
	}
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_CLOSED);
	assert_int_equal(raw_stats(&r).tcp_timeouts, 1); /* its retries ran out, not ARP */
	assert_int_equal(myrio_tcp_error(c), -EHOSTUNREACH);
	myrio_tcp_close(c);
	raw_close(&r);
}

/* The NIC's ring full when an address resolves: more frames waited for it than the ring
 * and the batch take. Those left over are dropped and counted (arp_resolved_drop, not
 * silently); the datagrams among them are lost, a TCP segment is sent again by its timer. */
static void frames_beyond_the_ring_at_resolution_are_counted_and_tcp_resends(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arpf", "?ring=8", short_arp_life, false), 0);
	struct tcpv syn;
	struct myrio_tcp_conn *c = connect_resolving(&r, &syn);
	/* The entry expires past its grace period: what goes next waits for ARP, the
	 * segment behind 200 datagrams. */
	raw_advance_ms(&r, 1000 + 3000 + 1);
	uint64_t queued = raw_stats(&r).arp_queued; /* the SYN's */
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	send_datagrams(&r, u, 200, PEER_IP);
	assert_int_equal(myrio_tcp_write(c, "resend me", 9), 9);
	raw_poll(&r);
	assert_non_null(cap_arp(&r, 0));
	assert_int_equal(cap_count_tcp(&r), 0);
	assert_int_equal(raw_stats(&r).arp_queued, queued + 201);
	arp_in(&r, r.smac, 2, peer_mac, PEER_IP, r.smac, STACK_IP);
	/* What the ring and the batch took arrives over the next polls; no model time moves,
	 * so nothing is sent again meanwhile. */
	unsigned udp = 0, tcp = 0;
	for (int i = 0; i < 200 && r.ncap; i++) {
		for (unsigned j = 0; j < r.ncap; j++)
			udp += myrio_pkt_data(r.cap[j])[23] == 17;
		tcp += cap_count_tcp(&r);
		raw_poll(&r);
	}
	assert_int_equal(r.ncap, 0);
	assert_int_equal(tcp, 0); /* the segment was among the dropped */
	uint64_t dropped = raw_stats(&r).arp_resolved_drop;
	assert_true(dropped >= 1 && udp < 200);
	assert_int_equal(udp + dropped, 201);
	/* The segment comes again, whole, from its retransmission timer. */
	struct tcpv v = {0};
	for (int ms = 0; ms < 3000 && !cap_tcp(&r, 0, &v); ms += 10)
		raw_wait_ms(&r, 10);
	assert_int_equal(v.len, 9);
	assert_memory_equal(v.data, "resend me", 9);
	assert_int_equal(v.seq, syn.seq + 1);
	myrio_tcp_abort(c);
	raw_close(&r);
}

/* As Linux without IP_RECVERR: the unreachable ARP's failure stands for is not a hard one,
 * so a connected UDP socket hears nothing (the kernel's SO_ERROR stays 0). */
static void connected_udp_socket_is_not_told(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "arpe", NULL, NULL, false), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 1000, NULL, &u), 0);
	assert_int_equal(myrio_udp_connect(u, 0x0a000063u, 9), 0);
	assert_int_equal(myrio_udp_send(u, small_datagram(&r)), 0);
	for (int i = 0; i < 40; i++)
		raw_wait_ms(&r, 100);
	assert_int_equal(raw_stats(&r).arp_failed, 1);
	assert_int_equal(myrio_udp_error(u), 0);
	assert_int_equal(r.udp_events, 0);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(request_for_us_is_answered_and_learned),
	    cmocka_unit_test(frames_wait_for_resolution),
	    cmocka_unit_test(unresolved_gives_up_and_counts),
	    cmocka_unit_test(static_entries_and_gratuitous_arp),
	    cmocka_unit_test(expired_entry_is_refreshed),
	    cmocka_unit_test(queue_is_bounded_stack_wide),
	    cmocka_unit_test(burst_of_connects_leaves_with_the_arp_reply),
	    cmocka_unit_test(probe_for_our_address_is_answered),
	    cmocka_unit_test(address_conflict_is_counted_and_defended),
	    cmocka_unit_test(connect_to_silent_host_is_unreachable_at_3s),
	    cmocka_unit_test(connect_through_silent_gateway_is_unreachable),
	    cmocka_unit_test(reconnect_from_the_error_callback_resolves_again),
	    cmocka_unit_test(established_peer_gone_is_a_soft_error),
	    cmocka_unit_test(connected_udp_socket_is_not_told),
	    cmocka_unit_test(frames_beyond_the_ring_at_resolution_are_counted_and_tcp_resends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
