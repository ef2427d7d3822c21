/* SPDX-License-Identifier: BSD-3-Clause */
/* A NIC's own timing (docs/device-model.md, "Timing"): what a real board adds to the time a
 * frame takes beyond its bits on the wire, and the PCIe bandwidth its DMA has. "none" adds
 * nothing (a frame arrives when its last bit leaves, DMA is free); "myri10ge" is a Myri-10G
 * on PCIe Gen1 x8. Chosen per NIC (myrio_sim_conf.timing, myrio-simd's timing=). */
#ifndef MYRIO_SIM_TIMING_H
#define MYRIO_SIM_TIMING_H

#include <stdint.h>

struct sim_timing {
	const char *name;
	/* send: from the host's doorbell (its PIO store of the descriptor into SRAM) to the
	 * frame's first bit on the wire, when the send ring was idle */
	uint32_t doorbell_ns; /* the posted store crosses PCIe into the NIC's SRAM */
	uint32_t fw_poll_ns;  /* the firmware's send loop notices the descriptor */
	uint32_t dma_read_ns; /* a DMA read round trip: the payload's first bytes */
	/* wire: the MAC and PHY of each end, on top of serialisation */
	uint32_t mac_phy_tx_ns, mac_phy_rx_ns;
	/* receive: payload written and the completion entry after it (posted writes) */
	uint32_t rx_dma_ns;
	uint32_t irq_ns;   /* the MSI write reaches the host, after any coalescing delay */
	uint64_t pcie_bps; /* payload bytes each way over PCIe per second x 8; 0 = no cap */
};

/* The profile called name, or NULL. */
const struct sim_timing *sim_timing_find(const char *name);
/* The profile of NICs nobody chose one for ("none"). */
const struct sim_timing *sim_timing_default(void);

/* ps from a doorbell on an idle send ring until the frame can start on the wire. */
uint64_t sim_timing_tx_start_ps(const struct sim_timing *t);
/* ps len bytes of payload take over the NIC's PCIe link (0 without a cap). */
uint64_t sim_timing_pcie_ps(const struct sim_timing *t, uint32_t len);
/* ps from a frame's last bit leaving the sender (profile tx) until its completion entry is
 * in the receiver's (profile rx) host memory. */
uint64_t sim_timing_flight_ps(const struct sim_timing *tx, const struct sim_timing *rx,
			      uint32_t len);

#endif
