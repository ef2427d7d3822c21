/* SPDX-License-Identifier: BSD-3-Clause */
/* What the stacks of one port and address share: the host's multicast groups and IGMP
 * state (igmp.c), and the datagrams one stack hands to another.
 *
 * The NIC picks a UDP datagram's queue by its addresses, not by where its socket lives: a
 * multicast group joined on one stack, a broadcast, or a port bound on one stack only gets
 * datagrams on every queue. The stack that receives one copies it to each sibling with a
 * socket that takes it, and the sibling's next poll delivers the copy.
 *
 * The receive path takes no lock. What it needs to know of the host and the siblings (the
 * groups joined; which stack has a socket on which port, group and peer) is a view: an
 * immutable table rebuilt under the lock at every join, leave, bind, connect and close
 * and published by pointer. A replaced view is freed after a grace period: once every
 * stack that was receiving when it was replaced has finished that burst (a stack announces
 * each burst in its reader slot, odd while it runs; between bursts it holds no view). A
 * sibling takes what it is handed in a ring of its own transmit buffers, filled by its own
 * poll: the sender claims a slot, copies the datagram into the slot's buffer and publishes
 * it; the sibling delivers that buffer as it is and puts a fresh one in the slot. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tcp_lite/stack.h"
#include "util/log.h"

#define INBOX_SLOTS_MAX 256u /* datagrams waiting for a stack's poll: a stalled one costs this */

/* A stack's place in the share: odd while its receive burst may read a view. Own line. */
struct share_reader {
	_Atomic uint64_t seq;
	char pad[64 - sizeof(uint64_t)];
};

/* Who takes what: a socket's port (group 0: unicast and broadcast to it) or one of its
 * groups, and its peer when connected. */
struct share_sub {
	struct share_inbox *to;
	uint32_t group, rip;
	uint16_t lport, rport;
};

struct share_view {
	unsigned ngroups, nsubs; /* subs of one stack are next to each other */
	uint32_t groups[IGMP_MAX_GROUPS];
	struct share_sub subs[];
};

/* A slot belongs to the senders when seq is its position, to the owner when position + 1
 * (full); the owner gives it back holding a fresh buffer as position + size (Vyukov's
 * bounded queue, with one reader). */
struct inbox_slot {
	_Atomic uint32_t seq;
	struct udp_addrs a;
	struct myrio_pkt *pkt;
};

struct share_inbox {
	_Atomic uint32_t head; /* the next position a sender claims */
	char pad[60];
	uint32_t tail;	/* the next position the owner reads */
	uint32_t given; /* positions below it were given back with a buffer */
	uint32_t mask;
	uint32_t room; /* bytes a slot's buffer takes */
	_Atomic int fd;
	struct inbox_slot slot[];
};

/* The receive bursts this thread is running, innermost first: a burst's callback may poll
 * a sibling stack, and a signal handler the same stack. */
static _Thread_local const struct share_rx *reading;

static bool held_here(const struct share_reader *r)
{
	for (const struct share_rx *b = reading; b; b = b->prev)
		if (b->r == r)
			return true;
	return false;
}

void share_lock(const struct myrio_stack *s)
{
	pthread_mutex_lock(&s->share->lock);
}

void share_unlock(const struct myrio_stack *s)
{
	pthread_mutex_unlock(&s->share->lock);
}

static struct share_inbox *inbox_new(struct myrio_stack *s)
{
	uint32_t n = 1;
	while (n * 2 <= INBOX_SLOTS_MAX && n * 2 <= s->conf.tx_pool_size / 16)
		n *= 2;
	struct share_inbox *in = calloc(1, sizeof(*in) + n * sizeof(in->slot[0]));
	if (!in)
		return NULL;
	/* Every slot starts with the owner, as if positions 0..n-1 were read and not given
	 * back yet: its first poll with a sibling gives them back. */
	in->mask = n - 1;
	in->tail = n;
	in->given = 0;
	atomic_init(&in->head, n);
	for (uint32_t i = 0; i < n; i++)
		atomic_init(&in->slot[i].seq, i);
	in->room = s->pool->buf_len - MYRIO_PKT_HEADROOM;
	atomic_init(&in->fd, -1);
	return in;
}

