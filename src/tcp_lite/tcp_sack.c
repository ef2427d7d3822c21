/* SPDX-License-Identifier: BSD-3-Clause */
/* Selective acknowledgements (RFC 2018): the blocks we advertise for out-of-order data we
 * hold, and the sender's scoreboard (which queued segments the peer has, which are lost)
 * used by loss recovery in the manner of RFC 6675. */
#include "tcp_lite/stack.h"

#define DUP_THRESH 3

/* The recent arrivals, most recent first (pushed when ooo_last_seq moves on). */
static void note_arrival(struct myrio_tcp_conn *c)
{
	if (c->sack_recent[0] == c->ooo_last_seq)
		return;
	for (unsigned k = 3; k > 0; k--)
		c->sack_recent[k] = c->sack_recent[k - 1];
	c->sack_recent[0] = c->ooo_last_seq;
}

unsigned tcp_sack_blocks(struct myrio_tcp_conn *c, uint32_t blocks[][2], unsigned max)
{
	/* Merge the out-of-order queue (sorted, non-overlapping) into ranges. RFC 2018 §4:
	 * the range with the latest arrival first, then those of the arrivals before it,
	 * most recent first (the blocks reported most recently), then the rest. */
	uint32_t ranges[32][2];
	unsigned n = 0;
	for (struct myrio_pkt *p = c->ooo; p; p = p->next) {
		uint32_t l = (uint32_t)p->user, r = l + p->len;
		if (n && ranges[n - 1][1] == l)
			ranges[n - 1][1] = r;
		else if (n < 32) {
			ranges[n][0] = l;
			ranges[n][1] = r;
			n++;
		}
	}
	note_arrival(c);
	uint32_t used = 0; /* ranges[i] emitted: bit i */
	unsigned out = 0;
	for (unsigned k = 0; k < 4 && out < max; k++) {
		uint32_t seq = c->sack_recent[k];
		for (unsigned i = 0; i < n; i++) {
			if (seq_le(ranges[i][0], seq) && seq_lt(seq, ranges[i][1])) {
				if (!(used & (1u << i))) {
					used |= 1u << i;
					blocks[out][0] = ranges[i][0];
					blocks[out][1] = ranges[i][1];
					out++;
				}
				break;
			}
		}
	}
	for (unsigned i = 0; i < n && out < max; i++) {
		if (used & (1u << i))
			continue;
		blocks[out][0] = ranges[i][0];
		blocks[out][1] = ranges[i][1];
		out++;
	}
	return out;
}

void tcp_sack_update(struct myrio_tcp_conn *c, const struct tcp_opts *o)
{
	bool any = false;
	for (unsigned k = 0; k < o->nsack; k++) {
		uint32_t l = o->sack[k][0], r = o->sack[k][1];
		/* Only blocks inside what we sent and the peer has not acknowledged (D-SACKs
		 * and garbage are ignored). */
		if (!seq_lt(l, r) || seq_lt(l, c->snd_una) || seq_gt(r, c->snd_max))
			continue;
		c->st.sack_blocks_rcvd++;
		any = true;
		if (seq_gt(r, c->high_sack) || c->high_sack == 0)
			c->high_sack = r;
		/* Up to snd_max, not snd_next: after a timeout the peer may SACK data of
		 * the first transmission that go-back-N has not resent yet (output skips it). */
		for (struct myrio_pkt *p = c->sndq; p && seq_lt(seg_seq(p), c->snd_max);
		     p = p->next) {
			uint32_t s = seg_seq(p), e = s + seg_space(p);
			if (seq_ge(s, r))
				break;
			if (seq_ge(s, l) && seq_le(e, r))
				seg_set_flags(p, seg_flags(p) | SEG_SACKED);
		}
	}
	if (!any)
		return;
	/* A hole is lost once DUP_THRESH segments' worth above it were SACKed; with fewer
	 * segments in flight, one less than their number (early retransmit, RFC 5827). */
	uint64_t total = 0;
	unsigned nsegs = 0;
	for (struct myrio_pkt *p = c->sndq; p && seq_lt(seg_seq(p), c->snd_max); p = p->next) {
		nsegs++;
		if (seg_flags(p) & SEG_SACKED)
			total += seg_space(p);
	}
	unsigned thresh = nsegs <= DUP_THRESH ? (nsegs > 1 ? nsegs - 1 : 1) : DUP_THRESH;
	uint64_t seen = 0;
	for (struct myrio_pkt *p = c->sndq; p && seq_lt(seg_seq(p), c->snd_max); p = p->next) {
		uint32_t f = seg_flags(p);
		if (f & SEG_SACKED) {
			seen += seg_space(p);
			continue;
		}
		if (total - seen >= (uint64_t)thresh * c->mss ||
		    (total - seen > 0 && total - seen >= (uint64_t)thresh * seg_space(p)))
			seg_set_flags(p, f | SEG_LOST);
		else
			break;
	}
}

/* A retransmission is itself lost when SACKs keep arriving well over a round trip after
 * it was sent without covering it (the idea of RACK, RFC 8985, at the granularity of one
 * recovery round): mark it lost again instead of waiting for the RTO. */
bool tcp_sack_relost(struct myrio_tcp_conn *c, bool now)
{
	uint64_t wait_ms = (uint64_t)c->srtt_us * 5 / 4 / 1000 + 2;
	if (!now && c->s->now_ms < c->retx_ms + wait_ms)
		return false;
	bool any = false;
	for (struct myrio_pkt *p = c->sndq; p && p != c->snd_next; p = p->next) {
		uint32_t f = seg_flags(p);
		if (seq_ge(seg_seq(p), c->high_sack))
			break;
		if ((f & SEG_RETX) && !(f & SEG_SACKED)) {
			seg_set_flags(p, (f | SEG_LOST) & ~SEG_RETX);
			any = true;
		}
	}
	if (any) {
		c->retx_ms = c->s->now_ms; /* one round at a time */
		c->s->st.tcp_lost_retransmits++;
	}
	return any;
}

uint32_t tcp_pipe(struct myrio_tcp_conn *c)
{
	uint32_t pipe = 0;
	for (struct myrio_pkt *p = c->sndq; p && p != c->snd_next; p = p->next) {
		uint32_t f = seg_flags(p);
		if (f & SEG_SACKED)
			continue;
		if ((f & SEG_LOST) && !(f & SEG_RETX))
			continue;
		pipe += seg_space(p);
	}
	/* Without SACK each duplicate ACK stands for a segment that left the network
	 * (the NewReno window inflation of RFC 6582, expressed as pipe). */
	if (!c->sack_ok) {
		uint64_t gone = (uint64_t)c->dupacks * c->mss;
		pipe = gone >= pipe ? 0 : pipe - (uint32_t)gone;
	}
	return pipe;
}

struct myrio_pkt *tcp_next_lost(struct myrio_tcp_conn *c)
{
	for (struct myrio_pkt *p = c->sndq; p && p != c->snd_next; p = p->next) {
		uint32_t f = seg_flags(p);
		if ((f & SEG_LOST) && !(f & (SEG_RETX | SEG_SACKED)))
			return p;
	}
	return NULL;
}
