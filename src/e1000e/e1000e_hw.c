/* SPDX-License-Identifier: BSD-3-Clause */
/* 82574 bring-up (its datasheet §4.6): reset, MAC from the EEPROM, rings, link. */
#include "e1000e/e1000e_hw.h"

#include <errno.h>

#include "util/log.h"

static int eeprom_word(struct e1000e_hw *hw, unsigned addr, uint16_t *w)
{
	e1000e_wr(hw, E1000E_EERD, (addr << 2) | E1000E_EERD_START);
	for (int i = 0; i < 1000; i++) {
		uint32_t v = e1000e_rd(hw, E1000E_EERD);
		if (v & E1000E_EERD_DONE) {
			*w = (uint16_t)(v >> 16);
			return 0;
		}
		hw->bus->ops->delay_us(hw->bus, 10);
	}
	return -ETIMEDOUT;
}

static int read_mac(struct e1000e_hw *hw)
{
	uint32_t ral = e1000e_rd(hw, E1000E_RAL0), rah = e1000e_rd(hw, E1000E_RAH0);
	uint8_t ee[6];
	for (unsigned i = 0; i < 3; i++) {
		uint16_t w;
		if (eeprom_word(hw, i, &w) < 0) {
			log_err("%s: EEPROM read timed out", hw->bus->name);
			return -ETIMEDOUT;
		}
		ee[2 * i] = (uint8_t)w;
		ee[2 * i + 1] = (uint8_t)(w >> 8);
	}
	for (unsigned i = 0; i < 4; i++)
		hw->mac[i] = (uint8_t)(ral >> (8 * i));
	hw->mac[4] = (uint8_t)rah;
	hw->mac[5] = (uint8_t)(rah >> 8);
	hw->mac_from_eeprom_matches = true;
	for (unsigned i = 0; i < 6; i++)
		hw->mac_from_eeprom_matches &= ee[i] == hw->mac[i];
	if (!(rah & E1000E_RAH_AV) || !hw->mac_from_eeprom_matches) {
		/* Receive-address 0 not loaded: take the EEPROM's and program it. */
		for (unsigned i = 0; i < 6; i++)
			hw->mac[i] = ee[i];
		e1000e_wr(hw, E1000E_RAL0,
			  ee[0] | ee[1] << 8 | ee[2] << 16 | (uint32_t)ee[3] << 24);
		e1000e_wr(hw, E1000E_RAH0, ee[4] | ee[5] << 8 | E1000E_RAH_AV);
	}
	return 0;
}

int e1000e_hw_reset(struct e1000e_hw *hw, struct myrio_bus *bus)
{
	hw->bus = bus;
	e1000e_wr(hw, E1000E_IMC, ~0u);
	e1000e_wr(hw, E1000E_CTRL, e1000e_rd(hw, E1000E_CTRL) | E1000E_CTRL_RST);
	bus->ops->delay_us(bus, 10000);
	for (int i = 0; i < 100 && (e1000e_rd(hw, E1000E_CTRL) & E1000E_CTRL_RST); i++)
		bus->ops->delay_us(bus, 1000);
	e1000e_wr(hw, E1000E_IMC, ~0u);
	(void)e1000e_rd(hw, E1000E_ICR);
	return read_mac(hw);
}

void e1000e_hw_start(struct e1000e_hw *hw, uint64_t tx_ring_iova, uint64_t rx_ring_iova, unsigned n,
		     uint32_t rctl_extra)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* descriptors before the device sees them */
	e1000e_wr(hw, E1000E_CTRL, e1000e_rd(hw, E1000E_CTRL) | E1000E_CTRL_SLU);
	e1000e_wr(hw, E1000E_TDBAL, (uint32_t)tx_ring_iova);
	e1000e_wr(hw, E1000E_TDBAH, (uint32_t)(tx_ring_iova >> 32));
	e1000e_wr(hw, E1000E_TDLEN, n * (uint32_t)sizeof(struct e1000e_tx_desc));
	e1000e_wr(hw, E1000E_TDH, 0);
	e1000e_wr(hw, E1000E_TDT, 0);
	e1000e_wr(hw, E1000E_RDBAL, (uint32_t)rx_ring_iova);
	e1000e_wr(hw, E1000E_RDBAH, (uint32_t)(rx_ring_iova >> 32));
	e1000e_wr(hw, E1000E_RDLEN, n * (uint32_t)sizeof(struct e1000e_rx_desc));
	e1000e_wr(hw, E1000E_RDH, 0);
	e1000e_wr(hw, E1000E_RDT, n - 1);
	e1000e_wr(hw, E1000E_TCTL,
		  E1000E_TCTL_EN | E1000E_TCTL_PSP | E1000E_TCTL_CT | E1000E_TCTL_COLD);
	e1000e_wr(hw, E1000E_RCTL,
		  E1000E_RCTL_EN | E1000E_RCTL_BAM | E1000E_RCTL_SECRC | rctl_extra);
}

int e1000e_hw_wait_link(struct e1000e_hw *hw)
{
	for (int i = 0; i < 500; i++) {
		if (e1000e_rd(hw, E1000E_STATUS) & E1000E_STATUS_LU)
			return 0;
		hw->bus->ops->delay_us(hw->bus, 10000);
	}
	log_err("%s: no link after 5 s (STATUS 0x%08x)", hw->bus->name,
		e1000e_rd(hw, E1000E_STATUS));
	return -ENETDOWN;
}

void e1000e_hw_stop(struct e1000e_hw *hw)
{
	e1000e_wr(hw, E1000E_IMC, ~0u);
	e1000e_wr(hw, E1000E_RCTL, 0);
	e1000e_wr(hw, E1000E_TCTL, 0);
}