static void inbox_free(struct share_inbox *in)
{
	for (uint32_t i = 0; i <= in->mask; i++)
		if (in->slot[i].pkt)
			myrio_pkt_free(in->slot[i].pkt);
	int fd = atomic_load_explicit(&in->fd, memory_order_relaxed);
	if (fd >= 0)
		close(fd);
	free(in);
}

int share_attach(struct myrio_stack *s, const struct myrio_stack *sibling)
{
	struct stack_share *sh = sibling ? sibling->share : NULL;
	struct share_inbox *in = inbox_new(s);
	if (!in)
		return -ENOMEM;
	if (!sh) {
		int nq = myrio_port_queues(s->port);
		sh = calloc(1, sizeof(*sh));
		unsigned nr = nq > 0 ? (unsigned)nq : 1;
		if (sh)
			sh->readers = aligned_alloc(64, nr * sizeof(*sh->readers));
		if (!sh || !sh->readers) {
			free(sh);
			free(in);
			return -ENOMEM;
		}
		memset(sh->readers, 0, nr * sizeof(*sh->readers));
		sh->nreaders = nr;
		pthread_mutex_init(&sh->lock, NULL);
	}
	s->share = sh;
	s->inbox = in;
	share_lock(s);
	s->share_next = sh->stacks;
	sh->stacks = s;
	atomic_fetch_add_explicit(&sh->nstacks, 1, memory_order_relaxed);
	share_unlock(s);
	return 0;
}

/* The view of the present state, under the lock; NULL when there is nothing in it (*empty)
 * or no memory (then nothing is handed over and no group received until the next change). */
static struct share_view *view_build(struct stack_share *sh, bool *empty)
{
	size_t nsubs = 0;
	for (const struct myrio_stack *t = sh->stacks; t; t = t->share_next)
		for (uint32_t i = 0; t->udps && i < t->conf.max_udp_socks; i++)
			if (t->udps[i].in_use)
				nsubs += 1u + t->udps[i].ngroups;
	unsigned ngroups = 0;
	for (unsigned i = 0; i < sh->igmp.n; i++)
		ngroups += sh->igmp.groups[i].refs != 0;
	*empty = !nsubs && !ngroups;
	if (*empty)
		return NULL;
	struct share_view *v = malloc(sizeof(*v) + nsubs * sizeof(v->subs[0]));
	if (!v) {
		log_err("tcp_lite: no memory for the stacks' multicast view: groups are not "
			"received until the next join or leave");
		return NULL;
	}
	v->ngroups = 0;
	for (unsigned i = 0; i < sh->igmp.n; i++)
		if (sh->igmp.groups[i].refs)
			v->groups[v->ngroups++] = sh->igmp.groups[i].addr;
	v->nsubs = 0;
	for (const struct myrio_stack *t = sh->stacks; t; t = t->share_next)
		for (uint32_t i = 0; t->udps && i < t->conf.max_udp_socks; i++) {
			const struct myrio_udp_sock *u = &t->udps[i];
			if (!u->in_use)
				continue;
			struct share_sub b = {
			    .to = t->inbox, .rip = u->rip, .lport = u->lport, .rport = u->rport};
			v->subs[v->nsubs++] = b;
			for (unsigned k = 0; k < u->ngroups; k++) {
				b.group = u->groups[k];
				v->subs[v->nsubs++] = b;
			}
		}
	return v;
}

/* Returns once no receive burst can still read what was published before the call. The
 * calling thread holds no view (it is not inside a burst of its own, or is called back
 * from one, which holds none across the call): its slot counts as having moved on. */
