/* SPDX-License-Identifier: BSD-3-Clause */
/* Stacks of one port, one per queue (one per core): they share the port, its IPv4 address
 * and what ARP learned, and nothing on the data path. A flow's packets reach the queue its
 * RSS hash names, so a connection lives on that queue's stack: listeners exist on every
 * stack (each accepts what lands on it), and an active open picks a source port whose hash
 * brings the answers back to the opening stack (as F-Stack and mTCP do).
 *
 * ARP frames land on one queue (they carry no IPv4 header to hash), so the stack that
 * learns an address publishes it here; a stack with frames waiting for an address looks
 * when the generation moved. The lock is taken on ARP events and misses only. ICMP echo
 * is answered by whichever stack it lands on; an ICMP error lands where its addresses hash
 * (the NIC looks no deeper), so one about a TCP flow of another stack is passed to that
 * stack through a small box per queue, also under the lock (errors are rare), and handled
 * from its poll. UDP sockets live on the stack the application chose: their errors stay
 * where they land, as their datagrams do (hashed by addresses by default). */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/log.h"

#define SHARED_ENTRIES 256u /* the most recent addresses learned, oldest overwritten */
#define ICMP_BOX 16u	    /* errors waiting for their stack, per queue; more are ignored */

struct icmp_passed {
	struct icmp_err e;
	uint8_t th[8]; /* the quoted TCP header's first 8 bytes: ports and sequence */
};

struct arp_shared {
	pthread_mutex_t lock;
	_Atomic uint64_t gen; /* moved by every publish */
	unsigned refs;	      /* stacks sharing it, under lock */
	unsigned next;
	struct {
		uint32_t ip;
		uint8_t mac[6];
	} e[SHARED_ENTRIES];
	unsigned nq;
	_Atomic unsigned *icmp_n; /* per queue: errors in its box */
	struct icmp_passed *icmp; /* per queue: ICMP_BOX of them, under lock */
};

void shard_arp_publish(struct myrio_stack *s, uint32_t ip, const uint8_t mac[6])
{
	struct arp_shared *a = s->arp_shared;
	pthread_mutex_lock(&a->lock);
	unsigned i;
	for (i = 0; i < SHARED_ENTRIES && a->e[i].ip != ip; i++)
		;
	if (i == SHARED_ENTRIES)
		i = a->next++ % SHARED_ENTRIES;
	a->e[i].ip = ip;
	memcpy(a->e[i].mac, mac, 6);
	atomic_fetch_add_explicit(&a->gen, 1, memory_order_release);
	pthread_mutex_unlock(&a->lock);
}

static void sync_one(struct myrio_stack *s, uint32_t ip)
{
	struct arp_shared *a = s->arp_shared;
	uint8_t mac[6];
	bool found = false;
	pthread_mutex_lock(&a->lock);
	for (unsigned i = 0; i < SHARED_ENTRIES && !found; i++)
		if (a->e[i].ip == ip) {
			memcpy(mac, a->e[i].mac, 6);
			found = true;
		}
	pthread_mutex_unlock(&a->lock);
	if (found)
		arp_learned(s, ip, mac);
}

void shard_arp_sync(struct myrio_stack *s)
{
	uint64_t g = atomic_load_explicit(&s->arp_shared->gen, memory_order_acquire);
	if (g == s->arp_shared_seen)
		return;
	s->arp_shared_seen = g;
	arp_waiting_each(s, sync_one);
}

static void shared_free(struct arp_shared *a)
{
	pthread_mutex_destroy(&a->lock);
	free(a->icmp_n);
	free(a->icmp);
	free(a);
}

void shard_fini(struct myrio_stack *s)
{
	struct arp_shared *a = s->arp_shared;
	if (!a)
		return;
	s->arp_shared = NULL;
	pthread_mutex_lock(&a->lock);
	bool last = --a->refs == 0;
	pthread_mutex_unlock(&a->lock);
	if (last)
		shared_free(a);
}

bool shard_port_ours(struct myrio_stack *s, uint32_t rip, uint16_t rport, uint16_t lport)
{
	/* as a received packet carries it: from the remote end to us */
	int q = myrio_port_rss_flow_queue(s->port, 6, htonl(rip), htonl(s->conf.ip), htons(rport),
					  htons(lport), NULL);
	return q < 0 || q == s->queue;
}

