/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP input: segment validation and the state machine (RFC 9293 "segment arrives"), with
 * RFC 5961 challenge ACKs, RFC 7323 PAWS and timestamps, in-order delivery through a
 * bounded out-of-order queue, and the ACK side of loss recovery. */
#include <errno.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"

struct seg {
	uint32_t seq, ack, len; /* len: payload bytes */
	uint32_t wnd;		/* raw window field */
	uint8_t flags;
	struct tcp_opts o;
};

#define OOO_FIN (1ull << 32) /* in an out-of-order buffer's user: it carried FIN */
#define TCP_PAWS_IDLE_MS (24ull * 24 * 3600 * 1000) /* RFC 7323 §5.5: 24 days */

static void apply_syn_opts(struct myrio_tcp_conn *c, const struct tcp_opts *o)
{
	const struct myrio_stack_conf *cf = &c->s->conf;
	c->ws_ok = cf->window_scale && o->ws_ok;
	c->snd_wscale = c->ws_ok ? o->wscale : 0;
	if (!c->ws_ok)
		c->rcv_wscale = 0;
	c->ts_ok = cf->timestamps && o->ts_ok;
	if (c->ts_ok)
		tcp_ts_recent_set(c, o->tsval);
	c->sack_ok = cf->sack && o->sack_ok;
	c->mss = tcp_send_mss(c->s, o, c->ts_ok);
	tcp_pmtu_clamp(c);
	cc_init(c);
}

static void passive_open(struct myrio_stack *s, struct myrio_tcp_listener *l,
			 const struct ip_rx *ip, uint16_t sport, uint16_t dport,
			 const struct seg *sg)
{
	if (l->full) { /* as Linux: the peer retries its SYN until the application accepts */
		s->st.drop_tcp_listen_overflow++;
		return;
	}
	if (l->pending >= l->backlog || s->conf.syncookies_always) {
		/* Counted as before (the backlog overflowed), but answered with a cookie. */
		if (l->pending >= l->backlog)
			s->st.drop_tcp_syn_backlog++;
		tcp_syncookie_send(s, l, ip->dst, dport, ip->src, sport, sg->seq, &sg->o);
		return;
	}
	struct myrio_tcp_conn *c = tcp_conn_alloc(s, ip->dst, dport, ip->src, sport);
	if (!c) { /* table full: a cookie needs no slot until the handshake completes */
		tcp_syncookie_send(s, l, ip->dst, dport, ip->src, sport, sg->seq, &sg->o);
		return;
	}
	c->listener = l;
	c->st.segs_in = 1; /* the SYN */
	l->pending++;
	c->passive = true;
	c->user = l->user;
	c->irs = sg->seq;
	c->rcv_nxt = sg->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	apply_syn_opts(c, &sg->o);
	c->snd_wnd = c->max_snd_wnd = sg->wnd; /* never scaled in a SYN */
	c->snd_wl1 = sg->seq;
	c->iss = tcp_isn(s, c->lip, c->lport, c->rip, c->rport);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->snd_end = c->iss + 1;
	c->snd_wl2 = c->iss;
	c->state = MYRIO_TCP_SYN_RCVD;
	c->rtt_start_us = s->now_us;
	s->st.tcp_passive_opens++;
	tcp_send_syn(c);
	tcp_arm_rto(c);
}

/* In-order payload joins the receive queue: copied into the last buffer when small (a
 * reader of tiny segments must not pin a buffer for each), else held (tcp_rxmem.c). */
static inline __attribute__((always_inline)) void rcvq_append(struct myrio_tcp_conn *c,
							      struct myrio_pkt *p)
{
	uint32_t len = p->len;
	c->rcv_held += len;
	c->rcv_nxt += len;
	c->st.bytes_in += len;
	if (len <= TCP_RX_COPY_MAX && c->rcvq_tail && tcp_rx_append_copy(c->s, c->rcvq_tail, p))
		return;
	p->next = NULL;
	if (c->rcvq_tail)
		c->rcvq_tail->next = p;
	else
		c->rcvq = p;
	c->rcvq_tail = p;
	c->s->st.tcp_rx_bufs_held++;
}

