/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive memory: the port's receive buffers the stack holds in connections' queues.
 *
 * A peer must not be able to keep the receive pool for itself: every buffer held in an
 * in-order or out-of-order queue is counted stack-wide (st.tcp_rx_bufs_held); tiny payloads
 * are copied into the room left in the buffer before them (Linux's tcp_try_coalesce and
 * tcp_collapse), so a slow reader of one-byte segments pins few buffers; and when the pool
 * a segment came from runs low, out-of-order queues are pruned from their far end (Linux's
 * tcp_prune_ofo_queue), this connection's first, then every other's. What is left free is
 * the reserve that lets a hole-filling segment and new SYNs in. */
#include <string.h>

#include "tcp_lite/stack.h"

/* Pruning, once the pool is low, goes on until a quarter of it is free, so that an
 * attacker does not make every segment prune. */
static bool pool_short(const struct myrio_pool *pool)
{
	return myrio_pool_free_count(pool) <= pool->count >> 2;
}

bool tcp_rx_append_copy(struct myrio_stack *s, struct myrio_pkt *into, struct myrio_pkt *p)
{
	if (!tcp_rx_copy_fits(into, p))
		return false;
	memcpy(into->buf + into->data_off + into->len, myrio_pkt_data(p), p->len);
	into->len += p->len;
	s->st.tcp_rx_coalesced++;
	myrio_pkt_free(p);
	return true;
}

void tcp_rx_free(struct myrio_stack *s, struct myrio_pkt *p)
{
	s->st.tcp_rx_bufs_held--;
	myrio_pkt_free(p);
}

void tcp_rx_free_chain(struct myrio_stack *s, struct myrio_pkt *p)
{
	while (p) {
		struct myrio_pkt *n = p->next;
		tcp_rx_free(s, p);
		p = n;
	}
}

/* Copies each small in-order buffer into the one before it where it fits. */
static void collapse_rcvq(struct myrio_tcp_conn *c)
{
	struct myrio_pkt *prev = c->rcvq;
	while (prev && prev->next) {
		struct myrio_pkt *q = prev->next;
		struct myrio_pkt *after = q->next;
		if (tcp_rx_append_copy(c->s, prev, q)) {
			c->s->st.tcp_rx_bufs_held--;
			prev->next = after;
			if (c->rcvq_tail == q)
				c->rcvq_tail = prev;
		} else {
			prev = q;
		}
	}
}

/* Drops the n out-of-order segments of highest sequence: the sender retransmits them (RFC
 * 2018 §8 lets a receiver renege on what it SACKed), and what is nearest rcv_nxt is what
 * delivery needs first. */
static void prune_ooo_tail(struct myrio_tcp_conn *c, uint32_t n)
{
	if (n >= c->ooo_segs) {
		tcp_rx_free_chain(c->s, c->ooo);
		c->s->st.tcp_ooo_pruned += c->ooo_segs;
		c->ooo = NULL;
		c->ooo_segs = 0;
		return;
	}
	struct myrio_pkt *last_kept = c->ooo;
	for (uint32_t i = 1; i < c->ooo_segs - n; i++)
		last_kept = last_kept->next;
	tcp_rx_free_chain(c->s, last_kept->next);
	last_kept->next = NULL;
	c->ooo_segs -= n;
	c->s->st.tcp_ooo_pruned += n;
}

/* Prunes c's out-of-order queue from its far end until pool is no longer short. */
static void prune_ooo(struct myrio_tcp_conn *c, const struct myrio_pool *pool)
{
	while (c->ooo && pool_short(pool)) {
		uint32_t want = (pool->count >> 2) + 1 - myrio_pool_free_count(pool);
		prune_ooo_tail(c, want < c->ooo_segs ? want : c->ooo_segs);
	}
}

void tcp_rx_relieve(struct myrio_tcp_conn *c, const struct myrio_pool *pool)
{
	struct myrio_stack *s = c->s;
	s->st.tcp_rx_pressure++;
	collapse_rcvq(c);
	prune_ooo(c, pool);
	/* The walk over the table once a millisecond at most: when what keeps the pool low
	 * is not ours to free (buffers the application holds), segments must not each pay
	 * for a walk. */
	if (!pool_short(pool) || s->rx_walk_ms == s->now_ms)
		return;
	s->rx_walk_ms = s->now_ms;
	for (uint32_t i = 0; i < s->nconns && pool_short(pool); i++) {
		struct myrio_tcp_conn *o = &s->conns[i];
		if (o->in_use && o != c) {
			collapse_rcvq(o);
			prune_ooo(o, pool);
		}
	}
}
