/* SPDX-License-Identifier: BSD-3-Clause */
/* The in-process model's bus (src/bus/bus.h): BAR0 is the NIC's shared memory, DMA
 * mapping registers the region with the model's IOMMU at an IOVA from a simple allocator,
 * delay_us sleeps (threaded model) or runs the world for that long (stepped model). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus/bus.h"
#include "mem/dma.h"
#include "sim/nic.h"
#include "util/log.h"
#include "util/pci_cap.h"

#define IOVA_BASE 0x100000000ull /* above 4 GiB: exercises the high address words */

struct sim_bus {
	struct myrio_bus bus;
	struct myrio_sim *world;
	struct sim_nic *nic;
	uint64_t next_iova;
	/* mapped regions, so that close can detach them: no region points at a freed bus */
	struct myrio_dma_region **regions;
	unsigned n_regions, cap_regions;
};

static struct sim_bus *to_sb(struct myrio_bus *b)
{
	return (struct sim_bus *)b;
}

static int sb_dma_map(struct myrio_bus *b, struct myrio_dma_region *r)
{
	struct sim_bus *sb = to_sb(b);
	size_t align = r->page_size ? r->page_size : 4096;
	uint64_t iova = (sb->next_iova + align - 1) / align * align;
	if (sb->n_regions == sb->cap_regions) {
		unsigned cap = sb->cap_regions ? 2 * sb->cap_regions : 16;
		void *p = realloc(sb->regions, cap * sizeof(*sb->regions));
		if (!p)
			return -ENOMEM;
		sb->regions = p;
		sb->cap_regions = cap;
	}
	int rc = sim_nic_dma_map(sb->nic, iova, r->va, r->len);
	if (rc < 0)
		return rc;
	sb->regions[sb->n_regions++] = r;
	/* a guard gap after every region: an overrun faults instead of hitting a neighbour */
	sb->next_iova = iova + r->len + align;
	r->iova = iova;
	r->bus = b;
	return 0;
}

static void sb_dma_unmap(struct myrio_bus *b, struct myrio_dma_region *r)
{
	struct sim_bus *sb = to_sb(b);
	if (r->bus != b)
		return;
	sim_nic_dma_unmap(sb->nic, r->iova, r->len);
	r->bus = NULL;
	for (unsigned i = 0; i < sb->n_regions; i++)
		if (sb->regions[i] == r) {
			sb->regions[i] = sb->regions[--sb->n_regions];
			break;
		}
}

static void sb_delay_us(struct myrio_bus *b, unsigned us)
{
	struct sim_bus *sb = to_sb(b);
	if (sim_world_is_stepped(sb->world)) {
		myrio_sim_step(sb->world, us ? us : 1);
		return;
	}
	myrio_bus_posted(b); /* a command or a handoff the model should see */
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

/* A stepped model's time is virtual; a threaded one runs in the host's time. */
uint64_t myrio_sim_now_ns(struct myrio_sim *sim)
{
	return sim_world_is_stepped(sim) ? sim_world_now(sim) : myrio_host_now_ns();
}

static uint64_t sb_now_ns(struct myrio_bus *b)
{
	return myrio_sim_now_ns(to_sb(b)->world);
}

static void sb_wake(struct myrio_bus *b)
{
	sim_world_wake(to_sb(b)->world);
}

static int sb_cfg_read(struct myrio_bus *b, unsigned off, unsigned size, uint32_t *val)
{
	return sim_nic_cfg_read(to_sb(b)->nic, off, size, val);
}

static int sb_cfg_write(struct myrio_bus *b, unsigned off, unsigned size, uint32_t val)
{
	return sim_nic_cfg_write(to_sb(b)->nic, off, size, val);
}

static int sb_irq_fd(struct myrio_bus *b)
{
	struct sim_nic *nic = to_sb(b)->nic;
	sim_cfg_enable_msi(nic);
	return sim_nic_irq_fd(nic);
}

/* MSI as the host asks; nothing else is host-side state in the model. */
static int sb_irq_setup(struct myrio_bus *b, bool msi)
{
	struct sim_nic *nic = to_sb(b)->nic;
	if (msi)
		sim_cfg_enable_msi(nic);
	return msi ? sim_nic_irq_fd(nic) : 0;
}

/* MSI-X on (MSI off) in config space, as a host's MSI-X setup leaves it; the model's
 * eventfd of each vector. */
static int sb_irq_vectors(struct myrio_bus *b, unsigned n, int *fds)
{
	struct sim_nic *nic = to_sb(b)->nic;
	int rc = myrio_bus_msix_enable(b);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		fds[i] = sim_nic_vector_fd(nic, i);
		if (fds[i] < 0)
			return fds[i];
	}
	return 0;
}

static int sb_reset(struct myrio_bus *b)
{
	sim_nic_flr(to_sb(b)->nic);
	return 0;
}

static void sb_close(struct myrio_bus *b)
{
	struct sim_bus *sb = to_sb(b);
	sim_nic_detach(sb->nic); /* forgets every registration, like closing the container */
	for (unsigned i = 0; i < sb->n_regions; i++)
		sb->regions[i]->bus = NULL;
	free(sb->regions);
	free(sb);
}

static const struct myrio_bus_ops sim_bus_ops = {
    .dma_map = sb_dma_map,
    .dma_unmap = sb_dma_unmap,
    .delay_us = sb_delay_us,
    .cfg_read = sb_cfg_read,
    .cfg_write = sb_cfg_write,
    .irq_fd = sb_irq_fd,
    .irq_setup = sb_irq_setup,
    .irq_vectors = sb_irq_vectors,
    .now_ns = sb_now_ns,
    .reset = sb_reset,
    .wake = sb_wake,
    .close = sb_close,
};

int myrio_sim_bus_open(struct myrio_sim *sim, const char *nic_name, struct myrio_bus **out)
{
	*out = NULL;
	struct sim_nic *nic = sim_nic_find(sim, nic_name);
	if (!nic) {
		log_err("sim:%s: the model has no NIC of that name (it has sim0..sim%u)", nic_name,
			sim_world_nic_count(sim) ? sim_world_nic_count(sim) - 1 : 0);
		return -ENODEV;
	}
	struct sim_bus *sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	int rc = sim_nic_attach(nic);
	if (rc < 0) {
		free(sb);
		return rc;
	}
	sb->bus.ops = &sim_bus_ops;
	sb->bus.bar0 = sim_nic_bar0(nic);
	sb->bus.bar0_len = sim_nic_bar0_len(nic);
	sb->bus.sleeping = sim_world_sleeping(sim); /* NULL when stepped */
	snprintf(sb->bus.kind, sizeof(sb->bus.kind), "sim");
	snprintf(sb->bus.name, sizeof(sb->bus.name), "%s", nic_name);
	sb->world = sim;
	sb->nic = nic;
	sb->next_iova = IOVA_BASE;
	*out = &sb->bus;
	return 0;
}
