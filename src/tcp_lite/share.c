/* SPDX-License-Identifier: BSD-3-Clause */
/* What the stacks of one port and address share off the fast path: the host's multicast
 * groups and IGMP state (igmp.c), and the datagrams one stack hands to another.
 *
 * The NIC picks a UDP datagram's queue by its addresses, not by where its socket lives: a
 * multicast group joined on one stack, a broadcast, or a port bound on one stack only gets
 * datagrams on every queue. The stack that receives one copies it to each sibling with a
 * socket that takes it (the socket tables are written under the lock, so a sibling reads
 * them under it), and the sibling's next poll delivers the copy. The lock is taken on
 * joins, leaves, binds, IGMP messages and timers, and, on a port of several stacks, on
 * multicast, broadcast and datagrams to a port not bound locally. TCP and a unicast
 * datagram whose socket is on its queue never take it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tcp_lite/stack.h"

#define INBOX_MAX 1024u /* datagrams waiting for a stack's poll: a stalled stack costs this */

struct share_handoff {
	struct share_handoff *next;
	struct udp_addrs a;
	uint32_t len;
	uint8_t data[];
};

void share_lock(const struct myrio_stack *s)
{
	pthread_mutex_lock(&s->share->lock);
}

void share_unlock(const struct myrio_stack *s)
{
	pthread_mutex_unlock(&s->share->lock);
}

int share_attach(struct myrio_stack *s, const struct myrio_stack *sibling)
{
	s->inbox_fd = -1;
	struct stack_share *sh = sibling ? sibling->share : NULL;
	if (!sh) {
		sh = calloc(1, sizeof(*sh));
		if (!sh)
			return -ENOMEM;
		pthread_mutex_init(&sh->lock, NULL);
	}
	s->share = sh;
	share_lock(s);
	s->share_next = sh->stacks;
	sh->stacks = s;
	atomic_fetch_add_explicit(&sh->nstacks, 1, memory_order_relaxed);
	share_unlock(s);
	return 0;
}

static void inbox_free(struct share_handoff *h)
{
	while (h) {
		struct share_handoff *n = h->next;
		free(h);
		h = n;
	}
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
	inbox_free(s->inbox);
	s->inbox = s->inbox_tail = NULL;
	atomic_store_explicit(&s->inbox_len, 0, memory_order_relaxed);
	if (s->inbox_fd >= 0)
		close(s->inbox_fd);
	s->inbox_fd = -1;
	share_unlock(s);
	s->share = NULL;
	if (last) {
		pthread_mutex_destroy(&sh->lock);
		free(sh);
	}
}

int share_inbox_fd(struct myrio_stack *s)
{
	share_lock(s);
	if (s->inbox_fd < 0)
		s->inbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int fd = s->inbox_fd;
	share_unlock(s);
	return fd;
}

/* Under the lock: one copy into t's inbox, and t woken if it sleeps on its fd. */
static bool hand_to(struct myrio_stack *t, const struct udp_addrs *a, const uint8_t *data,
		    uint32_t len)
{
	if (atomic_load_explicit(&t->inbox_len, memory_order_relaxed) >= INBOX_MAX)
		return false;
	struct share_handoff *h = malloc(sizeof(*h) + len);
	if (!h)
		return false;
	h->next = NULL;
	h->a = *a;
	h->len = len;
	memcpy(h->data, data, len);
	if (t->inbox_tail)
		t->inbox_tail->next = h;
	else
		t->inbox = h;
	t->inbox_tail = h;
	atomic_fetch_add_explicit(&t->inbox_len, 1, memory_order_release);
	if (t->inbox_fd >= 0) {
		uint64_t one = 1;
		(void)!write(t->inbox_fd, &one, sizeof(one));
	}
	return true;
}

unsigned share_udp_handoff(struct myrio_stack *s, const struct udp_addrs *a, const uint8_t *data,
			   uint32_t len)
{
	if (atomic_load_explicit(&s->share->nstacks, memory_order_relaxed) < 2)
		return 0;
	unsigned n = 0;
	share_lock(s);
	for (struct myrio_stack *t = s->share->stacks; t; t = t->share_next) {
		if (t == s || !udp_wants(t, a))
			continue;
		n++;
		if (hand_to(t, a, data, len))
			s->st.udp_handed_off++;
		else
			s->st.drop_udp_handoff++;
		if (!a->group)
			break; /* a unicast datagram goes to one socket */
	}
	share_unlock(s);
	return n;
}

void share_inbox_run(struct myrio_stack *s)
{
	share_lock(s);
	struct share_handoff *h = s->inbox;
	s->inbox = s->inbox_tail = NULL;
	atomic_store_explicit(&s->inbox_len, 0, memory_order_relaxed);
	if (s->inbox_fd >= 0) {
		uint64_t v;
		(void)!read(s->inbox_fd, &v, sizeof(v));
	}
	share_unlock(s);
	for (struct share_handoff *k = h; k; k = k->next)
		udp_handoff_input(s, &k->a, k->data, k->len);
	inbox_free(h);
}
