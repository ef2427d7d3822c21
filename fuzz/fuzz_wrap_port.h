/* SPDX-License-Identifier: BSD-3-Clause */
/* A port wrapped around another (the stack's end of a pair port): the fuzzer sees every
 * burst the stack transmits before the inner port takes it, and reads the other end right
 * after, as a live peer would. The stack waits at destroy for the port to hand back its
 * buffers, and on the pair port that needs the peer to read. */
#ifndef MYRIO_FUZZ_WRAP_PORT_H
#define MYRIO_FUZZ_WRAP_PORT_H

#include "port/port_ops.h"

struct fuzz_wrap_port {
	struct myrio_port port; /* what the stack is bound to */
	struct myrio_port *inner;
	void (*before_tx)(void *arg, struct myrio_pkt **pkts, uint16_t n); /* may be NULL */
	void (*after_tx)(void *arg);
	void *arg;
};

static inline struct fuzz_wrap_port *fuzz_wrap(struct myrio_port *p)
{
	return (struct fuzz_wrap_port *)p;
}

static uint16_t fuzz_wrap_rx(struct myrio_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	struct myrio_port *in = fuzz_wrap(p)->inner;
	return in->ops->rx_burst(in, pkts, n);
}

static uint16_t fuzz_wrap_tx(struct myrio_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	struct fuzz_wrap_port *w = fuzz_wrap(p);
	if (w->before_tx)
		w->before_tx(w->arg, pkts, n);
	uint16_t took = w->inner->ops->tx_burst(w->inner, pkts, n);
	w->after_tx(w->arg);
	return took;
}

static int fuzz_wrap_pool(struct myrio_port *p, uint32_t count, uint32_t len,
			  struct myrio_pool **out)
{
	struct myrio_port *in = fuzz_wrap(p)->inner;
	return in->ops->pool_create(in, count, len, out);
}

static int fuzz_wrap_link(struct myrio_port *p)
{
	struct myrio_port *in = fuzz_wrap(p)->inner;
	return in->ops->link(in);
}

static int fuzz_wrap_info(struct myrio_port *p, struct myrio_port_info *info)
{
	struct myrio_port *in = fuzz_wrap(p)->inner;
	return in->ops->info(in, info);
}

static int fuzz_wrap_stats(struct myrio_port *p, struct myrio_port_stats *st)
{
	struct myrio_port *in = fuzz_wrap(p)->inner;
	return in->ops->stats(in, st);
}

static const struct myrio_port_ops fuzz_wrap_ops = {
    .rx_burst = fuzz_wrap_rx,
    .tx_burst = fuzz_wrap_tx,
    .pool_create = fuzz_wrap_pool,
    .link = fuzz_wrap_link,
    .info = fuzz_wrap_info,
    .stats = fuzz_wrap_stats,
};

/* Binds w to inner; the stack is then created on &w->port. */
static inline void fuzz_wrap_init(struct fuzz_wrap_port *w, struct myrio_port *inner,
				  void (*before_tx)(void *, struct myrio_pkt **, uint16_t),
				  void (*after_tx)(void *), void *arg)
{
	w->port.ops = &fuzz_wrap_ops;
	snprintf(w->port.device, sizeof(w->port.device), "fuzz");
	w->inner = inner;
	w->before_tx = before_tx;
	w->after_tx = after_tx;
	w->arg = arg;
}

#endif