static void enter_time_wait(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	c->state = MYRIO_TCP_TIME_WAIT;
	c->t_rtx = 0;
	c->persist = false;
	tcp_event(c, MYRIO_TCP_EV_CLOSED);
	if (s->conf.time_wait_ms == 0) {
		tcp_conn_finish(c, 0);
		return;
	}
	tcp_time_wait_start(c);
}

static void restart_time_wait(struct myrio_tcp_conn *c)
{
	if (c->s->conf.time_wait_ms)
		tcp_time_wait_start(c);
}

static bool fin_acked(const struct myrio_tcp_conn *c)
{
	return c->fin_queued && c->snd_una == c->snd_end;
}

static void fin_in_order(struct myrio_tcp_conn *c)
{
	c->rcv_nxt++;
	c->fin_rcvd = true;
	c->ack_now = true;
	switch (c->state) {
	case MYRIO_TCP_ESTABLISHED:
		c->state = MYRIO_TCP_CLOSE_WAIT;
		break;
	case MYRIO_TCP_FIN_WAIT_1:
		if (fin_acked(c))
			enter_time_wait(c);
		else
			c->state = MYRIO_TCP_CLOSING;
		break;
	case MYRIO_TCP_FIN_WAIT_2:
		enter_time_wait(c);
		break;
	}
}

/* Out-of-order arrival: insert sorted, trimming overlaps, within the bound. */
static void ooo_insert(struct myrio_tcp_conn *c, struct myrio_pkt *p, uint32_t seq, bool fin)
{
	struct myrio_stack *s = c->s;
	struct myrio_pkt **pp = &c->ooo, *prev = NULL;
	while (*pp && seq_le((uint32_t)(*pp)->user, seq)) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (prev) {
		uint32_t pend = (uint32_t)prev->user + prev->len;
		if (seq_ge(pend, seq + p->len)) { /* fully held already */
			c->st.dup_segs++;
			s->st.tcp_dup_segs++;
			myrio_pkt_free(p);
			return;
		}
		if (seq_gt(pend, seq)) {
			myrio_pkt_adj(p, pend - seq);
			seq = pend;
		}
	}
	/* Drop successors the new segment covers; trim against the next one. */
	while (*pp && seq_ge(seq + p->len, (uint32_t)(*pp)->user + (*pp)->len)) {
		struct myrio_pkt *gone = *pp;
		*pp = gone->next;
		tcp_rx_free(s, gone);
		c->ooo_segs--;
	}
	if (*pp && seq_gt(seq + p->len, (uint32_t)(*pp)->user)) {
		p->len = (uint32_t)(*pp)->user - seq;
		fin = false;
	}
	uint32_t len = p->len;
	/* Directly after the segment before it: copied there when small (Linux's collapse). */
	if (prev && (uint32_t)prev->user + prev->len == seq && !(prev->user & OOO_FIN) &&
	    tcp_rx_append_copy(s, prev, p)) {
		prev->user |= fin ? OOO_FIN : 0;
	} else if (c->ooo_segs >= s->conf.ooo_max_segs) {
		s->st.drop_tcp_ooo_full++;
		myrio_pkt_free(p);
		return;
	} else {
		p->user = seq | (fin ? OOO_FIN : 0);
		p->next = *pp;
		*pp = p;
		c->ooo_segs++;
		s->st.tcp_rx_bufs_held++;
	}
	c->ooo_last_seq = seq;
	c->ooo_last_end = seq + len;
	c->st.ooo_segs++;
	s->st.tcp_ooo_segs++;
}

/* The receive pool is low (tcp_rxmem.c): true if the segment may still be held after
 * pruning, as in-order data the connection's queue can take without a new buffer, or
 * as its only buffer while the pool keeps its last sixteenth. */
static bool rx_room_under_pressure(struct myrio_tcp_conn *c, const struct myrio_pkt *p,
				   bool in_order)
{
	tcp_rx_relieve(c, p->pool);
	if (!tcp_rx_pool_low(p->pool) || !in_order)
		return !tcp_rx_pool_low(p->pool);
	if (c->rcvq_tail)
		return tcp_rx_copy_fits(c->rcvq_tail, p);
	return myrio_pool_free_count(p->pool) > p->pool->count >> 4;
}

