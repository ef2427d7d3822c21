/* SPDX-License-Identifier: BSD-3-Clause */
/* IOVA allocator: hands out device addresses for DMA regions inside the ranges the IOMMU
 * can translate, first fit, aligned to the region's page size so that the IOMMU can use
 * large pages. Pure bookkeeping (no ioctls), so that it is unit tested on its own. */
#ifndef MYRIO_PCI_IOVA_H
#define MYRIO_PCI_IOVA_H

#include <stdint.h>

#define MYRIO_IOVA_MAX_RANGES 16
/* Nothing is placed below this: a zero or tiny device address is always a bug. */
#define MYRIO_IOVA_FLOOR (1ull << 20)

struct myrio_iova_range {
	uint64_t start;
	uint64_t last; /* inclusive, so that the top of the 64-bit space fits */
};

struct myrio_iova_used {
	uint64_t start;
	uint64_t len;
};

struct myrio_iova_space {
	struct myrio_iova_range usable[MYRIO_IOVA_MAX_RANGES];
	unsigned n_usable;
	struct myrio_iova_used *used; /* sorted by start */
	unsigned n_used, cap;
};

/* ranges: what the IOMMU reports as valid (n == 0: a 39-bit space, the smallest that
 * Intel VT-d implements). Ranges beyond MYRIO_IOVA_MAX_RANGES are dropped. */
void myrio_iova_init(struct myrio_iova_space *s, const struct myrio_iova_range *ranges, unsigned n);
void myrio_iova_fini(struct myrio_iova_space *s);
/* align: a power of two. 0, -EINVAL, -ENOMEM (no space left, or no memory). */
int myrio_iova_alloc(struct myrio_iova_space *s, uint64_t len, uint64_t align, uint64_t *iova);
/* 0, or -ENOENT when iova does not start an allocation. */
int myrio_iova_free(struct myrio_iova_space *s, uint64_t iova);

#endif
