/* SPDX-License-Identifier: BSD-3-Clause */
/* DMA regions through the IOMMU: each region gets an IOVA from the allocator and is pinned
 * and mapped with VFIO_IOMMU_MAP_DMA; the device can reach nothing else. */
#include <errno.h>
#include <linux/vfio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "mem/dma.h"
#include "pci/vfio_dev.h"
#include "util/log.h"

/* The valid IOVA ranges (kernel 5.4+) avoid holes such as the MSI window at 0xfee00000.
 * Capabilities follow each other unaligned (the DMA-available one is 12 bytes long), so
 * every field is copied out rather than dereferenced in place. */
unsigned myrio_vfio_parse_iova_ranges(const struct vfio_iommu_type1_info *info, size_t len,
				      struct myrio_iova_range *out, unsigned max)
{
	const uint8_t *base = (const uint8_t *)info;
	struct vfio_info_cap_header h;
	struct vfio_iommu_type1_info_cap_iova_range c;
	struct vfio_iova_range r;
	if (len < sizeof(*info) || !(info->flags & VFIO_IOMMU_INFO_CAPS))
		return 0;
	size_t off = info->cap_offset;
	for (unsigned hops = 0; off && hops < 16; hops++) {
		if (off < sizeof(*info) || off + sizeof(h) > len)
			return 0;
		memcpy(&h, base + off, sizeof(h));
		if (h.id != VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
			off = h.next;
			continue;
		}
		if (off + sizeof(c) > len)
			return 0;
		memcpy(&c, base + off, sizeof(c));
		unsigned n = 0;
		for (uint32_t i = 0; i < c.nr_iovas && n < max; i++) {
			size_t at = off + sizeof(c) + (size_t)i * sizeof(r);
			if (at + sizeof(r) > len)
				break;
			memcpy(&r, base + at, sizeof(r));
			out[n].start = r.start;
			out[n].last = r.end;
			n++;
		}
		return n;
	}
	return 0;
}

int myrio_vfio_iova_setup(struct myrio_vfio_dev *d)
{
	struct myrio_iova_range ranges[MYRIO_IOVA_MAX_RANGES];
	unsigned n = 0;
	struct vfio_iommu_type1_info probe = {.argsz = sizeof(probe)};
	d->iova_pgsizes = 4096;
	if (ioctl(d->container, VFIO_IOMMU_GET_INFO, &probe) == 0) {
		if (probe.flags & VFIO_IOMMU_INFO_PGSIZES)
			d->iova_pgsizes = probe.iova_pgsizes;
		size_t len = probe.argsz > sizeof(probe) ? probe.argsz : sizeof(probe);
		if (len > 65536)
			len = 65536; /* far beyond any real answer */
		struct vfio_iommu_type1_info *info = calloc(1, len);
		if (info) {
			info->argsz = (uint32_t)len;
			if (ioctl(d->container, VFIO_IOMMU_GET_INFO, info) == 0)
				n = myrio_vfio_parse_iova_ranges(info, len, ranges,
								 MYRIO_IOVA_MAX_RANGES);
			free(info);
		}
	}
	myrio_iova_init(&d->iova, ranges, n);
	if (n)
		log_info("%s: IOMMU page sizes 0x%llx, %u valid IOVA ranges, first "
			 "0x%llx-0x%llx",
			 d->bus.name, (unsigned long long)d->iova_pgsizes, n,
			 (unsigned long long)ranges[0].start, (unsigned long long)ranges[0].last);
	else
		log_info("%s: IOMMU page sizes 0x%llx, no IOVA ranges reported: assuming 39 bits",
			 d->bus.name, (unsigned long long)d->iova_pgsizes);
	return 0;
}

static void warn_small_pages_once(void)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&warned))
		log_warn("mapping DMA memory that is not in hugepages: it works, but costs one "
			 "IOMMU entry per 4 KiB page; reserve hugepages with 'myrio-setup "
			 "hugepages 512'");
}

