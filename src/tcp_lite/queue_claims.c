/* SPDX-License-Identifier: BSD-3-Clause */
/* Which queues of a port have a stack. A queue is polled by one thread without locks, so
 * by one stack; and the stacks of one port share one address, ARP table and set of groups,
 * so they are one family, made from its first. What breaks either is refused when the
 * stack is made, not found later as lost connections: the record is the process's, by
 * port, under a lock taken only by create and destroy. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "tcp_lite/stack.h"
#include "util/log.h"

struct port_claims {
	struct port_claims *next;
	const struct myrio_port *port;
	unsigned taken; /* queues with a stack */
	unsigned nq;
	bool queue[]; /* nq of them */
};

static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;
static struct port_claims *claims;

static struct port_claims **find(const struct myrio_port *port)
{
	struct port_claims **pp = &claims;
	while (*pp && (*pp)->port != port)
		pp = &(*pp)->next;
	return pp;
}

int queue_claim(const struct myrio_port *port, uint16_t queue, uint16_t nq, bool first)
{
	int rc = 0;
	pthread_mutex_lock(&claims_lock);
	struct port_claims **pp = find(port), *c = *pp;
	if (c && first) {
		log_err("tcp_lite: the port has a stack already: a stack of another queue is "
			"made with one of the port's stacks as its sibling "
			"(myrio_stack_create_queue), and one port takes one myrio_stack_create");
		rc = -EBUSY;
	} else if (c && (queue >= c->nq || c->queue[queue])) {
		log_err("tcp_lite: queue %u of the port has a stack already: one stack per "
			"queue, polled by one thread",
			queue);
		rc = -EBUSY;
	} else if (!c) {
		c = calloc(1, sizeof(*c) + nq * sizeof(c->queue[0]));
		if (!c) {
			rc = -ENOMEM;
		} else {
			c->port = port;
			c->nq = nq;
			*pp = c;
		}
	}
	if (rc == 0) {
		c->queue[queue] = true;
		c->taken++;
	}
	pthread_mutex_unlock(&claims_lock);
	return rc;
}

void queue_release(const struct myrio_port *port, uint16_t queue)
{
	pthread_mutex_lock(&claims_lock);
	struct port_claims **pp = find(port), *c = *pp;
	if (c && queue < c->nq && c->queue[queue]) {
		c->queue[queue] = false;
		if (--c->taken == 0) {
			*pp = c->next;
			free(c);
		}
	}
	pthread_mutex_unlock(&claims_lock);
}
