/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMP (RFC 792): echo replies (in fragments when the request came in fragments), port
 * unreachable (rate limited), and the errors about what we sent, checked and handed to
 * the transport they concern. */
#include <errno.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define ICMP_ECHO_REPLY 0
#define ICMP_UNREACH 3
#define ICMP_UNREACH_PORT 3
#define ICMP_UNREACH_NEEDFRAG 4
#define ICMP_ECHO 8
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAM_PROBLEM 12
#define ICMP_ERR_HLEN 8	 /* type, code, checksum, 4 bytes that depend on the type */
#define ICMP_QUOTE_L4 8	 /* transport bytes an error quotes at least (RFC 792) */
#define ICMP_BURST 50	 /* outgoing errors: a bucket of 50, */
#define ICMP_TOKEN_MS 1u /* refilled by one a millisecond (Linux's icmp_msgs_*) */

/* What each destination unreachable code means to a transport (Linux's icmp_err_convert):
 * the errno, and whether the peer is unreachable for good (RFC 1122 §4.2.3.9: codes 2 and
 * 3; Linux adds the administrative and unknown-host codes). Code 4 is path MTU discovery. */
static const struct {
	int err;
	bool hard;
} unreach_codes[16] = {
    [0] = {-ENETUNREACH, false},   [1] = {-EHOSTUNREACH, false}, [2] = {-ENOPROTOOPT, true},
    [3] = {-ECONNREFUSED, true},   [4] = {-EMSGSIZE, false},	 [5] = {-EOPNOTSUPP, false},
    [6] = {-ENETUNREACH, true},	   [7] = {-EHOSTDOWN, true},	 [8] = {-ENONET, true},
    [9] = {-ENETUNREACH, true},	   [10] = {-EHOSTUNREACH, true}, [11] = {-ENETUNREACH, false},
    [12] = {-EHOSTUNREACH, false}, [13] = {-EHOSTUNREACH, true}, [14] = {-EHOSTUNREACH, true},
    [15] = {-EHOSTUNREACH, true},
};

/* Decodes an error's type and code; false for the kinds no transport acts on (source
 * quench is deprecated, RFC 6633; redirects need a routing table we do not have). */
static bool error_kind(uint8_t type, uint8_t code, const uint8_t *m, struct icmp_err *e)
{
	switch (type) {
	case ICMP_UNREACH:
		if (code >= sizeof(unreach_codes) / sizeof(unreach_codes[0]))
			return false;
		e->err = unreach_codes[code].err;
		e->hard = unreach_codes[code].hard;
		e->frag_needed = code == ICMP_UNREACH_NEEDFRAG;
		e->mtu = e->frag_needed ? get_be16(m + 6) : 0; /* RFC 1191 §4 */
		return true;
	case ICMP_TIME_EXCEEDED:
		e->err = -EHOSTUNREACH;
		return true;
	case ICMP_PARAM_PROBLEM:
		e->err = -EPROTO;
		return true;
	}
	return false;
}

/* An error about a datagram we sent: the offending IP header and at least 8 bytes of its
 * payload follow the ICMP header (RFC 792, RFC 1122 §3.2.2). Every length is checked
 * before it is used; the quote must describe a first fragment we sent (RFC 5927 §4.1: the
 * transport then matches it against its own state). */
static void icmp_error_input(struct myrio_stack *s, const struct ip_rx *ip)
{
	const uint8_t *m = ip->l4;
	const uint32_t len = ip->l4_len;
	struct icmp_err e = {0};
	if (ip->bcast || !error_kind(m[0], m[1], m, &e))
		return;
	if (len < (uint32_t)ICMP_ERR_HLEN + IP_HLEN + ICMP_QUOTE_L4)
		goto ignored;
	const uint8_t *q = m + ICMP_ERR_HLEN;
	uint32_t qihl = (q[0] & 0x0fu) * 4u;
	if ((q[0] >> 4) != 4 || qihl < IP_HLEN || len < ICMP_ERR_HLEN + qihl + ICMP_QUOTE_L4)
		goto ignored;
	if (get_be32(q + 12) != s->conf.ip || (get_be16(q + 6) & 0x1fff) != 0)
		goto ignored;
	e.dst = get_be32(q + 16);
	const uint8_t *l4 = q + qihl;
	switch (q[9]) {
	case IPPROTO_TCP_:
		if (!shard_icmp_pass(s, &e, l4))
			tcp_icmp_error(s, &e, l4);
		return;
	case IPPROTO_UDP_:
		udp_icmp_error(s, &e, l4);
		return;
	}
ignored:
	s->st.icmp_errors_ignored++;
}

