/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffer pools: one DMA region, fixed-size elements, a stack of free ones. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "mem/dma.h"
#include "myrio/pkt.h"
#include "util/log.h"

#define POOL_MAX_COUNT (1u << 22)
#define POOL_MAX_BUF (128u * 1024) /* a whole IPv4 datagram and its headers fit */

/* What a pool owns besides its public fields (pool->region points here). */
struct pool_mem {
	struct myrio_dma_region r;
	struct myrio_pool *pool;
	bool orphaned;		    /* destroyed while buffers were out */
	struct myrio_bus_hook hook; /* an orphan's second chance when its bus closes */
};

static void pool_free(struct myrio_pool *pool)
{
	struct pool_mem *m = pool->region;
	struct myrio_bus *bus = m->r.bus;
	if (bus)
		bus->ops->dma_unmap(bus, &m->r);
	myrio_dma_free(&m->r);
	free(m);
	free(pool->free_stack);
	free(pool);
	if (bus)
		myrio_bus_release(bus); /* the port went first: the last pool closes the bus */
}

/* The bus's opener closed it, after its driver handed back every buffer it held. */
static void orphan_at_close(struct myrio_bus_hook *hook)
{
	struct pool_mem *m = (struct pool_mem *)((char *)hook - offsetof(struct pool_mem, hook));
	struct myrio_pool *pool = m->pool;
	if (pool->free_top == pool->count) {
		pool_free(pool);
		return;
	}
	log_warn("%s: a destroyed pool still misses %u buffers; its memory stays mapped until "
		 "the process ends",
		 m->r.bus->name, pool->count - pool->free_top);
}

int myrio_pool_create_bounded(struct myrio_bus *bus, uint32_t count, uint32_t buf_len,
			      uint32_t no_cross, struct myrio_pool **out)
{
	*out = NULL;
	if (count == 0 || count > POOL_MAX_COUNT || buf_len <= MYRIO_PKT_HEADROOM ||
	    buf_len > POOL_MAX_BUF || (no_cross & (no_cross - 1))) {
		log_err("pool of %u buffers of %u bytes: count must be 1..%u and size %u..%u",
			count, buf_len, POOL_MAX_COUNT, MYRIO_PKT_HEADROOM + 1, POOL_MAX_BUF);
		return -EINVAL;
	}
	/* Elements are 64-byte multiples; with a boundary, elements that fit under it get a
	 * power-of-two size, so that none crosses a multiple of it (the region is aligned). */
	uint32_t elem = (uint32_t)sizeof(struct myrio_pkt) + buf_len;
	elem = (elem + 63u) & ~63u;
	if (elem <= no_cross) {
		uint32_t p2 = 64;
		while (p2 < elem)
			p2 <<= 1;
		elem = p2;
	}
	struct myrio_pool *pool = calloc(1, sizeof(*pool));
	struct pool_mem *m = calloc(1, sizeof(*m));
	struct myrio_pkt **stack = calloc(count, sizeof(*stack));
	int rc = -ENOMEM;
	if (!pool || !m || !stack)
		goto fail;
	struct myrio_dma_region *r = &m->r;
	rc = myrio_dma_alloc(r, (size_t)elem * count);
	if (rc < 0)
		goto fail;
	if (bus) {
		rc = bus->ops->dma_map(bus, r);
		if (rc < 0) {
			myrio_dma_free(r);
			goto fail;
		}
		myrio_bus_hold(bus);
	}
	m->pool = pool;
	pool->free_stack = stack;
	pool->count = count;
	pool->elem_size = elem;
	pool->buf_len = elem - (uint32_t)sizeof(struct myrio_pkt);
	pool->base = r->va;
	pool->base_iova = r->iova;
	pool->region = m;
	/* Push in reverse so the first allocations come from the start of the region. */
	for (uint32_t i = 0; i < count; i++) {
		struct myrio_pkt *p = (struct myrio_pkt *)(pool->base + (size_t)elem * i);
		p->pool = pool;
		p->iova = pool->base_iova + (uint64_t)elem * i + sizeof(struct myrio_pkt);
		p->buf_len = pool->buf_len;
		stack[count - 1 - i] = p;
	}
	pool->free_top = count;
	*out = pool;
	return 0;
fail:
	if (rc == -ENOMEM)
		log_err("out of memory creating a pool of %u buffers", count);
	free(stack);
	free(m);
	free(pool);
	return rc;
}

int myrio_pool_create_in(struct myrio_bus *bus, uint32_t count, uint32_t buf_len,
			 struct myrio_pool **out)
{
	return myrio_pool_create_bounded(bus, count, buf_len, 0, out);
}

int myrio_pool_create(uint32_t count, uint32_t buf_len, struct myrio_pool **out)
{
	return myrio_pool_create_bounded(NULL, count, buf_len, 0, out);
}

void myrio_pool_destroy(struct myrio_pool *pool)
{
	if (!pool)
		return;
	struct pool_mem *m = pool->region;
	struct myrio_bus *bus = m->r.bus;
	if (bus && pool->free_top != pool->count) {
		if (m->orphaned)
			return;
		log_info("%s: pool destroyed with %u buffers still out; it is released when the "
			 "port closes",
			 bus->name, pool->count - pool->free_top);
		m->orphaned = true;
		m->hook.fn = orphan_at_close;
		myrio_bus_at_close(bus, &m->hook);
		return;
	}
	pool_free(pool);
}