/* Payload (and FIN) of an acceptable segment in a state that receives; owns p. */
static void receive_data(struct myrio_tcp_conn *c, struct myrio_pkt *p, uint32_t seq, bool fin)
{
	struct myrio_stack *s = c->s;
	uint32_t len = p->len;
	if (seq_lt(seq, c->rcv_nxt)) {
		uint32_t d = c->rcv_nxt - seq;
		c->st.dup_segs++;
		s->st.tcp_dup_segs++;
		if (d > len) { /* everything, FIN included, seen before */
			myrio_pkt_free(p);
			c->ack_now = true;
			return;
		}
		myrio_pkt_adj(p, d);
		seq = c->rcv_nxt;
		len -= d;
	}
	uint32_t wnd = tcp_rcv_window(c);
	if (seq_gt(seq + len, c->rcv_nxt + wnd)) {
		len = c->rcv_nxt + wnd - seq;
		if (seq_lt(c->rcv_nxt + wnd, seq))
			len = 0;
		p->len = len;
		fin = false;
		s->st.drop_tcp_rcv_full++;
		c->ack_now = true;
	}
	if (len == 0 && !fin) {
		myrio_pkt_free(p);
		c->ack_now = true;
		return;
	}
	if (__builtin_expect(len && tcp_rx_pool_low(p->pool), 0) &&
	    !rx_room_under_pressure(c, p, seq == c->rcv_nxt)) {
		/* Not acknowledged: the sender retransmits once memory is back. */
		s->st.drop_tcp_rx_pressure++;
		myrio_pkt_free(p);
		c->ack_now = true;
		return;
	}
	if (seq != c->rcv_nxt) {
		if (len == 0) {
			myrio_pkt_free(p);
		} else {
			ooo_insert(c, p, seq, fin);
		}
		/* RFC 5681 §4.2: a duplicate ACK (with SACK blocks) for every out-of-order
		 * segment at once, not one per burst, so the sender can count them. */
		tcp_send_ack(c);
		return;
	}
	bool had_ooo = c->ooo != NULL;
	if (len)
		rcvq_append(c, p);
	else
		myrio_pkt_free(p);
	c->delack_segs++;
	if (fin)
		fin_in_order(c);
	/* Pull what the new data made contiguous. */
	while (!c->fin_rcvd && c->ooo && seq_le((uint32_t)c->ooo->user, c->rcv_nxt)) {
		struct myrio_pkt *q = c->ooo;
		c->ooo = q->next;
		c->ooo_segs--;
		uint32_t qseq = (uint32_t)q->user;
		bool qfin = q->user & OOO_FIN;
		uint32_t d = c->rcv_nxt - qseq;
		if (d >= q->len && !(qfin && d == q->len)) {
			tcp_rx_free(s, q);
			continue;
		}
		myrio_pkt_adj(q, d);
		s->st.tcp_rx_bufs_held--; /* counted again if rcvq_append holds it */
		if (q->len)
			rcvq_append(c, q);
		else
			myrio_pkt_free(q);
		if (qfin)
			fin_in_order(c);
	}
	if (had_ooo)
		c->ack_now = true;   /* RFC 5681 §4.2: ACK at once when a hole fills */
	if (c->fin_rcvd && c->ooo) { /* nothing can follow a FIN */
		tcp_rx_free_chain(s, c->ooo);
		c->ooo = NULL;
		c->ooo_segs = 0;
	}
	tcp_event(c, MYRIO_TCP_EV_READABLE);
}