unsigned link_failure_note(const struct myrio_pkt *frame, struct link_failure *notes, unsigned n)
{
	const uint8_t *f = myrio_pkt_data(frame);
	const uint32_t len = frame->len;
	if (len < ETH_HLEN + IP_HLEN + ICMP_QUOTE_L4 || get_be16(f + 12) != ETHERTYPE_IPV4)
		return n;
	const uint8_t *ip = f + ETH_HLEN;
	const uint32_t ihl = (ip[0] & 0x0fu) * 4u;
	if (ihl < IP_HLEN || len < ETH_HLEN + ihl + ICMP_QUOTE_L4 || (get_be16(ip + 6) & 0x1fff))
		return n; /* only a first fragment names its flow */
	struct link_failure l = {.dst = get_be32(ip + 16), .proto = ip[9]};
	memcpy(l.l4, ip + ihl, sizeof(l.l4));
	for (unsigned i = 0; i < n; i++)
		if (notes[i].dst == l.dst && notes[i].proto == l.proto &&
		    !memcmp(notes[i].l4, l.l4, 4))
			return n;
	notes[n] = l;
	return n + 1;
}

void link_failure(struct myrio_stack *s, const struct link_failure *l)
{
	/* Not a hard error: the handshake ends (-EHOSTUNREACH), an open connection keeps it
	 * as its soft error and its own timeout. UDP sockets are not told: Linux tells them
	 * only with IP_RECVERR, as the code is not a hard one. The frame was this stack's,
	 * so is its connection (no sibling to pass it to). */
	const struct icmp_err e = {
	    .dst = l->dst, .err = unreach_codes[1].err, .hard = unreach_codes[1].hard};
	if (l->proto == IPPROTO_TCP_)
		tcp_icmp_error(s, &e, l->l4);
}

void icmp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip)
{
	s->st.icmp_rx++;
	if (ip->l4_len < 8 || csum_fold(csum_add(0, ip->l4, ip->l4_len)) != 0xffff) {
		s->st.drop_icmp++;
		goto out;
	}
	if (ip->l4[0] != ICMP_ECHO) {
		icmp_error_input(s, ip);
		goto out;
	}
	if (ip->bcast)
		goto out;
	if (ip->l4_len > s->mtu - IP_HLEN) {
		/* A request that came in fragments: the reply, made in place in the
		 * reassembled buffer, goes out in fragments too. */
		uint8_t *m = ip->l4;
		m[0] = ICMP_ECHO_REPLY;
		m[1] = 0;
		put_be16(m + 2, 0);
		put_be16(m + 2, csum_finish(csum_add(0, m, ip->l4_len)));
		if (ipv4_output_frags(s, IPPROTO_ICMP_, ip->src, m, ip->l4_len, NULL, 0,
				      IP_DEFAULT_TTL) == 0)
			s->st.icmp_echo_replies++;
		goto out;
	}
	struct myrio_pkt *r = stack_alloc(s);
	if (!r)
		goto out;
	uint8_t *m = myrio_pkt_data(r);
	memcpy(m, ip->l4, ip->l4_len);
	r->len = ip->l4_len;
	m[0] = ICMP_ECHO_REPLY;
	m[1] = 0;
	put_be16(m + 2, 0);
	put_be16(m + 2, csum_finish(csum_add(0, m, r->len)));
	ipv4_output(s, r, IPPROTO_ICMP_, s->conf.ip, ip->src, 0, false);
	s->st.icmp_echo_replies++;
out:
	myrio_pkt_free(p);
}

/* RFC 1812 §4.3.2.8 / RFC 1122 §3.2.2: errors are rate limited, so that a flood of
 * datagrams to closed ports cannot make us flood in turn (a token bucket as Linux's
 * icmp_global_allow). */
static bool icmp_error_allowed(struct myrio_stack *s)
{
	uint64_t gained = (s->now_ms - s->icmp_tokens_ms) / ICMP_TOKEN_MS;
	s->icmp_tokens_ms += gained * ICMP_TOKEN_MS;
	s->icmp_spent = gained >= s->icmp_spent ? 0 : s->icmp_spent - (uint32_t)gained;
	if (s->icmp_spent >= ICMP_BURST) {
		s->st.icmp_unreach_limited++;
		return false;
	}
	s->icmp_spent++;
	return true;
}

void icmp_send_port_unreach(struct myrio_stack *s, const struct myrio_pkt *p,
			    const struct ip_rx *ip)
{
	if (ip->bcast || !icmp_error_allowed(s))
		return;
	struct myrio_pkt *r = stack_alloc(s);
	if (!r)
		return;
	/* The offending IP header and the first 8 bytes of its payload. */
	uint32_t quote = ip->ihl + (ip->l4_len < ICMP_QUOTE_L4 ? ip->l4_len : ICMP_QUOTE_L4);
	uint8_t *m = myrio_pkt_data(r);
	memset(m, 0, ICMP_ERR_HLEN);
	m[0] = ICMP_UNREACH;
	m[1] = ICMP_UNREACH_PORT;
	memcpy(m + ICMP_ERR_HLEN, ip->ip, quote);
	r->len = ICMP_ERR_HLEN + quote;
	put_be16(m + 2, csum_finish(csum_add(0, m, r->len)));
	ipv4_output(s, r, IPPROTO_ICMP_, s->conf.ip, ip->src, 0, false);
	s->st.icmp_unreach_sent++;
}
