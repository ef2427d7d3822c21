/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP timers: retransmission (RFC 6298, exponential backoff), SYN retries, zero-window
 * persist probes, delayed ACKs, TIME_WAIT and orphan FIN_WAIT, keepalive. Deadlines are absolute
 * milliseconds of the stack clock, kept in the connection (t_rtx, t_delack, t_2msl,
 * t_keep). Each connection has one entry in the stack's timing wheel, filed at a time no
 * later than its earliest deadline: arming an earlier deadline moves the entry
 * (tcp_timer_arm), while clearing or postponing one (every ACK postpones the RTO) costs
 * nothing, and the entry, fired early, files itself again at the earliest deadline left.
 * So poll only visits connections with a deadline due or one that moved, never all. */
#include <errno.h>
#include <stddef.h>

#include "tcp_lite/stack.h"

/* RFC 8985 §7.2 WCDelAckT: a single segment's ACK may be delayed by the peer that long
 * (Linux allows TCP_RTO_MIN, 200 ms, too), so its probe waits for it. */
#define TLP_WCDELACK_MS 200u

void tcp_arm_rto(struct myrio_tcp_conn *c)
{
	uint64_t t = c->rto_ms;
	c->persist = false;
	c->tlp = false;
	/* An earlier probe than the RTO, once per episode (until the next new ACK):
	 * - outside recovery, a tail loss probe (RFC 8985 §7): when the last segments of
	 *   a flight or their ACKs are lost no duplicate ACK comes, so probe after about
	 *   two round trips;
	 * - in recovery, the lost-retransmission check (tcp_sack_relost) once a
	 *   retransmission had time to be acknowledged, for when no further ACK comes to
	 *   run it (everything else already SACKed). */
	if (c->srtt_us && !c->tlp_done && c->retries == 0 && c->state >= MYRIO_TCP_ESTABLISHED) {
		uint64_t pto;
		if (c->in_recovery) {
			pto = (uint64_t)c->srtt_us * 5 / 4 / 1000 + 3;
		} else {
			pto = 2ull * c->srtt_us / 1000 + 2;
			if (c->snd_max - c->snd_una <= c->mss)
				pto += TLP_WCDELACK_MS;
		}
		/* Not later than the RTO would be (RFC 8985 §7.2, as Linux): then the probe
		 * goes at its time instead, so a lost lone segment costs no RTO either. */
		if (pto < t)
			t = pto;
		c->tlp = true;
	}
	c->t_rtx = c->s->now_ms + t;
	tcp_timer_arm(c, c->t_rtx);
}

void tcp_timer_arm(struct myrio_tcp_conn *c, uint64_t when)
{
	if (when && (!tw_pending(&c->timer) || when < c->timer.when))
		tw_add(&c->s->wheel, &c->timer, when);
}

void tcp_rtt_sample(struct myrio_tcp_conn *c, uint32_t r)
{
	const struct myrio_stack_conf *cf = &c->s->conf;
	if (r == 0)
		r = 1;
	if (c->srtt_us == 0) {
		c->srtt_us = r;
		c->rttvar_us = r / 2;
	} else {
		uint32_t d = c->srtt_us > r ? c->srtt_us - r : r - c->srtt_us;
		c->rttvar_us = (3 * c->rttvar_us + d) / 4;
		c->srtt_us = (7 * c->srtt_us + r) / 8;
	}
	uint32_t var = 4 * c->rttvar_us;
	if (var < 1000) /* clock granularity G: 1 ms */
		var = 1000;
	uint64_t rto = ((uint64_t)c->srtt_us + var + 999) / 1000;
	if (rto < cf->rto_min_ms)
		rto = cf->rto_min_ms;
	if (rto > cf->rto_max_ms)
		rto = cf->rto_max_ms;
	c->rto_ms = (uint32_t)rto;
	c->st.srtt_us = c->srtt_us;
	c->st.rttvar_us = c->rttvar_us;
}

/* RFC 6298 §5.7: the timeout of an RTO below 3 s while waiting for the handshake sets the
 * RTO to 3 s (TCP_TIMEOUT_FALLBACK in Linux) when data transmission begins. */
#define RTO_AFTER_SYN_TIMEOUT_MS 3000u

void tcp_rtt_handshake(struct myrio_tcp_conn *c, uint32_t rtt_us)
{
	if (c->retries == 0) /* Karn: no sample from a retransmitted SYN */
		tcp_rtt_sample(c, rtt_us);
	else if (c->rto_ms < RTO_AFTER_SYN_TIMEOUT_MS)
		c->rto_ms = RTO_AFTER_SYN_TIMEOUT_MS;
}

