/* SPDX-License-Identifier: BSD-3-Clause */
/* A host that is not a process of ours: a device framework (QEMU) that owns the clock, the
 * DMA path (its IOMMU) and the loop. The model runs only when the host calls it, on the
 * host's thread, at the host's time; interrupts still leave through the NIC's eventfd (MSI)
 * and sim_nic_intx_line (INTx). docs/device-model.md, "Hosted in QEMU". */
#ifndef MYRIO_SIM_HOST_H
#define MYRIO_SIM_HOST_H

#include <stdbool.h>
#include <stdint.h>

struct myrio_sim;
struct sim_nic;

/* The host's DMA: memory for [iova, iova+len) as the device reaches it through the host's
 * IOMMU, for reading (write false) or writing, as one piece that stays valid until the
 * model returns to the host; NULL when any part is not mapped that way or not RAM. Asked for
 * every access the DMA table does not cover: the model keeps no translation across host
 * calls, so an unmap is seen at once. */
struct sim_host_dma {
	uint8_t *(*map)(void *opaque, uint64_t iova, uint32_t len, bool write);
	void *opaque;
};

/* Whether the access named `what` (sim_dma's purpose) only reads host memory: transmit
 * buffers and the dummy RDMA target, which drivers map to-device only (an IOMMU refuses a
 * write there, and logs it). */
bool sim_host_dma_reads(const char *what);

/* The NIC's DMA goes through the host from now on (NULL: back to the DMA table alone). */
void sim_nic_set_host_dma(struct sim_nic *nic, const struct sim_host_dma *dma);

/* A BAR0 store the firmware must see at once: the command mailbox, whose atomic commands
 * the driver waits for only 1 ms (myri10ge-interface.md §3). Other stores can wait for
 * the host's next run. */
bool sim_bar0_store_is_urgent(uint32_t off);

/* Accesses the NIC's DMA could not make (unmapped, refused by the host's IOMMU): the
 * host reports them where its tests can read them. */
uint64_t sim_nic_dma_faults(const struct sim_nic *nic);

/* One iteration of every NIC and cable of a stepped world at the host's clock now_ns
 * (monotonic); returns the work done, 0 when idle. */
unsigned sim_world_run_at(struct myrio_sim *sim, uint64_t now_ns);

#endif
