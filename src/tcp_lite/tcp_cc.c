/* SPDX-License-Identifier: BSD-3-Clause */
/* Congestion control: slow start with byte counting (RFC 3465) and an initial window of 10
 * segments (RFC 6928); congestion avoidance and the reaction to loss by NewReno (RFC 5681,
 * RFC 6582), or by CUBIC (tcp_cubic.c) when conf.cc asks for it. */
#include "tcp_lite/stack.h"

/* RFC 6928: ten segments. */
static uint32_t initial_window(const struct myrio_tcp_conn *c)
{
	return 10u * c->mss;
}

void cc_init(struct myrio_tcp_conn *c)
{
	c->cwnd = initial_window(c);
	c->ssthresh = UINT32_MAX;
	c->bytes_acked = 0;
	c->dupacks = 0;
	c->in_recovery = false;
	c->cub_wmax = 0;
	c->cub_epoch_ms = 0;
	c->max_flight = 0;
	c->usage_seq = c->snd_una;
	c->cwnd_limited = false;
}

void cc_note_usage(struct myrio_tcp_conn *c, uint32_t flight, bool limited)
{
	/* As Linux's tcp_cwnd_validate: the strongest sign of use in the window wins (cwnd
	 * holding data back, else the largest flight); a new window starts afresh. */
	if (seq_ge(c->snd_una, c->usage_seq) || limited ||
	    (!c->cwnd_limited && flight > c->max_flight)) {
		c->cwnd_limited = limited;
		c->max_flight = flight;
		c->usage_seq = c->snd_nxt;
	}
}

/* RFC 5681 §3.1 and RFC 7661: cwnd grows only while the sender uses it, so a sender held
 * back by the peer's window, its send queue or the application keeps cwnd near what it
 * can have in flight. In slow start, up to twice the largest flight, as Linux allows. */
static bool cwnd_in_use(const struct myrio_tcp_conn *c)
{
	if (c->cwnd < c->ssthresh)
		return c->cwnd < 2u * c->max_flight || c->cwnd_limited;
	return c->cwnd_limited;
}

static uint32_t flight_half(const struct myrio_tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;
	uint32_t half = flight / 2;
	return half > 2u * c->mss ? half : 2u * c->mss;
}

void cc_on_ack(struct myrio_tcp_conn *c, uint32_t acked)
{
	if (c->in_recovery || !cwnd_in_use(c))
		return;
	if (c->cwnd < c->ssthresh) {
		/* The stack acknowledges a whole receive burst at once (stretch ACKs), so
		 * slow start counts every byte acknowledged, as Linux does. */
		c->cwnd += acked;
	} else if (c->s->conf.cc == MYRIO_TCP_CC_CUBIC) {
		cubic_on_ack(c, acked);
	} else {
		c->bytes_acked += acked;
		if (c->bytes_acked >= c->cwnd) {
			c->bytes_acked -= c->cwnd;
			c->cwnd += c->mss;
		}
	}
	if (c->cwnd > (1u << 30))
		c->cwnd = 1u << 30;
}

void cc_enter_recovery(struct myrio_tcp_conn *c)
{
	if (c->s->conf.cc == MYRIO_TCP_CC_CUBIC)
		cubic_on_loss(c);
	else
		c->ssthresh = flight_half(c);
	c->cwnd = c->ssthresh;
	c->recover = c->snd_max;
	c->in_recovery = true;
	c->bytes_acked = 0;
}

void cc_exit_recovery(struct myrio_tcp_conn *c)
{
	c->in_recovery = false;
	c->cwnd = c->ssthresh;
	c->dupacks = 0;
}

void cc_on_rto(struct myrio_tcp_conn *c)
{
	if (!c->in_recovery || c->retries == 0) {
		if (c->s->conf.cc == MYRIO_TCP_CC_CUBIC)
			cubic_on_loss(c);
		else
			c->ssthresh = flight_half(c);
	}
	c->cwnd = c->mss;
	c->in_recovery = false;
	c->dupacks = 0;
	c->bytes_acked = 0;
	/* RFC 6582 §3.2 step 1: the highest sequence number sent is the recovery point. */
	c->recover = c->snd_max;
	c->rto_recover = true;
}

bool cc_loss_signal_ok(struct myrio_tcp_conn *c)
{
	/* RFC 6582 §3.2 step 2 (and Linux's Loss state): after a timeout, duplicate ACKs that
	 * do not acknowledge beyond the recovery point come from go-back-N resending data the
	 * peer held, not from a new loss. */
	if (c->rto_recover && seq_gt(c->snd_una, c->recover))
		c->rto_recover = false;
	return !c->rto_recover;
}

void cc_after_idle(struct myrio_tcp_conn *c)
{
	/* RFC 5681 §4.1: after an idle period the ACK clock is gone; start again from the
	 * restart window (the initial window) rather than a burst of the old cwnd. */
	uint32_t rw = initial_window(c);
	if (c->cwnd > rw)
		c->cwnd = rw;
}
