/* SPDX-License-Identifier: BSD-3-Clause */
/* The readiness set of ready_set.h. Each object carries its entry; events the stack raises
 * put the entry on the set's ready list, and a wait takes entries off the front, asks the
 * object what it is ready for now, and reports it (level-triggered entries go back on at
 * the end). An entry found not ready leaves the list until the next event; for OUT the
 * object is first told to raise one (want_writable, the transmit pool's queue), since the
 * stack otherwise raises WRITABLE only after a refused send. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "tcp_lite/stack.h"

struct myrio_ready_set {
	struct myrio_stack *s;			 /* NULL once the stack is destroyed */
	struct myrio_ready_set *s_next, *s_prev; /* the stack's sets */
	struct ready_entry *head, *tail;	 /* ready list */
	uint32_t listed;
	struct ready_entry *all; /* every entry */
};

#define ENTRY_OWNER(e, type) ((type *)((char *)(e)-offsetof(type, ready)))

int myrio_ready_create(struct myrio_stack *s, struct myrio_ready_set **out)
{
	struct myrio_ready_set *set = calloc(1, sizeof(*set));
	*out = set;
	if (!set)
		return -ENOMEM;
	set->s = s;
	set->s_next = s->ready_sets;
	if (s->ready_sets)
		s->ready_sets->s_prev = set;
	s->ready_sets = set;
	return 0;
}

/* Empties the set and takes it off its stack's list. */
static void detach(struct myrio_ready_set *set)
{
	while (set->all)
		ready_del(set->all);
	if (!set->s)
		return;
	if (set->s_prev)
		set->s_prev->s_next = set->s_next;
	else
		set->s->ready_sets = set->s_next;
	if (set->s_next)
		set->s_next->s_prev = set->s_prev;
	set->s = NULL;
	set->s_next = set->s_prev = NULL;
}

void myrio_ready_destroy(struct myrio_ready_set *set)
{
	if (!set)
		return;
	detach(set);
	free(set);
}

void ready_sets_fini(struct myrio_stack *s)
{
	while (s->ready_sets)
		detach(s->ready_sets);
}

void ready_list(struct ready_entry *e)
{
	struct myrio_ready_set *set = e->set;
	e->next = NULL;
	e->prev = set->tail;
	if (set->tail)
		set->tail->next = e;
	else
		set->head = e;
	set->tail = e;
	e->listed = true;
	set->listed++;
}

static void unlist(struct ready_entry *e)
{
	struct myrio_ready_set *set = e->set;
	if (e->prev)
		e->prev->next = e->next;
	else
		set->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		set->tail = e->prev;
	e->listed = false;
	set->listed--;
}

void ready_del(struct ready_entry *e)
{
	struct myrio_ready_set *set = e->set;
	if (!set)
		return;
	if (e->listed)
		unlist(e);
	if (e->all_prev)
		e->all_prev->all_next = e->all_next;
	else
		set->all = e->all_next;
	if (e->all_next)
		e->all_next->all_prev = e->all_prev;
	e->set = NULL;
	e->all_next = e->all_prev = NULL;
}

static bool tcp_can_send(const struct myrio_tcp_conn *c)
{
	return c->state == MYRIO_TCP_ESTABLISHED || c->state == MYRIO_TCP_CLOSE_WAIT;
}

static uint32_t tcp_ready(struct myrio_tcp_conn *c, bool arm_out)
{
	struct myrio_stack *s = c->s;
	uint32_t m = 0;
	if (c->rcvq || c->fin_rcvd)
		m |= MYRIO_READY_IN;
	if (c->state == MYRIO_TCP_CLOSED || c->state == MYRIO_TCP_TIME_WAIT)
		m |= MYRIO_READY_HUP | MYRIO_READY_IN;
	if (c->error)
		m |= MYRIO_READY_ERR;
	if (tcp_can_send(c) && !c->fin_queued) {
		if (c->sndq_segs >= s->conf.snd_queue_segs) {
			if (arm_out)
				c->want_writable = true;
		} else if (myrio_pool_free_count(s->pool) <= s->ctl_reserve) {
			if (arm_out)
				tcp_pool_wait(c);
		} else {
			m |= MYRIO_READY_OUT;
		}
	}
	return m;
}

