/* SPDX-License-Identifier: BSD-3-Clause */
/* DMA memory: regions that a device may read and write.
 *
 * A region is file-backed (a hugetlbfs file, or a memfd when hugepages are missing) so that
 * it can be handed to another process by file descriptor, as the model daemon needs, and
 * it is pinned and physically contiguous in IOVA space once a bus maps it
 * (VFIO_IOMMU_MAP_DMA on hardware, registration with the model).
 */
#ifndef MYRIO_MEM_DMA_H
#define MYRIO_MEM_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct myrio_bus;

struct myrio_dma_region {
	void *va;
	size_t len; /* rounded up to page_size */
	size_t page_size;
	uint64_t iova; /* valid once mapped */
	int fd;	       /* backing file, offset 0 */
	bool hugepages;
	struct myrio_bus *bus; /* mapped on this bus, or NULL */
};

/* Allocates len bytes (rounded up), zeroed. Hugepages if reserved and mounted, else shared
 * memory with one warning per process that says how to reserve hugepages. */
int myrio_dma_alloc(struct myrio_dma_region *r, size_t len);
void myrio_dma_free(struct myrio_dma_region *r);

static inline uint64_t myrio_dma_iova(const struct myrio_dma_region *r, const void *p)
{
	return r->iova + (uint64_t)((const uint8_t *)p - (const uint8_t *)r->va);
}

/* Pools: count elements of a buffer of buf_len bytes each, carved from one region. */
struct myrio_pool;
int myrio_pool_create_in(struct myrio_bus *bus, uint32_t count, uint32_t buf_len,
			 struct myrio_pool **out);
/* The same, and no buffer crosses a multiple of no_cross (a power of two; 0: no rule), as a
 * device may require of its DMA buffers. */
int myrio_pool_create_bounded(struct myrio_bus *bus, uint32_t count, uint32_t buf_len,
			      uint32_t no_cross, struct myrio_pool **out);

#endif
