/* Packet buffer pools: one DMA region, fixed-size elements, a stack of free ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "mem/dma.h"
#include "myrio/pkt.h"
#include "util/log.h"

#define POOL_MAX_COUNT (1u << 22)
#define POOL_MAX_BUF (128u * 1024) /* a whole IPv4 datagram and its headers fit */

int myrio_pool_create_in(struct myrio_bus *bus, uint32_t count, uint32_t buf_len,
			 struct myrio_pool **out)
{
	*out = NULL;
	if (count == 0 || count > POOL_MAX_COUNT || buf_len <= MYRIO_PKT_HEADROOM ||
	    buf_len > POOL_MAX_BUF) {
		log_err("pool of %u buffers of %u bytes: count must be 1..%u and size %u..%u",
			count, buf_len, POOL_MAX_COUNT, MYRIO_PKT_HEADROOM + 1, POOL_MAX_BUF);
		return -EINVAL;
	}
	/* Elements are 64-byte multiples; power-of-two sizes up to 4 KiB keep every buffer
	 * inside one 4 KiB page, as small receive buffers must be (§4.4). */
	uint32_t elem = (uint32_t)sizeof(struct myrio_pkt) + buf_len;
	elem = (elem + 63u) & ~63u;
	if (elem <= 4096) {
		uint32_t p2 = 64;
		while (p2 < elem)
			p2 <<= 1;
		elem = p2;
	}
	struct myrio_pool *pool = calloc(1, sizeof(*pool));
	struct myrio_dma_region *r = calloc(1, sizeof(*r));
	struct myrio_pkt **stack = calloc(count, sizeof(*stack));
	int rc = -ENOMEM;
	if (!pool || !r || !stack)
		goto fail;
	rc = myrio_dma_alloc(r, (size_t)elem * count);
	if (rc < 0)
		goto fail;
	if (bus) {
		rc = bus->ops->dma_map(bus, r);
		if (rc < 0) {
			myrio_dma_free(r);
			goto fail;
		}
	}
	pool->free_stack = stack;
	pool->count = count;
	pool->elem_size = elem;
	pool->buf_len = elem - (uint32_t)sizeof(struct myrio_pkt);
	pool->base = r->va;
	pool->base_iova = r->iova;
	pool->region = r;
	/* Push in reverse so the first allocations come from the start of the region. */
	for (uint32_t i = 0; i < count; i++) {
		struct myrio_pkt *p = (struct myrio_pkt *)(pool->base + (size_t)elem * i);
		p->pool = pool;
		p->iova = pool->base_iova + (uint64_t)elem * i + sizeof(struct myrio_pkt);
		p->buf_len = pool->buf_len;
		stack[count - 1 - i] = p;
	}
	pool->free_top = count;
	if (bus)
		myrio_bus_add_pool(bus, pool);
	*out = pool;
	return 0;
fail:
	if (rc == -ENOMEM)
		log_err("out of memory creating a pool of %u buffers", count);
	free(stack);
	free(r);
	free(pool);
	return rc;
}

void myrio_pool_destroy(struct myrio_pool *pool)
{
	if (!pool)
		return;
	struct myrio_dma_region *r = pool->region;
	struct myrio_bus *bus = r->bus;
	if (bus && pool->free_top != pool->count) {
		log_info("%s: pool destroyed with %u buffers still out; it is released when the "
			 "port closes",
			 bus->name, pool->count - pool->free_top);
		pool->orphaned = 1;
		return;
	}
	if (bus) {
		bus->ops->dma_unmap(bus, r);
		myrio_bus_remove_pool(bus, pool);
	}
	myrio_dma_free(r);
	free(r);
	free(pool->free_stack);
	free(pool);
	if (bus && bus->closing && !bus->pools)
		bus->ops->close(bus); /* the port went first; the last pool closes the bus */
}
