/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's IOMMU: the IOVA ranges the driver registered (sim_nic_dma_map). The device
 * touches nothing else; an unmapped IOVA is logged and counted, never dereferenced (§10).
 *
 * Readers (the model loop) never lock: the table is an immutable sorted array published
 * with a release store. Writers build a new array under a mutex, publish it, wait until
 * the model loop has passed a quiescent point (sim_world_sync) and only then free the old
 * one, so an unmap returns only once the model can no longer touch that memory. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/nic.h"
#include "util/log.h"

int sim_dma_init(struct sim_dma *d)
{
	memset(d, 0, sizeof(*d));
	struct sim_dma_table *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&d->wlock, NULL);
	t->gen = ++d->next_gen;
	atomic_store(&d->table, t);
	return 0;
}

void sim_dma_destroy(struct sim_dma *d)
{
	free(atomic_load(&d->table));
	atomic_store(&d->table, NULL);
	pthread_mutex_destroy(&d->wlock);
}

static void publish(struct sim_nic *nic, struct sim_dma_table *t)
{
	t->gen = ++nic->dma.next_gen;
	struct sim_dma_table *old =
	    atomic_exchange_explicit(&nic->dma.table, t, memory_order_acq_rel);
	sim_world_sync(nic->world);
	free(old);
}

int sim_nic_dma_map(struct sim_nic *nic, uint64_t iova, void *va, size_t len)
{
	if (!nic || !va || len == 0 || iova + len < iova) {
		log_err("model DMA map: bad arguments (iova 0x%" PRIx64 ", %zu bytes)", iova, len);
		return -EINVAL;
	}
	pthread_mutex_lock(&nic->dma.wlock);
	struct sim_dma_table *cur = atomic_load(&nic->dma.table);
	unsigned pos = 0;
	for (unsigned i = 0; i < cur->n; i++) {
		const struct sim_dma_ent *e = &cur->e[i];
		if (iova < e->end && e->iova < iova + len) {
			pthread_mutex_unlock(&nic->dma.wlock);
			log_err("%s: DMA map of IOVA 0x%" PRIx64 "+%zu overlaps a registered range "
				"0x%" PRIx64 "..0x%" PRIx64 "; unmap it first",
				nic->name, iova, len, e->iova, e->end);
			return -EEXIST;
		}
		if (e->iova < iova)
			pos = i + 1;
	}
	struct sim_dma_table *t = malloc(sizeof(*t) + (cur->n + 1) * sizeof(t->e[0]));
	if (!t) {
		pthread_mutex_unlock(&nic->dma.wlock);
		return -ENOMEM;
	}
	t->n = cur->n + 1;
	memcpy(t->e, cur->e, pos * sizeof(t->e[0]));
	t->e[pos] = (struct sim_dma_ent){.iova = iova, .end = iova + len, .va = va};
	memcpy(t->e + pos + 1, cur->e + pos, (cur->n - pos) * sizeof(t->e[0]));
	publish(nic, t);
	pthread_mutex_unlock(&nic->dma.wlock);
	return 0;
}

int sim_nic_dma_unmap(struct sim_nic *nic, uint64_t iova, size_t len)
{
	pthread_mutex_lock(&nic->dma.wlock);
	struct sim_dma_table *cur = atomic_load(&nic->dma.table);
	unsigned i;
	for (i = 0; i < cur->n; i++)
		if (cur->e[i].iova == iova && cur->e[i].end == iova + len)
			break;
	if (i == cur->n) {
		pthread_mutex_unlock(&nic->dma.wlock);
		log_err("%s: DMA unmap of IOVA 0x%" PRIx64 "+%zu: no such registered range",
			nic->name, iova, len);
		return -ENOENT;
	}
	struct sim_dma_table *t = malloc(sizeof(*t) + cur->n * sizeof(t->e[0]));
	if (!t) {
		pthread_mutex_unlock(&nic->dma.wlock);
		return -ENOMEM;
	}
	t->n = cur->n - 1;
	memcpy(t->e, cur->e, i * sizeof(t->e[0]));
	memcpy(t->e + i, cur->e + i + 1, (cur->n - i - 1) * sizeof(t->e[0]));
	publish(nic, t);
	pthread_mutex_unlock(&nic->dma.wlock);
	return 0;
}

void sim_dma_forget_all(struct sim_nic *nic)
{
	pthread_mutex_lock(&nic->dma.wlock);
	struct sim_dma_table *t = calloc(1, sizeof(*t));
	if (t)
		publish(nic, t);
	pthread_mutex_unlock(&nic->dma.wlock);
}

uint8_t *sim_dma_slow(struct sim_nic *nic, uint64_t iova, uint32_t len, const char *what)
{
	const struct sim_dma_table *t = atomic_load_explicit(&nic->dma.table, memory_order_acquire);
	unsigned lo = 0, hi = t->n;
	while (lo < hi) { /* first entry with end > iova */
		unsigned mid = (lo + hi) / 2;
		if (t->e[mid].end <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (__builtin_expect(!sim_cfg_bus_master(nic), 0)) {
		nic->st.dma_faults++;
		if (sim_nic_ratelimit(nic, SIM_DIAG_DMA))
			log_err("%s: DMA (%s) with bus mastering disabled in the PCI command "
				"register: set bit 2 first (§1.8); access refused",
				nic->name, what);
		return NULL;
	}
	if (lo < t->n && t->e[lo].iova <= iova && iova + len <= t->e[lo].end &&
	    iova + len >= iova) {
		nic->dma.cache_gen = t->gen;
		nic->dma.cache = t->e[lo];
		return t->e[lo].va + (iova - t->e[lo].iova);
	}
	if (nic->host_dma.map && iova + len >= iova) { /* host.h: never cached */
		uint8_t *p =
		    nic->host_dma.map(nic->host_dma.opaque, iova, len, !sim_host_dma_reads(what));
		if (p)
			return p;
	}
	nic->st.dma_faults++;
	if (sim_nic_ratelimit(nic, SIM_DIAG_DMA))
		log_err("%s: DMA to unmapped IOVA 0x%" PRIx64 "+%u (%s): the device may only "
			"touch memory the driver mapped for it; access refused",
			nic->name, iova, len, what);
	return NULL;
}

int sim_dma_write(struct sim_nic *nic, uint64_t iova, const void *src, uint32_t len,
		  const char *what)
{
	uint8_t *p = sim_dma(nic, iova, len, what);
	if (!p)
		return -EFAULT;
	memcpy(p, src, len);
	return 0;
}