static void grace_period(struct stack_share *sh, unsigned nreaders)
{
	atomic_thread_fence(memory_order_seq_cst);
	for (const struct share_rx *b = reading; b; b = b->prev)
		if (!b->nested) /* moved on, for the grace periods of other threads */
			atomic_store_explicit(
			    &b->r->seq, atomic_load_explicit(&b->r->seq, memory_order_relaxed) + 2,
			    memory_order_relaxed);
	for (unsigned i = 0; i < nreaders; i++) {
		struct share_reader *r = &sh->readers[i];
		if (held_here(r))
			continue; /* odd till this thread's burst ends: after this returns */
		uint64_t seq = atomic_load_explicit(&r->seq, memory_order_acquire);
		while ((seq & 1) && atomic_load_explicit(&r->seq, memory_order_acquire) == seq)
			sched_yield();
	}
}

int share_commit(struct myrio_stack *s)
{
	struct stack_share *sh = s->share;
	bool empty;
	struct share_view *v = view_build(sh, &empty);
	struct share_view *old = atomic_exchange_explicit(&sh->view, v, memory_order_seq_cst);
	unsigned nreaders = sh->nreaders;
	share_unlock(s);
	if (old) {
		grace_period(sh, nreaders);
		free(old);
	}
	return v || empty ? 0 : -ENOMEM;
}

void share_detach(struct myrio_stack *s)
{
	struct stack_share *sh = s->share;
	if (!sh)
		return;
	share_lock(s);
	struct myrio_stack **pp = &sh->stacks;
	while (*pp != s)
		pp = &(*pp)->share_next;
	*pp = s->share_next;
	bool last = atomic_fetch_sub_explicit(&sh->nstacks, 1, memory_order_relaxed) == 1;
	share_commit(s); /* no view names s's inbox now, nor a sender still reads an old one */
	if (s->inbox)
		inbox_free(s->inbox);
	s->inbox = NULL;
	s->share = NULL;
	if (last) {
		pthread_mutex_destroy(&sh->lock);
		free(sh->readers);
		free(sh);
	}
}

void share_rx_begin(struct myrio_stack *s, struct share_rx *save)
{
	struct share_reader *r = &s->share->readers[s->queue];
	save->r = r;
	save->prev = reading;
	save->nested = held_here(r);
	reading = save;
	if (save->nested)
		return; /* the outer burst keeps the slot odd until it ends */
	atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst); /* seen odd before any view is read */
}

void share_rx_end(const struct share_rx *save)
{
	reading = save->prev;
	if (save->nested)
		return;
	struct share_reader *r = save->r;
	atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1,
			      memory_order_release);
}

static const struct share_view *view(const struct myrio_stack *s)
{
	return atomic_load_explicit(&s->share->view, memory_order_acquire);
}

bool share_host_joined(const struct myrio_stack *s, uint32_t group)
{
	const struct share_view *v = view(s);
	for (unsigned i = 0; v && i < v->ngroups; i++)
		if (v->groups[i] == group)
			return true;
	return false;
}

int share_inbox_fd(struct myrio_stack *s)
{
	struct share_inbox *in = s->inbox;
	int fd = atomic_load_explicit(&in->fd, memory_order_relaxed);
	if (fd < 0) {
		fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		atomic_store_explicit(&in->fd, fd, memory_order_release);
	}
	return fd;
}

static bool sub_takes(const struct share_sub *b, const struct udp_addrs *a)
{
	return b->lport == a->dport && b->group == (a->mcast ? a->dst : 0) &&
	       (!b->rport ? !a->connected_only : b->rport == a->sport && b->rip == a->src);
}

/* One copy into a sibling's inbox, and the sibling woken if it sleeps on its fd; false
 * when no slot with a buffer is free (or the datagram is longer than its buffers). */