bool shard_icmp_pass(struct myrio_stack *s, const struct icmp_err *e, const uint8_t *th)
{
	struct arp_shared *a = s->arp_shared;
	if (!a)
		return false;
	/* the flow's packets as they arrive: from the remote end (the quote's destination) */
	int q = myrio_port_rss_flow_queue(s->port, 6, htonl(e->dst), htonl(s->conf.ip),
					  htons(get_be16(th + 2)), htons(get_be16(th)), NULL);
	if (q < 0 || q == s->queue || (unsigned)q >= a->nq)
		return false;
	pthread_mutex_lock(&a->lock);
	unsigned n = atomic_load_explicit(&a->icmp_n[q], memory_order_relaxed);
	if (n < ICMP_BOX) {
		struct icmp_passed *m = &a->icmp[(unsigned)q * ICMP_BOX + n];
		m->e = *e;
		memcpy(m->th, th, sizeof(m->th));
		atomic_store_explicit(&a->icmp_n[q], n + 1, memory_order_relaxed);
	} else {
		s->st.icmp_errors_ignored++;
	}
	pthread_mutex_unlock(&a->lock);
	return true;
}

void shard_icmp_take(struct myrio_stack *s)
{
	struct arp_shared *a = s->arp_shared;
	struct icmp_passed m[ICMP_BOX];
	pthread_mutex_lock(&a->lock);
	unsigned n = atomic_load_explicit(&a->icmp_n[s->queue], memory_order_relaxed);
	memcpy(m, &a->icmp[(unsigned)s->queue * ICMP_BOX], n * sizeof(m[0]));
	atomic_store_explicit(&a->icmp_n[s->queue], 0, memory_order_relaxed);
	pthread_mutex_unlock(&a->lock);
	for (unsigned i = 0; i < n; i++)
		tcp_icmp_error(s, &m[i].e, m[i].th);
}

static struct arp_shared *shared_new(unsigned nq)
{
	struct arp_shared *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->nq = nq;
	a->icmp_n = calloc(nq, sizeof(*a->icmp_n));
	a->icmp = calloc((size_t)nq * ICMP_BOX, sizeof(*a->icmp));
	if (!a->icmp_n || !a->icmp) {
		free(a->icmp_n);
		free(a->icmp);
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->refs = 1;
	return a;
}

int myrio_stack_create_queue(struct myrio_stack **out, struct myrio_port *port, uint16_t queue,
			     const struct myrio_stack_conf *conf, struct myrio_stack *sibling)
{
	*out = NULL;
	if (!conf) {
		log_err("tcp_lite: a stack per queue needs its configuration (conf.ip)");
		return -EINVAL;
	}
	int nq = myrio_port_queues(port);
	if (queue >= nq) {
		log_err("tcp_lite: queue %u of a port of %d", queue, nq);
		return -EINVAL;
	}
	if (sibling &&
	    (sibling->port != port || sibling->conf.ip != conf->ip || sibling->queue == queue)) {
		log_err("tcp_lite: a sibling stack is on the same port and address, on another "
			"queue");
		return -EINVAL;
	}
	if (sibling && !sibling->arp_shared) {
		log_err("tcp_lite: a sibling stack is made by myrio_stack_create_queue too (one "
			"from myrio_stack_create does not know the port's queues)");
		return -EINVAL;
	}
	/* The first stack makes what its siblings share: a sibling, which may be polling on
	 * its own thread, is only read. */
	struct arp_shared *a = sibling ? sibling->arp_shared : shared_new((unsigned)nq);
	if (!a)
		return -ENOMEM;
	struct myrio_stack *s;
	int rc = stack_create_on(&s, port, queue, conf, sibling);
	if (rc < 0) {
		if (!sibling)
			shared_free(a);
		return rc;
	}
	s->nq = (uint16_t)nq;
	if (sibling) {
		pthread_mutex_lock(&a->lock);
		a->refs++;
		pthread_mutex_unlock(&a->lock);
	}
	s->arp_shared = a;
	s->icmp_waiting = &a->icmp_n[queue];
	*out = s;
	return 0;
}

uint16_t myrio_stack_queue(const struct myrio_stack *s)
{
	return s->queue;
}
