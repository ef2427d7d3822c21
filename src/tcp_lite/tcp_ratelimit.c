/* SPDX-License-Identifier: BSD-3-Clause */
/* Rate limits on the ACKs the stack sends in answer to segments it will not accept, so that
 * neither an ACK loop nor an off-path attacker can use them.
 *
 * Per connection (Linux's tcp_invalid_ratelimit): at most one such ACK every
 * TCP_INVALID_RATELIMIT_MS, for duplicate ACKs answering out-of-window or PAWS-failed
 * segments that carry no data, and for RFC 5961 challenge ACKs.
 *
 * Per stack (RFC 5961 §7): a budget of challenge ACKs per second, drawn at random every
 * second from [limit/2, limit*3/2) as Linux does since CVE-2016-5696. A fixed shared budget
 * is an oracle: an off-path attacker who spends it with guessed RSTs on a victim's
 * connection and then counts the challenge ACKs left for its own connection learns whether
 * its guesses were in the window. With the per-connection limit in front, one connection
 * can take at most two a second from the shared budget. */
#include <errno.h>

#include "tcp_lite/stack.h"

#define TCP_INVALID_RATELIMIT_MS 500

static bool oow_limited(struct myrio_tcp_conn *c)
{
	uint64_t now = c->s->now_ms;
	if (c->last_oow_ack_ms && now - c->last_oow_ack_ms < TCP_INVALID_RATELIMIT_MS)
		return true;
	c->last_oow_ack_ms = now;
	return false;
}

bool tcp_oow_limited(struct myrio_tcp_conn *c, const uint8_t *th, uint32_t len)
{
	/* Data segments without SYN (retransmissions the peer needs an answer to) are not
	 * part of an ACK loop: only the others are limited. */
	bool limited = (len == 0 || (th[13] & TH_SYN)) && oow_limited(c);
	if (limited)
		c->s->st.tcp_oow_acks_limited++;
	return limited;
}

int tcp_challenge_ack(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	if (oow_limited(c)) {
		s->st.tcp_challenge_ack_limited++;
		return -EBUSY;
	}
	uint64_t sec = s->now_ms / 1000;
	if (sec != s->chack_second) {
		uint32_t limit = s->conf.challenge_ack_limit;
		uint32_t half = (limit + 1) / 2;
		s->chack_second = sec;
		s->chack_count = limit ? half + (uint32_t)(stack_random(s) % limit) : 0;
	}
	if (s->chack_count == 0) {
		s->st.tcp_challenge_ack_limited++;
		return -EBUSY;
	}
	s->chack_count--;
	s->st.tcp_challenge_acks++;
	c->st.challenge_acks++;
	return tcp_send_ack(c);
}