static void explain_map_failure(struct myrio_vfio_dev *d, const struct myrio_dma_region *r, int rc)
{
	struct rlimit rl;
	if (rc == -ENOMEM && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		log_err("%s: cannot pin %zu bytes of DMA memory: the locked-memory limit is %llu "
			"bytes; raise it with 'ulimit -l unlimited' (or a memlock line in "
			"/etc/security/limits.conf), or run as root",
			d->bus.name, r->len, (unsigned long long)rl.rlim_cur);
	else
		log_err("%s: VFIO_IOMMU_MAP_DMA of %zu bytes: %s", d->bus.name, r->len,
			strerror(-rc));
}

static int track(struct myrio_vfio_dev *d, struct myrio_dma_region *r)
{
	if (d->n_mapped == d->cap_mapped) {
		unsigned cap = d->cap_mapped ? d->cap_mapped * 2 : 16;
		struct myrio_dma_region **m = realloc(d->mapped, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		d->mapped = m;
		d->cap_mapped = cap;
	}
	d->mapped[d->n_mapped++] = r;
	return 0;
}

static void untrack(struct myrio_vfio_dev *d, const struct myrio_dma_region *r)
{
	for (unsigned i = 0; i < d->n_mapped; i++)
		if (d->mapped[i] == r) {
			d->mapped[i] = d->mapped[--d->n_mapped];
			return;
		}
}

int myrio_vfio_dma_map(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (!r->va || r->len == 0)
		return -EINVAL;
	if (r->bus) {
		log_err("%s: DMA region already mapped on %s", bus->name, r->bus->name);
		return -EBUSY;
	}
	uint64_t min_page = d->iova_pgsizes & -d->iova_pgsizes; /* lowest supported size */
	if (min_page && (((uintptr_t)r->va | r->len) & (min_page - 1))) {
		log_err("%s: DMA region at %p (%zu bytes) is not aligned to the IOMMU page size "
			"(%llu bytes)",
			bus->name, r->va, r->len, (unsigned long long)min_page);
		return -EINVAL;
	}
	if (!r->hugepages)
		warn_small_pages_once();
	/* Align to the region's page so that the IOMMU can use large pages for hugepages. */
	uint64_t align = r->page_size ? r->page_size : 4096, iova;
	if (align & (align - 1))
		align = 4096;
	int rc = myrio_iova_alloc(&d->iova, r->len, align, &iova);
	if (rc < 0) {
		log_err("%s: no IOVA space left for %zu bytes of DMA memory", bus->name, r->len);
		return rc;
	}
	struct vfio_iommu_type1_dma_map m = {
	    .argsz = sizeof(m),
	    .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
	    .vaddr = (uintptr_t)r->va,
	    .iova = iova,
	    .size = r->len,
	};
	rc = track(d, r);
	if (rc < 0) {
		myrio_iova_free(&d->iova, iova);
		return rc;
	}
	if (ioctl(d->container, VFIO_IOMMU_MAP_DMA, &m) != 0) {
		rc = -errno;
		explain_map_failure(d, r, rc);
		untrack(d, r);
		myrio_iova_free(&d->iova, iova);
		return rc;
	}
	r->iova = iova;
	r->bus = bus;
	return 0;
}

void myrio_vfio_dma_unmap(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (r->bus != bus)
		return;
	struct vfio_iommu_type1_dma_unmap u = {
	    .argsz = sizeof(u),
	    .iova = r->iova,
	    .size = r->len,
	};
	if (ioctl(d->container, VFIO_IOMMU_UNMAP_DMA, &u) != 0)
		log_warn("%s: VFIO_IOMMU_UNMAP_DMA at 0x%llx: %s", bus->name,
			 (unsigned long long)r->iova, strerror(errno));
	myrio_iova_free(&d->iova, r->iova);
	untrack(d, r);
	r->bus = NULL;
	r->iova = 0;
}

void myrio_vfio_dma_unmap_all(struct myrio_vfio_dev *d)
{
	if (d->n_mapped)
		log_warn("%s: closing with %u DMA regions still mapped: unmapping them (destroy "
			 "pools and free DMA memory before closing the port)",
			 d->bus.name, d->n_mapped);
	while (d->n_mapped)
		myrio_vfio_dma_unmap(&d->bus, d->mapped[d->n_mapped - 1]);
	free(d->mapped);
	d->mapped = NULL;
	d->cap_mapped = 0;
}