static void syn_sent(struct myrio_tcp_conn *c, struct myrio_pkt *p, const struct ip_rx *ip,
		     const uint8_t *th, const struct seg *sg)
{
	struct myrio_stack *s = c->s;
	bool ack = sg->flags & TH_ACK;
	myrio_pkt_free(p);
	if (ack && (seq_le(sg->ack, c->iss) || seq_gt(sg->ack, c->snd_max))) {
		tcp_send_rst_reply(s, ip, th, sg->len);
		return;
	}
	if (sg->flags & TH_RST) {
		if (ack) {
			s->st.tcp_resets_rcvd++;
			tcp_conn_finish(c, -ECONNREFUSED);
		}
		return;
	}
	if (!(sg->flags & TH_SYN))
		return;
	c->irs = sg->seq;
	c->rcv_nxt = sg->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	apply_syn_opts(c, &sg->o);
	if (!ack) { /* simultaneous open */
		c->state = MYRIO_TCP_SYN_RCVD;
		c->snd_wnd = c->max_snd_wnd = sg->wnd;
		tcp_send_syn(c);
		return;
	}
	tcp_rtt_handshake(c, (uint32_t)(s->now_us - c->rtt_start_us));
	c->snd_una = sg->ack;
	c->snd_wnd = c->max_snd_wnd = sg->wnd; /* never scaled in a SYN */
	c->snd_wl1 = sg->seq;
	c->snd_wl2 = sg->ack;
	c->state = MYRIO_TCP_ESTABLISHED;
	c->retries = 0;
	c->t_rtx = 0;
	s->st.tcp_conns_established++;
	tcp_send_ack(c);
	tcp_event(c, MYRIO_TCP_EV_CONNECTED);
}

static bool seq_acceptable(struct myrio_tcp_conn *c, const struct seg *sg, uint32_t seglen)
{
	uint32_t wnd = tcp_rcv_window(c);
	uint32_t nxt = c->rcv_nxt;
	if (seglen == 0)
		return wnd == 0 ? sg->seq == nxt
				: seq_ge(sg->seq, nxt) && seq_lt(sg->seq, nxt + wnd);
	if (wnd == 0)
		return false;
	return (seq_ge(sg->seq, nxt) && seq_lt(sg->seq, nxt + wnd)) ||
	       (seq_ge(sg->seq + seglen - 1, nxt) && seq_lt(sg->seq + seglen - 1, nxt + wnd));
}

static void retransmit_head(struct myrio_tcp_conn *c)
{
	struct myrio_pkt *p = c->sndq;
	if (!p || p == c->snd_next)
		return;
	seg_set_flags(p, seg_flags(p) | SEG_LOST);
	if (tcp_xmit_seg(c, p, true) == 0) {
		seg_set_flags(p, seg_flags(p) | SEG_RETX | SEG_EVER_RETX);
		c->retx_ms = c->s->now_ms;
		tcp_arm_rto(c); /* with the lost-retransmission probe */
	} else
		seg_set_flags(p, seg_flags(p) & ~SEG_RETX);
}

