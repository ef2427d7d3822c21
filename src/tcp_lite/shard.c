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
 * is answered by whichever stack it lands on. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/log.h"

#define SHARED_ENTRIES 256u /* the most recent addresses learned, oldest overwritten */

struct arp_shared {
	pthread_mutex_t lock;
	_Atomic uint64_t gen; /* moved by every publish */
	unsigned refs;	      /* stacks sharing it, under lock */
	unsigned next;
	struct {
		uint32_t ip;
		uint8_t mac[6];
	} e[SHARED_ENTRIES];
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

void shard_fini(struct myrio_stack *s)
{
	struct arp_shared *a = s->arp_shared;
	if (!a)
		return;
	s->arp_shared = NULL;
	pthread_mutex_lock(&a->lock);
	bool last = --a->refs == 0;
	pthread_mutex_unlock(&a->lock);
	if (last) {
		pthread_mutex_destroy(&a->lock);
		free(a);
	}
}

bool shard_port_ours(struct myrio_stack *s, uint32_t rip, uint16_t rport, uint16_t lport)
{
	/* as a received packet carries it: from the remote end to us */
	int q = myrio_port_rss_flow_queue(s->port, 6, htonl(rip), htonl(s->conf.ip), htons(rport),
					  htons(lport), NULL);
	return q < 0 || q == s->queue;
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
	struct arp_shared *a = sibling ? sibling->arp_shared : NULL;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		pthread_mutex_init(&a->lock, NULL);
	}
	struct myrio_stack *s;
	int rc = stack_create_on(&s, port, queue, conf, sibling);
	if (rc < 0) {
		if (!sibling) {
			pthread_mutex_destroy(&a->lock);
			free(a);
		}
		return rc;
	}
	s->nq = (uint16_t)nq;
	pthread_mutex_lock(&a->lock);
	a->refs++;
	pthread_mutex_unlock(&a->lock);
	s->arp_shared = a;
	*out = s;
	return 0;
}

uint16_t myrio_stack_queue(const struct myrio_stack *s)
{
	return s->queue;
}