static void backoff(struct myrio_tcp_conn *c)
{
	uint64_t r = (uint64_t)c->rto_ms * 2;
	c->rto_ms = r > c->s->conf.rto_max_ms ? c->s->conf.rto_max_ms : (uint32_t)r;
}

/* The peer is gone (retries or probes unanswered): RST, -ETIMEDOUT. */
static void give_up(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	s->st.tcp_timeouts++;
	s->st.tcp_resets_sent++;
	if (!c->app_owned)
		s->st.tcp_orphan_resets++;
	tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_max);
	tcp_conn_finish(c, -ETIMEDOUT);
}

/* Everything from the first unacknowledged segment is sent again; the SACK scoreboard is
 * forgotten (RFC 2018 §8: the receiver may renege). */
static void go_back_n(struct myrio_tcp_conn *c)
{
	for (struct myrio_pkt *p = c->sndq; p; p = p->next)
		seg_set_flags(p, seg_flags(p) & (SEG_FIN | SEG_EVER_RETX));
	c->high_sack = 0;
	c->snd_nxt = c->snd_una;
	c->snd_next = c->sndq;
	c->rtt_timing = false;
}

/* The persist timer, or the RTO while the peer's window is closed. RFC 9293 §3.8.6.1: the
 * window may stay closed for as long as the peer answers the probes; only probes left
 * unanswered count against the retry limit (Linux's icsk_probes_out against
 * tcp_retries2), and the interval doubles up to rto_max_ms either way. What was in flight
 * is sent again once the window opens. */
static void persist_timeout(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	bool answered = c->last_rcv_ms >= c->persist_probe_ms;
	c->persist_unanswered = answered ? 0 : c->persist_unanswered + 1;
	if (c->persist_unanswered > s->conf.max_retries) {
		give_up(c);
		return;
	}
	if (c->snd_nxt != c->snd_una) {
		if (c->in_recovery)
			cc_exit_recovery(c);
		go_back_n(c);
	}
	s->st.tcp_zero_window_probes++;
	c->st.zero_window_probes++;
	c->persist_probe_ms = s->now_ms;
	c->persist_backoff++;
	tcp_window_probe(c);
}

static void rtx_timeout(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	if (c->state == MYRIO_TCP_SYN_SENT || c->state == MYRIO_TCP_SYN_RCVD) {
		if (++c->retries > s->conf.syn_retries) {
			s->st.tcp_timeouts++;
			tcp_conn_finish(c, c->state == MYRIO_TCP_SYN_SENT ? -ETIMEDOUT : 0);
			return;
		}
		backoff(c);
		c->st.retransmits++;
		s->st.tcp_retransmits++;
		tcp_send_syn(c);
		tcp_arm_rto(c);
		return;
	}
	/* A closed window with data outstanding is probed too, not retransmitted into. */
	if (c->persist || (c->snd_wnd == 0 && c->snd_max != c->snd_una)) {
		persist_timeout(c);
		return;
	}
	if (c->snd_max == c->snd_una)
		return;
	if (c->tlp) {
		if (c->in_recovery) {
			c->tlp = false;
			c->tlp_done = true;
			tcp_sack_relost(c, true);
			tcp_output(c);
			tcp_arm_rto(c);
		} else {
			tcp_send_tlp(c);
		}
		return;
	}
	if (++c->retries > s->conf.max_retries) {
		give_up(c);
		return;
	}
	s->st.tcp_rto_expired++;
	c->st.rto_expired++;
	cc_on_rto(c);
	go_back_n(c);
	backoff(c);
	tcp_output(c);
	if (!c->t_rtx)
		tcp_arm_rto(c);
}

/* The deadline of a closed (orphan) connection that is not in TIME_WAIT, as Linux's
 * orphan handling: while our data or FIN is still being (re)transmitted, the
 * retransmission limit bounds the connection (rtx_timeout resets it when that runs out),
 * so the deadline only looks again later; FIN_WAIT_2 (the peer never closes), a zero
 * window that never opens, or anything else that makes no progress is given up with a
 * RST, so the peer does not wait on a connection that is gone. */
static void orphan_deadline(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	bool sending = c->state == MYRIO_TCP_FIN_WAIT_1 || c->state == MYRIO_TCP_CLOSING ||
		       c->state == MYRIO_TCP_LAST_ACK;
	if (sending && c->t_rtx && !c->persist && c->snd_una != c->snd_max) {
		c->t_2msl = s->now_ms + (s->conf.time_wait_ms ? s->conf.time_wait_ms : 1);
		return;
	}
	s->st.tcp_orphan_resets++;
	s->st.tcp_resets_sent++;
	tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_max);
	tcp_conn_finish(c, 0);
}