static void process_ack(struct myrio_tcp_conn *c, const struct seg *sg)
{
	struct myrio_stack *s = c->s;
	uint32_t ack = sg->ack;
	uint32_t wnd = sg->wnd << c->snd_wscale;
	if (c->sack_ok && sg->o.nsack) {
		tcp_sack_update(c, &sg->o);
		if (c->in_recovery)
			tcp_sack_relost(c, false);
	}
	if (seq_gt(ack, c->snd_una)) {
		uint32_t acked = ack - c->snd_una;
		/* One microsecond-timed segment per round trip (Karn's rule), since NIC round
		 * trips are far below the 1 ms timestamp clock; timestamp echoes (RFC 7323)
		 * add samples only where that clock resolves them. */
		if (c->rtt_timing && seq_ge(ack, c->rtt_seq)) {
			c->rtt_timing = false;
			tcp_rtt_sample(c, (uint32_t)(s->now_us - c->rtt_start_us));
		} else if (c->ts_ok && sg->o.ts_ok && sg->o.tsecr) {
			uint32_t r = (uint32_t)s->now_ms - sg->o.tsecr;
			if (r >= 10 && r < 60000)
				tcp_rtt_sample(c, r * 1000u);
		}
		struct myrio_pkt *p;
		while ((p = c->sndq) != NULL && seq_le(seg_seq(p) + seg_space(p), ack)) {
			c->sndq = p->next;
			if (c->snd_next == p)
				c->snd_next = p->next;
			c->sndq_segs--;
			myrio_pkt_free(p);
		}
		if (!c->sndq)
			c->sndq_tail = NULL;
		c->snd_una = ack;
		if (seq_lt(c->snd_nxt, ack))
			c->snd_nxt = ack;
		c->retries = 0;
		c->persist_backoff = 0;
		c->tlp_done = false;
		if (c->in_recovery) {
			if (seq_ge(ack, c->recover)) {
				cc_exit_recovery(c);
			} else if (c->sndq && !(seg_flags(c->sndq) & (SEG_SACKED | SEG_RETX))) {
				/* Partial ACK (RFC 6582): the next hole is lost too; resend it now,
				 * unless this recovery resent it already (RFC 6675 NextSeg 1.a:
				 * only above HighRxt; tcp_sack_relost finds it if it is lost
				 * again).
				 */
				retransmit_head(c);
			}
		} else {
			cc_on_ack(c, acked);
		}
		c->dupacks = 0;
		if (c->snd_una == c->snd_max)
			c->t_rtx = 0;
		else
			tcp_arm_rto(c);
		if (c->want_writable && c->sndq_segs < s->conf.snd_queue_segs) {
			c->want_writable = false;
			tcp_event(c, MYRIO_TCP_EV_WRITABLE);
		}
	} else if (ack == c->snd_una && sg->len == 0 && !(sg->flags & TH_FIN) && wnd &&
		   wnd == c->snd_wnd && c->snd_max != c->snd_una) {
		/* (A closed window's ACKs answer window probes, they tell of no loss.) */
		c->dupacks++;
	}
	if (!c->in_recovery && c->sndq && c->snd_max != c->snd_una &&
	    (c->dupacks >= 3 || (c->sack_ok && (seg_flags(c->sndq) & SEG_LOST))) &&
	    cc_loss_signal_ok(c)) {
		cc_enter_recovery(c);
		c->rtt_timing = false; /* Karn: the timed segment may be resent now */
		retransmit_head(c);    /* RFC 6675 §5 (4.3): at once, whatever the pipe says */
		s->st.tcp_fast_retransmits++;
		c->st.fast_retransmits++;
	}
	if (seq_lt(c->snd_wl1, sg->seq) || (c->snd_wl1 == sg->seq && seq_le(c->snd_wl2, ack))) {
		c->snd_wnd = wnd;
		c->snd_wl1 = sg->seq;
		c->snd_wl2 = ack;
		if (wnd > c->max_snd_wnd)
			c->max_snd_wnd = wnd;
		if (wnd && c->persist) {
			c->persist = false;
			c->t_rtx = 0;
		}
	}
}

/* New data (or a FIN out of order) that nobody will read, which RFC 1122 §4.2.2.13 and Linux's
 * tcp_rcv_state_process answer with a RST ending the connection rather than acknowledge and
 * lose it: in FIN_WAIT_1 and FIN_WAIT_2 once the application closed or stopped reading, and
 * in CLOSE_WAIT, CLOSING and LAST_ACK whatever starts at or beyond the peer's FIN (a
 * retransmission from before it is only acknowledged). */
static bool data_for_nobody(const struct myrio_tcp_conn *c, const struct seg *sg)
{
	bool nobody;
	switch (c->state) {
	case MYRIO_TCP_FIN_WAIT_1:
	case MYRIO_TCP_FIN_WAIT_2:
		nobody = c->rcv_shut;
		break;
	case MYRIO_TCP_CLOSE_WAIT:
	case MYRIO_TCP_CLOSING:
	case MYRIO_TCP_LAST_ACK:
		nobody = seq_ge(sg->seq, c->rcv_nxt);
		break;
	default: /* ESTABLISHED, the data path: one comparison */
		return false;
	}
	/* and something new (the caller saw payload or a FIN) */
	return nobody && seq_gt(sg->seq + sg->len, c->rcv_nxt);
}

