/* SPDX-License-Identifier: BSD-3-Clause */
/* Accepted connections: announced with MYRIO_TCP_EV_ACCEPTED, or, for a listener in a
 * readiness set, queued on it for myrio_tcp_accept. */
#include "tcp_lite/stack.h"

void tcp_accepted(struct myrio_tcp_listener *l, struct myrio_tcp_conn *c)
{
	if (!l) /* a SYN cookie's connection counts against no listener's backlog */
		l = tcp_listener_find(c->s, c->lport);
	if (!l || !l->ready.set) {
		tcp_event(c, MYRIO_TCP_EV_ACCEPTED);
		return;
	}
	c->accept_next = NULL;
	if (l->acceptq_tail)
		l->acceptq_tail->accept_next = c;
	else
		l->acceptq = c;
	l->acceptq_tail = c;
	ready_mark(&l->ready);
}

struct myrio_tcp_conn *myrio_tcp_accept(struct myrio_tcp_listener *l)
{
	struct myrio_tcp_conn *c = l->acceptq;
	if (!c)
		return NULL;
	l->acceptq = c->accept_next;
	if (!l->acceptq)
		l->acceptq_tail = NULL;
	c->accept_next = NULL;
	return c;
}

void tcp_acceptq_drop(struct myrio_tcp_listener *l)
{
	struct myrio_tcp_conn *c;
	while ((c = myrio_tcp_accept(l)) != NULL)
		myrio_tcp_abort(c);
}
