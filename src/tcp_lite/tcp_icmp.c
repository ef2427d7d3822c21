/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMP errors for TCP connections (RFC 1122 §4.2.3.9, checked as RFC 5927 says) and path
 * MTU discovery (RFC 1191): the MSS follows the smallest MTU on the way, and what was sent
 * too large for it is cut to the new size and sent again. */
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"

/* Bytes in front of the payload of a data segment: the MSS is what is left of the MTU. */
static uint32_t seg_overhead(struct myrio_tcp_conn *c)
{
	return IP_HLEN + TCP_HLEN + tcp_opts_len(c, false);
}

/* Replaces the queued data segment p (after prev) by copies of at most mss bytes each. p
 * itself may still be read by the NIC, wait in the ARP queue or head a TSO chain, so it
 * is not changed: only the queue lets go of it. Returns the last copy (*first the first),
 * or NULL, changing nothing, when the pool cannot spare the buffers. */
static struct myrio_pkt *split_seg(struct myrio_tcp_conn *c, struct myrio_pkt *prev,
				   struct myrio_pkt *p, struct myrio_pkt **first)
{
	struct myrio_stack *s = c->s;
	const uint32_t len = seg_len(p), mss = c->mss, n = (len + mss - 1) / mss;
	if (myrio_pool_free_count(s->pool) < n + s->ctl_reserve)
		return NULL;
	const uint8_t *payload = p->buf + p->data_off + seg_hlen(p);
	struct myrio_pkt *last = NULL;
	*first = NULL;
	for (uint32_t off = 0; off < len; off += mss) {
		uint32_t k = len - off < mss ? len - off : mss;
		struct myrio_pkt *q = stack_alloc(s); /* counted above: cannot fail */
		memcpy(myrio_pkt_data(q), payload + off, k);
		q->len = k;
		seg_set(q, seg_seq(p) + off, k, 0, seg_flags(p));
		q->next = NULL;
		if (last)
			last->next = q;
		else
			*first = q;
		last = q;
	}
	last->next = p->next;
	if (prev)
		prev->next = *first;
	else
		c->sndq = *first;
	if (c->sndq_tail == p)
		c->sndq_tail = last;
	if (c->snd_next == p)
		c->snd_next = *first;
	c->sndq_segs += n - 1;
	myrio_pkt_free(p);
	return last;
}

/* Cuts every queued segment longer than the MSS (as Linux's tcp_simple_retransmit): those
 * sent already were dropped by the hop that reported the smaller MTU, so sending goes back
 * to the first of them at once instead of waiting for the RTO. Segments the pool has no
 * buffers for now stay as they are; the next error for them tries again. */
static void resegment(struct myrio_tcp_conn *c)
{
	struct myrio_pkt *prev = NULL, *resend = NULL;
	bool before_next = true; /* before the first segment not sent yet */
	for (struct myrio_pkt *p = c->sndq; p;) {
		struct myrio_pkt *next = p->next, *first;
		if (p == c->snd_next)
			before_next = false;
		if (seg_len(p) > c->mss) {
			struct myrio_pkt *last = split_seg(c, prev, p, &first);
			if (!last)
				break;
			if (before_next && !resend)
				resend = first;
			p = last;
		}
		prev = p;
		p = next;
	}
	/* Copies of a segment acknowledged in part may lie wholly below snd_una: resending
	 * starts at the first that is not acknowledged, and snd_nxt never goes below snd_una. */
	while (resend && resend != c->snd_next &&
	       seq_le(seg_seq(resend) + seg_len(resend), c->snd_una))
		resend = resend->next;
	if (!resend || resend == c->snd_next)
		return;
	c->snd_next = resend;
	c->snd_nxt = seq_lt(seg_seq(resend), c->snd_una) ? c->snd_una : seg_seq(resend);
	c->rtt_timing = false; /* Karn: the resent segments give no RTT sample */
	tcp_output(c);
}

/* RFC 1191 §6.2 with the checks of RFC 5927 §7: an MTU larger than the one in use says
 * nothing we act on, and one below the floor is not believed (a forged error must not make
 * us send tiny segments). Equal to it: segments still too large are cut (see resegment). */
static bool pmtu_lower(struct myrio_tcp_conn *c, uint32_t mtu)
{
	const uint32_t hdrs = seg_overhead(c);
	if (mtu < PMTU_MIN || mtu > c->mss + hdrs)
		return false;
	pmtu_set(c->s, c->rip, mtu);
	if (mtu < c->mss + hdrs) {
		if (!c->mss_unclamped)
			c->mss_unclamped = c->mss;
		c->mss = (uint16_t)(mtu - hdrs);
		c->s->st.tcp_pmtu_lowered++;
	}
	resegment(c);
	return true;
}

void tcp_pmtu_clamp(struct myrio_tcp_conn *c)
{
	const uint32_t mtu = pmtu_get(c->s, c->rip), hdrs = seg_overhead(c);
	c->mss_unclamped = 0;
	if (mtu && mtu < c->mss + hdrs) {
		c->mss_unclamped = c->mss;
		c->mss = (uint16_t)(mtu - hdrs);
	}
}

void tcp_pmtu_raise(struct myrio_stack *s, uint32_t dst)
{
	for (uint32_t i = 0; i < s->nconns; i++) {
		struct myrio_tcp_conn *c = &s->conns[i];
		if (c->in_use && c->rip == dst && c->mss_unclamped) {
			c->mss = c->mss_unclamped;
			c->mss_unclamped = 0;
		}
	}
}

void tcp_icmp_error(struct myrio_stack *s, const struct icmp_err *e, const uint8_t *th)
{
	struct myrio_tcp_conn *c =
	    tcp_lookup(s, s->conf.ip, get_be16(th), e->dst, get_be16(th + 2));
	const uint32_t seq = get_be32(th + 4);
	/* RFC 5927 §4.1 (as Linux): only a segment of ours not yet acknowledged can have
	 * caused the error; an off-path attacker would have to guess its sequence number. */
	if (!c || c->state == MYRIO_TCP_CLOSED || c->state == MYRIO_TCP_TIME_WAIT ||
	    seq_lt(seq, c->snd_una) || seq_gt(seq, c->snd_max)) {
		s->st.icmp_errors_ignored++;
		return;
	}
	if (e->frag_needed) {
		if (pmtu_lower(c, e->mtu))
			s->st.icmp_errors_rx++;
		else
			s->st.icmp_errors_ignored++;
		return;
	}
	s->st.icmp_errors_rx++;
	/* The handshake ends at any error (Linux; RFC 1122 §4.2.3.9 asks it for the hard ones
	 * at least), a half-open passive connection only at a hard one. Synchronised
	 * connections keep trying (RFC 5927 §5.2): the error is kept for the application
	 * and for the report if the connection times out. */
	if (c->state == MYRIO_TCP_SYN_SENT || (c->state == MYRIO_TCP_SYN_RCVD && e->hard)) {
		s->st.tcp_icmp_aborts++;
		tcp_conn_finish(c, e->err);
		return;
	}
	c->soft_error = e->err;
	c->soft_error_una = c->snd_una;
}

int tcp_soft_error(const struct myrio_tcp_conn *c)
{
	/* Stale once the peer acknowledged something since (Linux clears it on progress). */
	return c->soft_error && c->snd_una == c->soft_error_una ? c->soft_error : 0;
}

int myrio_tcp_soft_error(const struct myrio_tcp_conn *c)
{
	return tcp_soft_error(c);
}
