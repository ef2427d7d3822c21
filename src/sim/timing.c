/* SPDX-License-Identifier: BSD-3-Clause */
/* The NIC timing profiles. Where each figure comes from: docs/device-model.md, "Timing". */
#include <string.h>

#include "sim/timing.h"

/* PCIe Gen1 x8: 8 lanes x 2.5 GT/s, 8b/10b coded = 16 Gb/s each way; a TLP carries at most
 * 128 payload bytes behind about 24 bytes of header, sequence number, LCRC and framing. */
#define GEN1_X8_BPS 16000000000ull
#define TLP_PAYLOAD 128u
#define TLP_OVERHEAD 24u

static const struct sim_timing profiles[] = {
    {.name = "none"},
    {.name = "myri10ge",
     .doorbell_ns = 250,
     .fw_poll_ns = 300,
     .dma_read_ns = 900,
     .mac_phy_tx_ns = 250,
     .mac_phy_rx_ns = 250,
     .rx_dma_ns = 500,
     .irq_ns = 250,
     .pcie_bps = GEN1_X8_BPS * TLP_PAYLOAD / (TLP_PAYLOAD + TLP_OVERHEAD)},
};

const struct sim_timing *sim_timing_find(const char *name)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (name && strcmp(name, profiles[i].name) == 0)
			return &profiles[i];
	return NULL;
}

const struct sim_timing *sim_timing_default(void)
{
	return &profiles[0];
}

uint64_t sim_timing_tx_start_ps(const struct sim_timing *t)
{
	return ((uint64_t)t->doorbell_ns + t->fw_poll_ns + t->dma_read_ns) * 1000;
}

uint64_t sim_timing_pcie_ps(const struct sim_timing *t, uint32_t len)
{
	return t->pcie_bps ? (uint64_t)len * 8 * 1000000000000ull / t->pcie_bps : 0;
}

uint64_t sim_timing_flight_ps(const struct sim_timing *tx, const struct sim_timing *rx,
			      uint32_t len)
{
	return ((uint64_t)tx->mac_phy_tx_ns + rx->mac_phy_rx_ns + rx->rx_dma_ns) * 1000 +
	       sim_timing_pcie_ps(rx, len);
}
