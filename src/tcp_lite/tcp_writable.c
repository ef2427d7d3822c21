/* SPDX-License-Identifier: BSD-3-Clause */
/* WRITABLE after the shared transmit pool ran dry. A connection refused buffers waits in a
 * stack-wide queue, oldest first; when buffers come back, the poll tells waiters in that
 * order, one at a time while the pool has room, so the first to be refused is the first to
 * write again and a connection that refills the pool goes to the back of the queue. */
#include "tcp_lite/stack.h"

void tcp_pool_wait(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	if (c->pool_waiting)
		return;
	c->pool_waiting = true;
	s->poll_tail |= POLL_TAIL_POOL_WAIT;
	c->pool_wait_next = NULL;
	c->pool_wait_prev = s->pool_wait_tail;
	if (s->pool_wait_tail)
		s->pool_wait_tail->pool_wait_next = c;
	else
		s->pool_wait_head = c;
	s->pool_wait_tail = c;
}

void tcp_pool_unwait(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	if (!c->pool_waiting)
		return;
	if (c->pool_wait_prev)
		c->pool_wait_prev->pool_wait_next = c->pool_wait_next;
	else
		s->pool_wait_head = c->pool_wait_next;
	if (c->pool_wait_next)
		c->pool_wait_next->pool_wait_prev = c->pool_wait_prev;
	else
		s->pool_wait_tail = c->pool_wait_prev;
	c->pool_waiting = false;
	c->pool_wait_next = c->pool_wait_prev = NULL;
}

/* Waiters are told once the pool holds a sixteenth more than the stack's reserve, so that
 * each gets a few segments' worth rather than one buffer per wake-up. */
static bool pool_has_room(const struct myrio_stack *s)
{
	return myrio_pool_free_count(s->pool) > s->ctl_reserve + s->conf.tx_pool_size / 16;
}

void tcp_pool_wake(struct myrio_stack *s)
{
	/* Each waiter at most once per call: one that is refused again went to the back. */
	uint32_t budget = s->nconns;
	while (s->pool_wait_head && budget-- && pool_has_room(s)) {
		struct myrio_tcp_conn *c = s->pool_wait_head;
		tcp_pool_unwait(c);
		if (c->state != MYRIO_TCP_ESTABLISHED && c->state != MYRIO_TCP_CLOSE_WAIT)
			continue; /* it cannot send any more: CLOSED or ERROR told it so */
		if (c->sndq_segs >= s->conf.snd_queue_segs)
			continue; /* its own queue is full: the ACK that empties it tells it */
		c->want_writable = false;
		tcp_event(c, MYRIO_TCP_EV_WRITABLE);
	}
	if (s->pool_wait_head)
		s->poll_tail |= POLL_TAIL_POOL_WAIT;
}
