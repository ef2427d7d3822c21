/* SPDX-License-Identifier: BSD-3-Clause */
/* Two tcp_lite stacks joined by a link, a fake clock that advances with every poll round,
 * and a checked byte pattern. Shared by the stack integration tests. */
#ifndef STACK_HARNESS_H
#define STACK_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrio/sim.h"
#include "myrio/tcp_lite.h"
#include "fake_clock.h"
#include "link_pair.h"
#include "port/port_ops.h"
#include "test_pattern.h"

#define IP_A 0x0a000001u /* 10.0.0.1 */
#define IP_B 0x0a000002u /* 10.0.0.2 */

struct conn_ev {
	struct myrio_tcp_conn *c;
	int connected, accepted, readable, writable, closed, error;
};

struct harness {
	struct link_pair link;
	struct myrio_port *pa, *pb; /* link.a, link.b */
	struct myrio_stack *a, *b;
	uint64_t now_ns;
	uint64_t tick_ns;      /* clock advance per round */
	struct myrio_sim *sim; /* stepped model world, when the ports are model NICs */
	unsigned steps;	       /* model steps (1 us of virtual time each) per round */
	struct conn_ev ev[8];
	unsigned nev;
	struct myrio_udp_sock *udp_readable[8];
	unsigned nudp;
};


static struct conn_ev *h_ev(struct harness *h, struct myrio_tcp_conn *c)
{
	for (unsigned i = 0; i < h->nev; i++)
		if (h->ev[i].c == c)
			return &h->ev[i];
	if (h->nev == 8)
		return NULL;
	memset(&h->ev[h->nev], 0, sizeof(h->ev[0]));
	h->ev[h->nev].c = c;
	return &h->ev[h->nev++];
}

static inline void h_tcp_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct conn_ev *e = h_ev(arg, c);
	if (!e)
		return;
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED:
		e->accepted++;
		break;
	case MYRIO_TCP_EV_CONNECTED:
		e->connected++;
		break;
	case MYRIO_TCP_EV_READABLE:
		e->readable++;
		break;
	case MYRIO_TCP_EV_WRITABLE:
		e->writable++;
		break;
	case MYRIO_TCP_EV_CLOSED:
		e->closed++;
		break;
	case MYRIO_TCP_EV_ERROR:
		e->error++;
		break;
	}
}

static inline void h_udp_event(void *arg, struct myrio_udp_sock *u)
{
	struct harness *h = arg;
	if (h->nudp < 8)
		h->udp_readable[h->nudp++] = u;
}

/* Opens the link (link_pair.h): "sim:" with opts_a the model's spec, a daemon's NICs
 * "simd:A+B@SOCKET", else the pair link "pair:NAME" with each end's options; and a stack
 * on each port. tweak may change the stack configuration (both stacks). */
static inline int h_open(struct harness *h, const char *name, const char *opts_a,
			 const char *opts_b, void (*tweak)(struct myrio_stack_conf *))
{
	memset(h, 0, sizeof(*h));
	h->now_ns = 1000000000ull;
	h->tick_ns = 20000; /* 20 us per round */
	char link[256];
	if (strncmp(name, "sim:", 4) == 0) {
		/* The stack clock is the world's virtual time: 4 steps of 1 us per round. */
		snprintf(link, sizeof(link), "sim:%s", opts_a ? opts_a : "");
		h->steps = 4;
		h->tick_ns = 4000;
	} else if (strncmp(name, "simd:", 5) == 0) {
		/* The daemon's model runs in real time: so do the stacks (the host's clock). */
		snprintf(link, sizeof(link), "%s", name);
		h->tick_ns = 0;
	} else {
		snprintf(link, sizeof(link), "pair:%s", name);
	}
	int rc = link_pair_open(&h->link, link, opts_a, opts_b, NULL);
	if (rc < 0)
		return rc;
	h->pa = h->link.a;
	h->pb = h->link.b;
	h->sim = h->link.sim;
	struct myrio_stack_conf conf;
	myrio_stack_conf_init(&conf);
	conf.netmask = 0xffffff00u;
	conf.clock = h->tick_ns ? fake_clock_read : NULL;
	conf.clock_arg = h->tick_ns ? &h->now_ns : NULL;
	conf.tcp_event = h_tcp_event;
	conf.udp_event = h_udp_event;
	conf.event_arg = h;
	conf.time_wait_ms = 1000;
	conf.seed = 42;
	if (tweak)
		tweak(&conf);
	conf.ip = IP_A;
	rc = myrio_stack_create(&h->a, h->pa, &conf);
	if (rc < 0)
		return rc;
	conf.ip = IP_B;
	conf.seed = 43;
	return myrio_stack_create(&h->b, h->pb, &conf);
}

static inline void h_round(struct harness *h)
{
	myrio_stack_poll(h->a);
	myrio_stack_poll(h->b);
	link_pair_step(&h->link, h->steps);
	h->now_ns += h->tick_ns;
}

static inline void h_rounds(struct harness *h, unsigned n)
{
	while (n--)
		h_round(h);
}

static inline void h_close(struct harness *h)
{
	/* Let in-flight frames drain so every buffer finds its way home. */
	for (int i = 0; i < 4; i++)
		h_round(h);
	myrio_stack_destroy(h->a);
	myrio_stack_destroy(h->b);
	for (int i = 0; i < 2; i++) {
		h->pa->ops->tx_burst(h->pa, NULL, 0);
		h->pb->ops->tx_burst(h->pb, NULL, 0);
	}
	link_pair_close(&h->link); /* the public close: it also withdraws the published counters */
}

static inline uint64_t env_bytes(const char *var, uint64_t dflt)
{
	const char *v = getenv(var);
	if (!v || !*v)
		return dflt;
	char *end;
	double d = strtod(v, &end);
	if (*end == 'K' || *end == 'k')
		d *= 1024;
	else if (*end == 'M' || *end == 'm')
		d *= 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		d *= 1024.0 * 1024 * 1024;
	return (uint64_t)d;
}

#endif