static void established_input(struct myrio_tcp_conn *c, struct myrio_pkt *p, const struct ip_rx *ip,
			      const uint8_t *th, struct seg *sg)
{
	struct myrio_stack *s = c->s;
	uint32_t seglen =
	    sg->len + ((sg->flags & TH_SYN) ? 1u : 0u) + ((sg->flags & TH_FIN) ? 1u : 0u);
	c->last_rcv_ms = s->now_ms; /* the peer is alive (keepalive) */
	/* PAWS (RFC 7323 §5.3); a ts_recent older than 24 days may be from before the peer's
	 * clock wrapped and is no longer valid (§5.5): the segment passes and renews it. */
	if (c->ts_ok && sg->o.ts_ok && !(sg->flags & TH_RST) && seq_lt(sg->o.tsval, c->ts_recent) &&
	    s->now_ms - c->ts_recent_ms < TCP_PAWS_IDLE_MS) {
		s->st.tcp_paws_drops++;
		if (!tcp_oow_limited(c, th, seglen))
			tcp_send_ack(c);
		goto drop;
	}
	/* Simultaneous open (RFC 9293 §3.5 figure 8): the peer's SYN-ACK in SYN_RCVD acknowledges
	 * our SYN; its SYN is the one already taken in SYN_SENT. */
	if (__builtin_expect(c->state == MYRIO_TCP_SYN_RCVD, 0) && !c->passive &&
	    (sg->flags & (TH_SYN | TH_ACK | TH_RST)) == (TH_SYN | TH_ACK) && sg->seq == c->irs &&
	    sg->ack == c->snd_nxt) {
		sg->flags &= (uint8_t)~TH_SYN;
		sg->seq++;
		seglen--;
	} else if (c->state == MYRIO_TCP_SYN_RCVD &&
		   (sg->flags & (TH_SYN | TH_ACK | TH_RST | TH_FIN)) == TH_SYN &&
		   sg->seq == c->irs) {
		/* The peer's SYN again: our SYN-ACK was lost; send it again, not a bare ACK. */
		if (!tcp_oow_limited(c, th, seglen))
			tcp_send_syn(c);
		goto drop;
	}
	if (!seq_acceptable(c, sg, seglen)) {
		c->st.drops_out_of_window++;
		s->st.drop_tcp_out_of_window++;
		if (seq_lt(sg->seq, c->rcv_nxt)) {
			c->st.dup_segs++;
			s->st.tcp_dup_segs++;
		}
		/* RFC 9293 §3.10.7.4: in TIME_WAIT, a retransmitted FIN is acknowledged and
		 * restarts the 2 MSL wait. */
		if (c->state == MYRIO_TCP_TIME_WAIT && (sg->flags & TH_FIN) &&
		    sg->seq + seglen == c->rcv_nxt)
			restart_time_wait(c);
		if (!(sg->flags & TH_RST) && !tcp_oow_limited(c, th, seglen))
			tcp_send_ack(c);
		goto drop;
	}
	if (sg->flags & TH_RST) {
		/* RFC 5961 §3: only an exact match resets; in-window gets a challenge. */
		if (sg->seq == c->rcv_nxt) {
			s->st.tcp_resets_rcvd++;
			bool quiet = c->state == MYRIO_TCP_SYN_RCVD && c->passive;
			bool closing = c->state == MYRIO_TCP_CLOSING ||
				       c->state == MYRIO_TCP_LAST_ACK ||
				       c->state == MYRIO_TCP_TIME_WAIT;
			/* as Linux's tcp_reset: after the peer's FIN, the next call says EPIPE */
			int err = c->state == MYRIO_TCP_CLOSE_WAIT ? -EPIPE : -ECONNRESET;
			tcp_conn_finish(c, quiet || closing ? 0 : err);
		} else {
			tcp_challenge_ack(c);
		}
		goto drop;
	}
	if (sg->flags & TH_SYN) {
		tcp_challenge_ack(c); /* RFC 5961 §4 */
		goto drop;
	}
	if (!(sg->flags & TH_ACK))
		goto drop;
	if (c->state == MYRIO_TCP_SYN_RCVD) {
		if (!seq_gt(sg->ack, c->snd_una) || seq_gt(sg->ack, c->snd_max)) {
			tcp_send_rst_reply(s, ip, th, sg->len);
			goto drop;
		}
		if (c->listener && c->listener->full) {
			/* The accept queue is full: stay SYN_RCVD; the SYN-ACK's retransmission
			 * brings the ACK again (Linux, tcp_abort_on_overflow=0). */
			s->st.drop_tcp_listen_overflow++;
			goto drop;
		}
		c->state = c->fin_queued ? MYRIO_TCP_FIN_WAIT_1 : MYRIO_TCP_ESTABLISHED;
		c->snd_wl1 = sg->seq - 1; /* take this segment's window */
		struct myrio_tcp_listener *l = c->listener;
		if (c->listener) {
			c->listener->pending--;
			c->listener = NULL;
		}
		tcp_rtt_handshake(c, (uint32_t)(s->now_us - c->rtt_start_us));
		c->retries = 0;
		s->st.tcp_conns_established++;
		if (c->passive) {
			c->app_owned = true;
			tcp_accepted(l, c);
		} else { /* simultaneous open: the handle connect() returned */
			tcp_event(c, MYRIO_TCP_EV_CONNECTED);
		}
		if (c->state == MYRIO_TCP_CLOSED)
			goto drop;
	}
	/* RFC 5961 §5: ACKs for data never sent, or far below, are challenged. */
	if (seq_gt(sg->ack, c->snd_max) || seq_lt(sg->ack, c->snd_una - c->max_snd_wnd)) {
		s->st.drop_tcp_bad_ack++;
		tcp_challenge_ack(c);
		goto drop;
	}
	if (c->ts_ok && sg->o.ts_ok && seq_le(sg->seq, c->last_ack_sent))
		tcp_ts_recent_set(c, sg->o.tsval);
	process_ack(c, sg);
	if (fin_acked(c)) {
		if (c->state == MYRIO_TCP_FIN_WAIT_1) {
			c->state = MYRIO_TCP_FIN_WAIT_2;
			if (!c->app_owned) { /* orphan: the FIN_WAIT_2 timeout starts now */
				c->t_2msl = s->now_ms + s->conf.time_wait_ms;
				tcp_timer_arm(c, c->t_2msl);
			}
		} else if (c->state == MYRIO_TCP_CLOSING) {
			enter_time_wait(c);
		} else if (c->state == MYRIO_TCP_LAST_ACK) {
			tcp_conn_finish(c, 0);
			goto drop;
		}
	}
	if (sg->len || (sg->flags & TH_FIN)) {
		if (__builtin_expect(data_for_nobody(c, sg), 0)) {
			s->st.tcp_abort_on_data++;
			tcp_send_rst_reply(s, ip, th, seglen);
			/* the error a RST from the peer would leave (Linux's tcp_reset) */
			tcp_conn_finish(c, c->state == MYRIO_TCP_CLOSE_WAIT ? -EPIPE : -ECONNRESET);
			goto drop;
		}
		switch (c->state) {
		case MYRIO_TCP_FIN_WAIT_1:
		case MYRIO_TCP_FIN_WAIT_2:
		case MYRIO_TCP_ESTABLISHED:
			receive_data(c, p, sg->seq, sg->flags & TH_FIN);
			p = NULL;
			break;
		case MYRIO_TCP_TIME_WAIT: /* FIN retransmitted: ACK, restart 2MSL */
			c->ack_now = true;
			restart_time_wait(c);
			break;
		default: /* from before the peer's FIN (data_for_nobody): acknowledged again */
			c->ack_now = true;
			break;
		}
	}
	if (c->state != MYRIO_TCP_CLOSED)
		tcp_mark_output(c);
drop:
	if (p)
		myrio_pkt_free(p);
}