static bool hand_to(struct share_inbox *in, const struct udp_addrs *a, const uint8_t *data,
		    uint32_t len)
{
	if (len > in->room)
		return false;
	uint32_t pos = atomic_load_explicit(&in->head, memory_order_relaxed);
	struct inbox_slot *sl;
	for (;;) {
		sl = &in->slot[pos & in->mask];
		uint32_t seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
		int32_t d = (int32_t)(seq - pos);
		if (d < 0)
			return false; /* full, or not given back yet */
		if (d == 0 && atomic_compare_exchange_weak_explicit(&in->head, &pos, pos + 1,
								    memory_order_relaxed,
								    memory_order_relaxed))
			break;
		if (d > 0)
			pos = atomic_load_explicit(&in->head, memory_order_relaxed);
	}
	memcpy(myrio_pkt_data(sl->pkt), data, len);
	sl->pkt->len = len;
	sl->a = *a;
	atomic_store_explicit(&sl->seq, pos + 1, memory_order_release);
	int fd = atomic_load_explicit(&in->fd, memory_order_acquire);
	if (fd >= 0) {
		uint64_t one = 1;
		(void)!write(fd, &one, sizeof(one));
	}
	return true;
}

unsigned share_udp_handoff(struct myrio_stack *s, const struct udp_addrs *a, const uint8_t *data,
			   uint32_t len)
{
	if (atomic_load_explicit(&s->share->nstacks, memory_order_relaxed) < 2)
		return 0;
	const struct share_view *v = view(s);
	unsigned n = 0;
	const struct share_inbox *last = s->inbox;
	for (unsigned i = 0; v && i < v->nsubs; i++) {
		const struct share_sub *b = &v->subs[i];
		if (b->to == last || b->to == s->inbox || !sub_takes(b, a))
			continue;
		last = b->to;
		n++;
		if (hand_to(b->to, a, data, len))
			s->st.udp_handed_off++;
		else
			s->st.drop_udp_handoff++;
		if (!a->group)
			break; /* a unicast datagram goes to one socket */
	}
	return n;
}

bool share_inbox_due(const struct myrio_stack *s)
{
	const struct share_inbox *in = s->inbox;
	const struct inbox_slot *sl = &in->slot[in->tail & in->mask];
	return atomic_load_explicit(&sl->seq, memory_order_acquire) == in->tail + 1;
}

/* Slots read are given back to the senders, each with a buffer beyond the stack's reserve
 * (none while the stack has no sibling: nobody would fill them). */
static void inbox_give(struct myrio_stack *s, struct share_inbox *in)
{
	if (atomic_load_explicit(&s->share->nstacks, memory_order_relaxed) < 2)
		return;
	while (in->given != in->tail) {
		struct inbox_slot *sl = &in->slot[in->given & in->mask];
		if (!sl->pkt) {
			if (myrio_pool_free_count(s->pool) <= s->ctl_reserve)
				return;
			sl->pkt = stack_alloc(s);
			if (!sl->pkt)
				return;
		}
		atomic_store_explicit(&sl->seq, in->given + in->mask + 1, memory_order_release);
		in->given++;
	}
}

static void inbox_take(struct myrio_stack *s, struct share_inbox *in)
{
	int fd = atomic_load_explicit(&in->fd, memory_order_relaxed);
	if (fd >= 0) {
		uint64_t v;
		(void)!read(fd, &v, sizeof(v));
	}
	for (;;) {
		struct inbox_slot *sl = &in->slot[in->tail & in->mask];
		if (atomic_load_explicit(&sl->seq, memory_order_acquire) != in->tail + 1)
			break;
		struct myrio_pkt *p = sl->pkt;
		struct udp_addrs a = sl->a;
		sl->pkt = NULL;
		in->tail++;
		udp_handoff_input(s, &a, p);
	}
	inbox_give(s, in);
}

void share_inbox_run(struct myrio_stack *s)
{
	struct share_inbox *in = s->inbox;
	if (share_inbox_due(s))
		inbox_take(s, in);
	else if (in->given != in->tail)
		inbox_give(s, in);
}
