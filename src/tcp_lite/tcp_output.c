/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP output: segments from the send queue (zero copy: headers go in front of the
 * application's payload, in its buffer), control segments (SYN, ACK, RST), the
 * advertised window.
 *
 * With TSO (§5.6) consecutive new full-MSS segments of the queue go to the NIC as one
 * request: headers in front of the first one's payload, the others chained behind it
 * (they are linked by next in the queue already). Every segment stays a queued segment of
 * its own for acknowledgement, SACK and retransmission; retransmissions go one by one. */
#include <errno.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"

uint32_t tcp_rcv_window(struct myrio_tcp_conn *c)
{
	uint32_t buf = c->s->conf.rcv_buf;
	uint32_t space = buf > c->rcv_held ? buf - c->rcv_held : 0;
	uint32_t adv = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	/* Never move the right edge back (RFC 7323 §2.4), and only move it forward by a
	 * useful amount (receiver SWS avoidance, RFC 1122 §4.2.3.3): a window that changes
	 * with every released buffer would also spoil the sender's duplicate-ACK count. */
	uint32_t step = c->s->mss < buf / 2 ? c->s->mss : buf / 2;
	if (space < adv || space - adv < step)
		space = adv;
	uint32_t max = c->ws_ok ? 65535u << c->rcv_wscale : 65535u;
	return space < max ? space : max;
}

/* Ack and window fields; remembers what was advertised. */
static void fill_ack(struct myrio_tcp_conn *c, uint8_t *th, bool syn)
{
	uint32_t wnd = tcp_rcv_window(c);
	uint32_t field;
	if (syn || !c->ws_ok) {
		field = wnd > 65535 ? 65535 : wnd;
	} else {
		field = wnd >> c->rcv_wscale;
		if (seq_lt(c->rcv_nxt + (field << c->rcv_wscale), c->rcv_adv))
			field++; /* rounding must not shrink the window either */
		if (field > 65535)
			field = 65535;
	}
	uint32_t edge = c->rcv_nxt + (syn || !c->ws_ok ? field : field << c->rcv_wscale);
	if (seq_gt(edge, c->rcv_adv))
		c->rcv_adv = edge;
	put_be32(th + 8, c->rcv_nxt);
	put_be16(th + 14, (uint16_t)field);
	c->last_ack_sent = c->rcv_nxt;
	c->delack_segs = 0;
	c->ack_now = false;
	c->t_delack = 0;
}

static void write_hdr(const struct myrio_tcp_conn *c, uint8_t *th, uint32_t seq, uint8_t flags,
		      unsigned hlen)
{
	put_be16(th, c->lport);
	put_be16(th + 2, c->rport);
	put_be32(th + 4, seq);
	put_be32(th + 8, 0);
	th[12] = (uint8_t)((hlen / 4) << 4);
	th[13] = flags;
	put_be16(th + 14, 0);
	put_be16(th + 16, 0);
	put_be16(th + 18, 0);
}

static int send_frame(struct myrio_tcp_conn *c, struct myrio_pkt *f)
{
	struct myrio_stack *s = c->s;
	s->st.tcp_segs_out++;
	c->st.segs_out++;
	return ipv4_output(s, f, IPPROTO_TCP_, c->lip, c->rip, 0, true);
}

/* Cuts queued segment p after len payload bytes: the rest moves into a new buffer queued
 * right behind it, with p's flags, so it goes (or is resent) next. -ENOBUFS without one. */
static int seg_split(struct myrio_tcp_conn *c, struct myrio_pkt *p, uint32_t len)
{
	struct myrio_pkt *q = stack_alloc(c->s);
	if (!q)
		return -ENOBUFS;
	uint32_t rest = seg_len(p) - len;
	memcpy(myrio_pkt_data(q), p->buf + p->data_off + seg_hlen(p) + len, rest);
	q->len = rest;
	seg_set(q, seg_seq(p) + len, rest, 0, seg_flags(p));
	seg_set(p, seg_seq(p), len, seg_hlen(p), seg_flags(p));
	q->next = p->next;
	p->next = q;
	if (c->sndq_tail == p)
		c->sndq_tail = q;
	c->sndq_segs++;
	return 0;
}

/* Whether SACK blocks are due on what we send (tcp_opts_len adds them then). */
static bool sack_due(const struct myrio_tcp_conn *c)
{
	return c->sack_ok && c->ooo;
}

int tcp_xmit_seg(struct myrio_tcp_conn *c, struct myrio_pkt *p, bool retx)
{
	struct myrio_stack *s = c->s;
	bool with_sack = true;
	unsigned optlen = tcp_opts_len(c, true);
	if (sack_due(c)) {
		/* RFC 9293 MUST-16, RFC 6691: the options of this segment count against the
		 * peer's MSS, which c->mss allows only for the timestamps. Cut the segment to fit
		 * its SACK blocks (as Linux fragments it); without a buffer for that, leave the
		 * blocks out instead (pure ACKs still carry them). */
		uint32_t fit = c->mss + tcp_opts_len(c, false) - optlen;
		if (seg_len(p) > fit && seg_split(c, p, fit) < 0) {
			with_sack = false;
			optlen = tcp_opts_len(c, false);
		}
	}
	uint32_t paylen = seg_len(p);
	uint32_t pstart = p->data_off + seg_hlen(p);
	struct myrio_pkt *f = p;
	if (p->refcnt > 1) {
		/* The NIC (or the ARP queue) still reads the previous frame from this buffer:
		 * its headers must not change under it, so send a copy. */
		f = stack_alloc(s);
		if (!f)
			return -ENOBUFS;
		memcpy(myrio_pkt_data(f), p->buf + pstart, paylen);
		f->len = paylen;
		s->st.tcp_tx_copy_nic_busy++;
	} else {
		p->data_off = pstart;
		p->len = paylen;
		p->ol_flags = 0;
	}
	unsigned hlen = TCP_HLEN + optlen;
	uint8_t *th = myrio_pkt_prepend(f, hlen);
	uint8_t flags = TH_ACK;
	if (paylen)
		flags |= TH_PSH;
	if (seg_flags(p) & SEG_FIN)
		flags |= TH_FIN;
	write_hdr(c, th, seg_seq(p), flags, hlen);
	tcp_opts_write(c, th + TCP_HLEN, with_sack);
	fill_ack(c, th, false);
	c->st.bytes_out += paylen;
	if (retx) {
		s->st.tcp_retransmits++;
		c->st.retransmits++;
		/* Karn's rule (RFC 6298 §3): an ACK that may answer a resent copy times
		 * nothing, as Linux takes no sample from an ACK of retransmitted data (the tail
		 * loss probe, partial ACKs and lost retransmissions come here too). */
		c->rtt_timing = false;
	}
	if (f == p)
		myrio_pkt_ref(p); /* the NIC's hold, dropped when it has read the frame */
	send_frame(c, f);
	if (f == p)
		seg_set_hlen(p, pstart - p->data_off);
	return 0;
}

/* Segments one TSO request may carry at this MSS: a chain has at most 64 descriptors, and
 * every buffer may be cut at tx_boundary (the first also after the headers), and the IPv4
 * total length is 16 bits (§5.6). */
static uint32_t tso_max_segs(const struct myrio_tcp_conn *c)
{
	const uint32_t b = c->s->tx_boundary, mss = c->mss;
	const uint32_t first = (ETH_HLEN + IP_HLEN + TCP_MAX_HDR + mss) / b + 3;
	const uint32_t per = mss / b + 2;
	uint32_t by_desc = first < 64 ? 1 + (64 - first) / per : 1;
	uint32_t by_len = (65535 - IP_HLEN - TCP_MAX_HDR) / mss;
	return by_desc < by_len ? by_desc : by_len;
}

/* The segments after p (new data, full MSS, not yet sent, sent first) that can go in the
 * same TSO request: contiguous data segments no one else holds, inside the peer's window
 * and cwnd (flight before p); only the last may be shorter than the MSS. Returns the
 * count including p; *last and *space get the last segment and the sequence space;
 * *can_grow whether ACKs or the application's writes could add segments to it (not when
 * it ends with a short one, or the next segment can never join). */
static uint32_t tso_group(struct myrio_tcp_conn *c, struct myrio_pkt *p, uint32_t flight,
			  uint32_t cwnd, struct myrio_pkt **last, uint32_t *space, bool *can_grow)
{
	const uint32_t max = tso_max_segs(c), wnd_end = c->snd_una + c->snd_wnd;
	uint32_t n = 1, sp = seg_len(p), end = seg_seq(p) + sp;
	struct myrio_pkt *q = p;
	*can_grow = true;
	while (n < max && q->next) {
		struct myrio_pkt *x = q->next;
		uint32_t len = seg_len(x);
		if (len == 0 || len > c->mss || seg_flags(x) || x->refcnt != 1 ||
		    seg_seq(x) != end) {
			*can_grow = false;
			break;
		}
		if (seq_gt(end + len, wnd_end) || flight + sp + len > cwnd)
			break;
		if (len < c->mss && c->s->conf.nagle && !x->next)
			break; /* Nagle: a short tail waits while data is in flight */
		q = x;
		n++;
		sp += len;
		end += len;
		if (len < c->mss) {
			*can_grow = false;
			break;
		}
	}
	*last = q;
	*space = sp;
	return n;
}

/* Whether to wait with a short TSO request (as Linux's tso_should_defer, for a sender
 * whose queue is full): the application waits for room, which each ACK makes, a segment
 * or two at a time; sending what it writes at once makes a trickle of small requests, one
 * per ACK. While two segments or more are in flight an ACK is coming, so the request
 * waits until it is as large as a request can be. A lone segment's ACK may be delayed by
 * the receiver (RFC 1122 §4.2.3.2: up to 500 ms; 40 ms here and in Linux): waiting on it
 * would idle the link that long. Not when loss is being repaired, nor while the queue has room
 * for a whole request (a request/response exchange sends at once), nor when nothing can
 * make it larger (a short segment ends it, as where a sent file ends: it would wait until
 * the whole flight is acknowledged and the link idles for a round trip). */
static bool tso_defer(const struct myrio_tcp_conn *c, uint32_t n, uint32_t flight)
{
	const uint32_t max = tso_max_segs(c);
	return flight >= 2u * c->mss && !c->in_recovery && !c->dupacks && n < max &&
	       c->sndq_segs + max > c->s->conf.snd_queue_segs; /* less room than a request */
}

/* Sends n queued segments from p (p as tso_group chose them) as one TSO request. */
static int tcp_xmit_tso(struct myrio_tcp_conn *c, struct myrio_pkt *p, uint32_t n)
{
	struct myrio_stack *s = c->s;
	uint32_t bytes = seg_len(p);
	struct myrio_pkt *q = p;
	for (uint32_t k = 1; k < n; k++) {
		q = q->next;
		q->data_off += seg_hlen(q); /* payload only: no headers of its own */
		q->len = seg_len(q);
		q->ol_flags = 0;
		seg_set_hlen(q, 0);
		myrio_pkt_ref(q); /* the NIC's hold */
		bytes += q->len;
	}
	uint32_t pstart = p->data_off + seg_hlen(p);
	p->data_off = pstart;
	p->len = seg_len(p);
	unsigned hlen = TCP_HLEN + tcp_opts_len(c, true);
	uint8_t *th = myrio_pkt_prepend(p, hlen);
	write_hdr(c, th, seg_seq(p), TH_ACK | TH_PSH, hlen); /* the NIC keeps PSH for the last */
	tcp_opts_write(c, th + TCP_HLEN, true);
	fill_ack(c, th, false);
	p->ol_flags = MYRIO_PKT_TX_TSO;
	p->tso_mss = c->mss;
	p->tso_npkts = (uint16_t)n;
	c->st.bytes_out += bytes;
	s->st.tcp_segs_out += n;
	c->st.segs_out += n;
	s->st.tcp_tso_requests++;
	s->st.tcp_tso_segs += n;
	myrio_pkt_ref(p);
	ipv4_output(s, p, IPPROTO_TCP_, c->lip, c->rip, 0, true);
	seg_set_hlen(p, pstart - p->data_off);
	return 0;
}

int tcp_send_ctl(struct myrio_tcp_conn *c, uint8_t flags, uint32_t seq)
{
	struct myrio_pkt *p = stack_alloc(c->s);
	if (!p)
		return -ENOBUFS;
	bool rst = flags & TH_RST;
	unsigned optlen = rst ? 0 : tcp_opts_len(c, true);
	unsigned hlen = TCP_HLEN + optlen;
	uint8_t *th = myrio_pkt_prepend(p, hlen);
	write_hdr(c, th, seq, flags, hlen);
	if (!rst)
		tcp_opts_write(c, th + TCP_HLEN, true);
	if (flags & TH_ACK)
		fill_ack(c, th, false);
	return send_frame(c, p);
}

int tcp_send_ack(struct myrio_tcp_conn *c)
{
	return tcp_send_ctl(c, TH_ACK, c->snd_nxt);
}

int tcp_send_syn(struct myrio_tcp_conn *c)
{
	struct myrio_pkt *p = stack_alloc(c->s);
	if (!p)
		return -ENOBUFS;
	bool synack = c->state == MYRIO_TCP_SYN_RCVD;
	uint8_t opt[40];
	unsigned optlen = tcp_opts_write_syn(c, opt, synack);
	unsigned hlen = TCP_HLEN + optlen;
	uint8_t *th = myrio_pkt_prepend(p, hlen);
	write_hdr(c, th, c->iss, synack ? TH_SYN | TH_ACK : TH_SYN, hlen);
	memcpy(th + TCP_HLEN, opt, optlen);
	if (synack)
		fill_ack(c, th, true);
	else
		put_be16(th + 14,
			 (uint16_t)(c->s->conf.rcv_buf > 65535 ? 65535 : c->s->conf.rcv_buf));
	return send_frame(c, p);
}

void tcp_send_rst_reply(struct myrio_stack *s, const struct ip_rx *ip, const uint8_t *th,
			uint32_t seg_len)
{
	if (th[13] & TH_RST)
		return;
	struct myrio_pkt *p = stack_alloc(s);
	if (!p)
		return;
	uint8_t *r = myrio_pkt_prepend(p, TCP_HLEN);
	memset(r, 0, TCP_HLEN);
	memcpy(r, th + 2, 2);
	memcpy(r + 2, th, 2);
	r[12] = (TCP_HLEN / 4) << 4;
	if (th[13] & TH_ACK) {
		memcpy(r + 4, th + 8, 4); /* seq = their ack */
		r[13] = TH_RST;
	} else {
		put_be32(r + 8, get_be32(th + 4) + seg_len);
		r[13] = TH_RST | TH_ACK;
	}
	s->st.tcp_resets_sent++;
	s->st.tcp_segs_out++;
	ipv4_output(s, p, IPPROTO_TCP_, s->conf.ip, ip->src, 0, true);
}

void tcp_send_tlp(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	c->tlp = false;
	c->tlp_done = true;
	s->st.tcp_tail_loss_probes++;
	/* New data if the peer's window takes it, else the last segment sent again. */
	struct myrio_pkt *p = c->snd_next;
	if (p && !(seg_flags(p) & SEG_SACKED) &&
	    seq_le(seg_seq(p) + seg_len(p), c->snd_una + c->snd_wnd) &&
	    seq_ge(seg_seq(p), c->snd_max)) {
		if (tcp_xmit_seg(c, p, false) == 0) {
			c->snd_nxt = c->snd_max = seg_seq(p) + seg_space(p);
			c->snd_next = p->next;
		}
	} else {
		struct myrio_pkt *last = NULL;
		for (struct myrio_pkt *q = c->sndq; q && q != c->snd_next; q = q->next)
			last = q;
		if (last)
			tcp_xmit_seg(c, last, true);
	}
	tcp_arm_rto(c);
}

/* Bytes of the peer's window left from seq on. */
static uint32_t usable_window(const struct myrio_tcp_conn *c, uint32_t seq)
{
	uint32_t end = c->snd_una + c->snd_wnd;
	return seq_gt(end, seq) ? end - seq : 0;
}

static void arm_persist(struct myrio_tcp_conn *c)
{
	if (c->t_rtx)
		return;
	c->persist = true;
	uint32_t t = c->rto_ms << (c->persist_backoff < 6 ? c->persist_backoff : 6);
	if (t > c->s->conf.rto_max_ms)
		t = c->s->conf.rto_max_ms;
	c->t_rtx = c->s->now_ms + t;
	tcp_timer_arm(c, c->t_rtx);
}

void tcp_window_probe(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	struct myrio_pkt *p = c->snd_next;
	if (!p || !seg_len(p)) { /* nothing the window holds back: the bare probe */
		tcp_send_ctl(c, TH_ACK, c->snd_una - 1);
		arm_persist(c);
		return;
	}
	/* The persist timer is the override timeout of RFC 9293 §3.8.6.2.1: what the window
	 * takes goes now, cut from the next segment. */
	uint32_t seq = seg_seq(p), usable = usable_window(c, seq);
	if (usable && (usable >= seg_len(p) || seg_split(c, p, usable) == 0)) {
		tcp_output(c);
		return;
	}
	/* A closed window: one byte of new data beyond it (RFC 9293 §3.8.6.1), a copy, so the
	 * queue is as before; a peer whose window opened meanwhile takes it, any other answers
	 * with its window. */
	uint32_t off = seq_lt(seq, c->snd_una) ? c->snd_una - seq : 0;
	struct myrio_pkt *f = off < seg_len(p) ? stack_alloc(s) : NULL;
	if (f) {
		*myrio_pkt_data(f) = p->buf[p->data_off + seg_hlen(p) + off];
		f->len = 1;
		unsigned hlen = TCP_HLEN + tcp_opts_len(c, true);
		uint8_t *th = myrio_pkt_prepend(f, hlen);
		write_hdr(c, th, seq + off, TH_ACK | TH_PSH, hlen);
		tcp_opts_write(c, th + TCP_HLEN, true);
		fill_ack(c, th, false);
		send_frame(c, f);
	}
	arm_persist(c);
}

/* Where snd_nxt stands once the segment ending at end went. Going back N from a head that
 * was acknowledged in part, a cut (seg_split) can leave a piece wholly below snd_una; it
 * goes again harmlessly, but snd_nxt never falls below snd_una. */
static inline uint32_t snd_nxt_after(const struct myrio_tcp_conn *c, uint32_t end)
{
	return seq_lt(end, c->snd_una) ? c->snd_una : end;
}

void tcp_output(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	switch (c->state) {
	case MYRIO_TCP_ESTABLISHED:
	case MYRIO_TCP_CLOSE_WAIT:
	case MYRIO_TCP_FIN_WAIT_1:
	case MYRIO_TCP_CLOSING:
	case MYRIO_TCP_LAST_ACK:
		break;
	case MYRIO_TCP_FIN_WAIT_2:
	case MYRIO_TCP_TIME_WAIT:
		if (c->ack_now || c->delack_segs)
			tcp_send_ack(c);
		return;
	default:
		return;
	}
	bool sent = false;
	uint32_t pipe = 0, max_before = c->snd_max;
	if (c->in_recovery) {
		pipe = tcp_pipe(c);
		struct myrio_pkt *p;
		while (pipe < c->cwnd && (p = tcp_next_lost(c)) != NULL) {
			if (tcp_xmit_seg(c, p, true) < 0)
				break;
			seg_set_flags(p, seg_flags(p) | SEG_RETX | SEG_EVER_RETX);
			c->retx_ms = s->now_ms;
			pipe += seg_space(p);
			sent = true;
		}
		if (sent)
			tcp_arm_rto(c); /* with the lost-retransmission probe */
	}
	if (c->snd_una == c->snd_max && c->snd_next && s->now_ms - c->last_snd_ms > c->rto_ms)
		cc_after_idle(c);
	/* Limited transmit (RFC 3042): each of the first two duplicate ACKs lets one new
	 * segment go beyond cwnd, so that a small window still produces three. */
	uint32_t cwnd = c->cwnd;
	if (!c->in_recovery && c->dupacks && c->dupacks < 3)
		cwnd += c->dupacks * c->mss;
	struct myrio_pkt *p;
	while ((p = c->snd_next) != NULL) {
		uint32_t seq = seg_seq(p), sp = seg_space(p), len = seg_len(p);
		if (seg_flags(p) & SEG_SACKED) { /* the peer has it from an earlier round */
			c->snd_nxt = snd_nxt_after(c, seq + sp);
			c->snd_next = p->next;
			continue;
		}
		if (len && seq_gt(seq + len, c->snd_una + c->snd_wnd)) {
			/* Sender SWS avoidance (RFC 9293 §3.8.6.2.1, Fs = 1/2): what the window
			 * takes goes once it is half the largest window the peer offered (Linux
			 * bounds its segments by that half); less waits for the persist timer. */
			uint32_t usable = usable_window(c, seq);
			if (!usable || usable < c->max_snd_wnd / 2 || seg_split(c, p, usable) < 0) {
				if (c->snd_nxt == c->snd_una)
					arm_persist(c); /* window too small, nothing in flight */
				break;
			}
			sp = len = usable;
		}
		uint32_t flight = c->in_recovery ? pipe : c->snd_nxt - c->snd_una;
		if (flight > 0 && flight + sp > cwnd)
			break;
		if (s->conf.nagle && len && len < c->mss && flight > 0 && !p->next)
			break;
		if (!stack_tx_room(s)) {
			tcp_mark_output(c); /* NIC ring full: continue next poll */
			break;
		}
		bool retx = seq_lt(seq, c->snd_max);
		struct myrio_pkt *last = p;
		uint32_t nseg = 1;
		/* Not while SACK blocks are due: the NIC would cut full-MSS segments that no
		 * longer fit with them. */
		if (s->tso && !retx && len == c->mss && p->next && p->refcnt == 1 && !sack_due(c)) {
			bool can_grow;
			nseg = tso_group(c, p, flight, cwnd, &last, &sp, &can_grow);
			if (can_grow && tso_defer(c, nseg, flight))
				break;
		}
		if (nseg > 1) {
			tcp_xmit_tso(c, p, nseg);
		} else if (tcp_xmit_seg(c, p, retx) < 0) {
			break;
		} else {
			sp = seg_space(p); /* it may have been cut to fit its options */
		}
		if (!retx && !c->rtt_timing) {
			c->rtt_timing = true;
			c->rtt_seq = seq + sp;
			c->rtt_start_us = s->now_us;
		}
		if (retx)
			seg_set_flags(p, seg_flags(p) | SEG_EVER_RETX);
		c->snd_nxt = snd_nxt_after(c, seq + sp);
		if (seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		pipe += sp;
		c->snd_next = last->next;
		sent = true;
		if (c->persist) {
			c->persist = false;
			c->t_rtx = 0;
		}
	}
	if (sent)
		c->last_snd_ms = s->now_ms;
	uint32_t flight = c->in_recovery ? pipe : c->snd_nxt - c->snd_una;
	cc_note_usage(c, flight, c->snd_next && flight + c->mss > cwnd);
	if (!sent &&
	    (c->ack_now || c->delack_segs >= 2 || (c->delack_segs && s->conf.delayed_ack_ms == 0)))
		tcp_send_ack(c);
	else if (c->delack_segs && !c->t_delack) {
		c->t_delack = s->now_ms + s->conf.delayed_ack_ms;
		tcp_timer_arm(c, c->t_delack);
	}
	/* The RTO, unless the persist timer probes a window that holds everything back; a
	 * tail loss probe timed for a lone segment (with the peer's delayed ACK) is timed
	 * again when more data joined it (RFC 8985 §7.2: rearmed on new data). */
	bool probe_later = c->tlp && max_before - c->snd_una <= c->mss &&
			   seq_gt(c->snd_max, max_before) && !c->in_recovery;
	if (c->snd_max != c->snd_una &&
	    (!c->t_rtx || (c->persist && c->snd_nxt != c->snd_una) || probe_later)) {
		c->persist = false;
		c->t_rtx = 0;
		tcp_arm_rto(c);
	}
}