static uint32_t ready_now(struct ready_entry *e, bool arm_out)
{
	switch (e->kind) {
	case READY_TCP:
		return tcp_ready(ENTRY_OWNER(e, struct myrio_tcp_conn), arm_out);
	case READY_LISTENER:
		return ENTRY_OWNER(e, struct myrio_tcp_listener)->acceptq ? MYRIO_READY_IN : 0;
	default: {
		struct myrio_udp_sock *u = ENTRY_OWNER(e, struct myrio_udp_sock);
		return u->rxq || u->error ? MYRIO_READY_IN : 0;
	}
	}
}

static uint32_t reportable(const struct ready_entry *e, uint32_t m)
{
	return m & (e->interest | MYRIO_READY_HUP | MYRIO_READY_ERR);
}

static int add(struct myrio_ready_set *set, struct ready_entry *e, enum ready_kind kind,
	       uint32_t interest, void *user)
{
	if (e->set)
		return -EBUSY;
	e->set = set;
	e->kind = (uint8_t)kind;
	e->interest = interest;
	e->user = user;
	e->listed = false;
	e->all_prev = NULL;
	e->all_next = set->all;
	if (set->all)
		set->all->all_prev = e;
	set->all = e;
	ready_list(e); /* the first wait sees what it is ready for already */
	return 0;
}

int myrio_ready_add_tcp(struct myrio_ready_set *set, struct myrio_tcp_conn *c, uint32_t interest,
			void *user)
{
	if (c->s != set->s || !c->in_use)
		return -EINVAL;
	return add(set, &c->ready, READY_TCP, interest, user);
}

int myrio_ready_add_listener(struct myrio_ready_set *set, struct myrio_tcp_listener *l,
			     uint32_t interest, void *user)
{
	if (l->s != set->s || !l->in_use)
		return -EINVAL;
	return add(set, &l->ready, READY_LISTENER, interest, user);
}

int myrio_ready_add_udp(struct myrio_ready_set *set, struct myrio_udp_sock *u, uint32_t interest,
			void *user)
{
	if (u->s != set->s || !u->in_use)
		return -EINVAL;
	return add(set, &u->ready, READY_UDP, interest, user);
}

static int mod(struct myrio_ready_set *set, struct ready_entry *e, uint32_t interest)
{
	if (e->set != set)
		return -ENOENT;
	e->interest = interest;
	ready_mark(e); /* the next wait looks at it under the new interest */
	return 0;
}

int myrio_ready_mod_tcp(struct myrio_ready_set *set, struct myrio_tcp_conn *c, uint32_t interest)
{
	return mod(set, &c->ready, interest);
}

int myrio_ready_mod_listener(struct myrio_ready_set *set, struct myrio_tcp_listener *l,
			     uint32_t interest)
{
	return mod(set, &l->ready, interest);
}

int myrio_ready_mod_udp(struct myrio_ready_set *set, struct myrio_udp_sock *u, uint32_t interest)
{
	return mod(set, &u->ready, interest);
}

static int del(struct myrio_ready_set *set, struct ready_entry *e)
{
	if (e->set != set)
		return -ENOENT;
	ready_del(e);
	return 0;
}

int myrio_ready_del_tcp(struct myrio_ready_set *set, struct myrio_tcp_conn *c)
{
	return del(set, &c->ready);
}

int myrio_ready_del_listener(struct myrio_ready_set *set, struct myrio_tcp_listener *l)
{
	return del(set, &l->ready);
}

int myrio_ready_del_udp(struct myrio_ready_set *set, struct myrio_udp_sock *u)
{
	return del(set, &u->ready);
}

int myrio_ready_wait(struct myrio_ready_set *set, struct myrio_ready_event *ev, unsigned max)
{
	unsigned n = 0;
	/* Each listed entry at most once: those put back go behind the ones not seen yet. */
	uint32_t todo = set->listed;
	while (n < max && todo--) {
		struct ready_entry *e = set->head;
		unlist(e);
		uint32_t m = reportable(e, ready_now(e, (e->interest & MYRIO_READY_OUT) != 0));
		if (!m)
			continue;
		ev[n].events = m;
		ev[n].user = e->user;
		n++;
		if (!(e->interest & MYRIO_READY_ET))
			ready_list(e);
	}
	return (int)n;
}

uint32_t ready_listed(const struct myrio_ready_set *set)
{
	return set->listed;
}
