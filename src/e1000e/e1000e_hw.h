/* SPDX-License-Identifier: BSD-3-Clause */
/* Bring-up of an 82574 on a struct myrio_bus: reset, MAC address, rings, link. Shared by the
 * port back-end (e1000e_port.c) and the VFIO test in tests/qemu, which drives descriptors
 * by hand. */
#ifndef MYRIO_E1000E_HW_H
#define MYRIO_E1000E_HW_H

#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "e1000e/e1000e_regs.h"

struct e1000e_hw {
	struct myrio_bus *bus;
	uint8_t mac[6];
	bool mac_from_eeprom_matches; /* receive-address 0 held the EEPROM's MAC at reset */
};

static inline uint32_t e1000e_rd(const struct e1000e_hw *hw, uint32_t off)
{
	return *(volatile uint32_t *)(hw->bus->bar0 + off);
}

static inline void e1000e_wr(const struct e1000e_hw *hw, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(hw->bus->bar0 + off) = v;
}

/* Resets the function with interrupts masked and reads (or programs) its MAC address. */
int e1000e_hw_reset(struct e1000e_hw *hw, struct myrio_bus *bus);
/* Points the device at rings of n descriptors each and enables both directions; the
 * receive ring's descriptors must hold buffers already. rctl_extra: e.g. promiscuous bits. */
void e1000e_hw_start(struct e1000e_hw *hw, uint64_t tx_ring_iova, uint64_t rx_ring_iova, unsigned n,
		     uint32_t rctl_extra);
/* Waits up to 5 s for link; 0 or -ENETDOWN (logged). */
int e1000e_hw_wait_link(struct e1000e_hw *hw);
/* Stops both directions and masks interrupts. */
void e1000e_hw_stop(struct e1000e_hw *hw);

#endif