/* RFC 6191 §2: with timestamps on both incarnations, a SYN whose TSval is newer than the
 * TIME_WAIT's last takes it over whatever its sequence number, an older one never; with
 * equal TSvals or without timestamps its sequence number must be above the old
 * connection's (RFC 9293 §3.6.1). */
static bool time_wait_reusable(const struct myrio_tcp_conn *c, const struct seg *sg)
{
	if (c->ts_ok && sg->o.ts_ok && sg->o.tsval != c->ts_recent)
		return seq_gt(sg->o.tsval, c->ts_recent);
	return seq_gt(sg->seq, c->rcv_nxt);
}

/* RFC 1122 §3.2.1.3 and §4.2.3.10: no connection is opened, and nothing is answered, for a
 * source that is not one host's unicast address: 0.0.0.0, loopback, broadcast (limited or
 * this subnet's), multicast, or our own (ipv4.c turns away the last three already for
 * every protocol; they are checked again where a connection would be opened). */
static bool source_may_connect(const struct myrio_stack *s, const struct ip_rx *ip)
{
	uint32_t src = ip->src, mask = s->conf.netmask;
	uint32_t subnet_bcast = (s->conf.ip & mask) | ~mask;
	return src != 0 && (src >> 24) != 127 && (src >> 28) != 0xe && src != 0xffffffffu &&
	       src != s->conf.ip && !(mask && src == subnet_bcast);
}

