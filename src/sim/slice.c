/* SPDX-License-Identifier: BSD-3-Clause */
/* Slices (§7.1): where each slice's rings are, its state after CMD_RESET, and the
 * eventfds behind its MSI-X vector. Slice 0 keeps the single-slice firmware's offsets;
 * slice s > 0 gets a block of its own above the doorbell windows (the offsets are the
 * firmware's choice, handed out by GET_*_OFFSET). */
#include <string.h>
#include <unistd.h>

#include "sim/nic.h"

uint32_t sim_slice_rings(const struct sim_nic *nic, unsigned s)
{
	if (s == 0)
		return nic->rings_at + SIM_SEND_RING_OFF;
	return nic->rings_at + SIM_SLICE_RINGS_OFF + (s - 1) * SIM_SLICE_STRIDE;
}

void sim_slices_reset(struct sim_nic *nic)
{
	uint32_t small = SIM_SMALL_RING_OFF - SIM_SEND_RING_OFF;
	uint32_t big = SIM_BIG_RING_OFF - SIM_SEND_RING_OFF;
	for (unsigned s = 0; s < SIM_MAX_SLICES; s++) {
		struct sim_slice *q = &nic->sl[s];
		uint32_t base = sim_slice_rings(nic, s);
		q->tx_off = base;
		q->small = (struct sim_rxring){base + small, nic->rx_entries - 1, 0};
		q->big = (struct sim_rxring){base + big, nic->rx_entries - 1, 0};
		q->tx_cons = q->send_done = 0;
		q->tx_active = false;
		q->tx_hung = false;
		q->intrq_dma_set = false;
		q->intrq_iova = 0;
		q->intrq_idx = 0;
		q->intrq_va = NULL;
		q->stats_set = false;
		q->stats_iova = 0;
		q->stats_host_size = 64;
	}
}

/* Slice s's rings as CMD_RESET leaves slice 0's: rx slots invalid, tx flags 0. */
void sim_slice_clear_rings(struct sim_nic *nic, unsigned s)
{
	const struct sim_slice *q = &nic->sl[s];
	memset(nic->bar + q->tx_off, 0, SIM_MAX_RING * 16);
	memset(nic->bar + q->small.off, 0xFF, SIM_MAX_RING * 8);
	memset(nic->bar + q->big.off, 0xFF, SIM_MAX_RING * 8);
}

/* The eventfds stay open across resets (the host holds them, as it holds MSI-X vectors);
 * a new attach gets new ones. */
void sim_slices_close_vectors(struct sim_nic *nic)
{
	for (unsigned s = 1; s < SIM_MAX_SLICES; s++) {
		if (nic->sl[s].irq_fd >= 0)
			close(nic->sl[s].irq_fd);
		nic->sl[s].irq_fd = -1;
	}
}