#define KA_INTERVAL_MS_DEFAULT 75000u
#define KA_PROBES_DEFAULT 9u

int myrio_tcp_keepalive(struct myrio_tcp_conn *c, uint32_t idle_ms, uint32_t interval_ms,
			uint32_t probes)
{
	if (c->state == MYRIO_TCP_CLOSED)
		return -ENOTCONN;
	c->ka_idle_ms = idle_ms;
	c->ka_interval_ms = interval_ms ? interval_ms : KA_INTERVAL_MS_DEFAULT;
	c->ka_probes = probes ? probes : KA_PROBES_DEFAULT;
	c->ka_sent = 0;
	c->last_rcv_ms = c->s->now_ms;
	c->t_keep = idle_ms ? c->s->now_ms + idle_ms : 0;
	tcp_timer_arm(c, c->t_keep);
	return 0;
}

/* The keepalive deadline passed: probe the peer, or give up on it, or look again later
 * (segments came meanwhile, data is outstanding, not yet established). As Linux, only
 * synchronized states that wait on the peer are probed; the probe is an empty segment one
 * below snd_una, which any live peer answers with an ACK. */
static void keepalive_timeout(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	uint64_t now = s->now_ms;
	bool probed = c->ka_sent && c->last_rcv_ms < c->ka_probe_ms; /* and unanswered */
	if (!probed)
		c->ka_sent = 0;
	if (c->state != MYRIO_TCP_ESTABLISHED && c->state != MYRIO_TCP_CLOSE_WAIT &&
	    c->state != MYRIO_TCP_FIN_WAIT_2) {
		if (c->state < MYRIO_TCP_ESTABLISHED) /* handshake: look again later */
			c->t_keep = now + c->ka_idle_ms;
		return;
	}
	if (c->snd_una != c->snd_max) { /* retransmission watches the peer */
		c->ka_sent = 0;
		c->t_keep = now + c->ka_idle_ms;
		return;
	}
	if (!probed && now - c->last_rcv_ms < c->ka_idle_ms) {
		c->t_keep = c->last_rcv_ms + c->ka_idle_ms;
		return;
	}
	if (c->ka_sent >= c->ka_probes) {
		s->st.tcp_keepalive_timeouts++;
		s->st.tcp_resets_sent++;
		tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_max);
		tcp_conn_finish(c, -ETIMEDOUT);
		return;
	}
	tcp_send_ctl(c, TH_ACK, c->snd_una - 1);
	s->st.tcp_keepalive_probes++;
	c->ka_sent++;
	c->ka_probe_ms = now;
	c->t_keep = now + c->ka_interval_ms;
}

/* The wheel entry of c came due: runs the handlers of the deadlines that passed, then
 * files the entry at the earliest deadline left. */
static void conn_timers_due(struct tw_timer *t, void *arg)
{
	if (t->owner == TW_OWNER_APP) {
		app_timer_due(arg, t);
		return;
	}
	struct myrio_tcp_conn *c =
	    (struct myrio_tcp_conn *)((char *)t - offsetof(struct myrio_tcp_conn, timer));
	uint64_t now = ((struct myrio_stack *)arg)->now_ms;
	c->s->timer_visits++;
	if (c->state == MYRIO_TCP_CLOSED)
		return;
	if (c->t_delack && now >= c->t_delack) {
		c->t_delack = 0;
		if (c->delack_segs || c->ack_now)
			tcp_send_ack(c);
	}
	if (c->t_rtx && now >= c->t_rtx) {
		c->t_rtx = 0;
		rtx_timeout(c);
	}
	if (c->t_2msl && now >= c->t_2msl && c->state != MYRIO_TCP_CLOSED) {
		c->t_2msl = 0;
		if (c->state == MYRIO_TCP_TIME_WAIT)
			tcp_conn_finish(c, 0);
		else
			orphan_deadline(c);
	}
	if (c->t_keep && now >= c->t_keep && c->state != MYRIO_TCP_CLOSED) {
		c->t_keep = 0;
		keepalive_timeout(c);
	}
	if (c->state == MYRIO_TCP_CLOSED)
		return;
	uint64_t deadlines[4] = {c->t_delack, c->t_rtx, c->t_2msl, c->t_keep}, next = 0;
	for (int i = 0; i < 4; i++)
		if (deadlines[i] && (!next || deadlines[i] < next))
			next = deadlines[i];
	if (next)
		tw_add(&c->s->wheel, &c->timer, next);
	else
		tw_del(&c->s->wheel, &c->timer);
}

void tcp_timers_run(struct myrio_stack *s)
{
	tw_run(&s->wheel, s->now_ms, conn_timers_due, s);
}