void tcp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip)
{
	s->st.tcp_segs_in++;
	const uint8_t *th = ip->l4;
	if (ip->l4_len < TCP_HLEN) {
		s->st.drop_tcp_short++;
		goto drop;
	}
	unsigned hlen = (th[12] >> 4) * 4u;
	if (hlen < TCP_HLEN || hlen > ip->l4_len) {
		s->st.drop_tcp_bad_off++;
		goto drop;
	}
	if (!ipv4_l4_csum_ok(s, p, ip, IPPROTO_TCP_)) {
		s->st.drop_tcp_csum++;
		goto drop;
	}
	struct seg sg;
	sg.seq = get_be32(th + 4);
	sg.ack = get_be32(th + 8);
	sg.flags = th[13];
	sg.wnd = get_be16(th + 14);
	sg.len = ip->l4_len - hlen;
	tcp_opts_parse(th + TCP_HLEN, hlen - TCP_HLEN, sg.flags & TH_SYN, &sg.o);
	uint16_t sport = get_be16(th), dport = get_be16(th + 2);
	/* The buffer now holds exactly the payload (Ethernet padding cut off). */
	p->data_off = (uint32_t)(th + hlen - p->buf);
	p->len = sg.len;

	struct myrio_tcp_conn *c = tcp_lookup(s, ip->dst, dport, ip->src, sport);
	if (c && c->state == MYRIO_TCP_TIME_WAIT &&
	    (sg.flags & (TH_SYN | TH_ACK | TH_RST)) == TH_SYN && time_wait_reusable(c, &sg) &&
	    !c->app_owned && !c->on_output && !c->zombie) {
		/* A new incarnation may take over a TIME_WAIT (RFC 9293 §3.6.1). */
		tcp_conn_free(c);
		c = NULL;
	}
	if (!c || c->state == MYRIO_TCP_CLOSED) {
		if (!source_may_connect(s, ip)) {
			s->st.drop_tcp_bad_src++;
			goto drop;
		}
		struct myrio_tcp_listener *l = c ? NULL : tcp_listener_find(s, dport);
		bool cookie_valid = false;
		if (l && (sg.flags & (TH_SYN | TH_ACK | TH_RST | TH_FIN)) == TH_SYN) {
			passive_open(s, l, ip, sport, dport, &sg);
		} else if (l && l->full && (sg.flags & (TH_SYN | TH_ACK | TH_RST)) == TH_ACK) {
			s->st.drop_tcp_listen_overflow++; /* a cookie's ACK: the peer retries */
		} else if (l && (sg.flags & (TH_SYN | TH_ACK | TH_RST)) == TH_ACK &&
			   (c = tcp_syncookie_check(s, l, ip->dst, dport, ip->src, sport, sg.seq,
						    sg.ack, &sg.o, &cookie_valid)) != NULL) {
			c->st.segs_in++;
			established_input(c, p, ip, th, &sg);
			return;
		} else if (!cookie_valid) { /* valid with the table full: the peer retries */
			s->st.drop_tcp_no_conn++;
			uint32_t seglen = sg.len + ((sg.flags & TH_SYN) ? 1u : 0u) +
					  ((sg.flags & TH_FIN) ? 1u : 0u);
			tcp_send_rst_reply(s, ip, th, seglen);
		}
		goto drop;
	}
	c->st.segs_in++;
	if (c->state == MYRIO_TCP_SYN_SENT) {
		syn_sent(c, p, ip, th, &sg);
		return;
	}
	established_input(c, p, ip, th, &sg);
	return;
drop:
	myrio_pkt_free(p);
}
