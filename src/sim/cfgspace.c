/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI configuration space of a model NIC (§1.1, §1.2, §1.7, §1.8): IDs, BARs, capability
 * list (PM, MSI, PCIe, MSI-X, vendor-specific), the writable bits drivers use, and the
 * vendor-specific SRAM window (LOCATE / READ32 / reboot status). */
#include <errno.h>
#include <string.h>

#include "sim/nic.h"
#include "util/log.h"

#define CAP_PM 0x40u
#define CAP_MSI 0x50u
#define CAP_PCIE 0x70u
#define CAP_MSIX 0x90u
#define CAP_VS 0xA0u

#define VS_MODE_READ32 0x03u
#define VS_MODE_LOCATE 0x08u

static void put16(uint8_t *c, unsigned off, uint16_t v)
{
	c[off] = (uint8_t)v;
	c[off + 1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *c, unsigned off, uint32_t v)
{
	put16(c, off, (uint16_t)v);
	put16(c, off + 2, (uint16_t)(v >> 16));
}
static uint32_t get(const uint8_t *c, unsigned off, unsigned size)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)c[off + i] << (8 * i);
	return v;
}

void sim_cfg_power_on(struct sim_nic *nic)
{
	uint8_t *c = nic->cfg;
	memset(c, 0, sizeof(nic->cfg));
	put16(c, 0x00, 0x14C1);		   /* Myricom */
	put16(c, 0x02, 0x0008);		   /* Z8E */
	put16(c, 0x06, 0x0010);		   /* capability list */
	c[0x08] = 1;			   /* revision: Z8ES (board -8B), stable across loads */
	c[0x0B] = 0x02;			   /* class: network / Ethernet */
	put32(c, 0x10, 0xF8000000u | 0xC); /* BAR0: 64-bit prefetchable memory, 16 MiB */
	put32(c, 0x18, 0xF9000000u | 0x4); /* BAR2: MSI-X table, 64-bit */
	put16(c, 0x2C, 0x14C1);
	put16(c, 0x2E, 0x000A); /* 10G-PCIE-8B */
	c[0x34] = CAP_PM;
	c[0x3D] = 1; /* INTA */
	c[CAP_PM] = 0x01;
	c[CAP_PM + 1] = CAP_MSI;
	put16(c, CAP_PM + 2, 0x0003);
	c[CAP_MSI] = 0x05;
	c[CAP_MSI + 1] = CAP_PCIE;
	put16(c, CAP_MSI + 2, 0x0080); /* 64-bit address, one message */
	c[CAP_PCIE] = 0x10;
	c[CAP_PCIE + 1] = CAP_MSIX;
	put16(c, CAP_PCIE + 2, 0x0001);		  /* v1 endpoint: v2 would run into MSI-X */
	put32(c, CAP_PCIE + 4, 0x00000002);	  /* max payload 512 */
	put16(c, CAP_PCIE + 8, 2u << 12);	  /* device control: MRRS 512 at power-on */
	put32(c, CAP_PCIE + 0x0C, (8u << 4) | 1); /* link cap: x8, 2.5 GT/s */
	put16(c, CAP_PCIE + 0x12, (8u << 4) | 1); /* link status: x8, 2.5 GT/s */
	c[CAP_MSIX] = 0x11;
	c[CAP_MSIX + 1] = CAP_VS;
	put16(c, CAP_MSIX + 2, 127); /* table size 128 */
	put32(c, CAP_MSIX + 4, 0x0 | 2);
	put32(c, CAP_MSIX + 8, 0x800 | 2);
	c[CAP_VS] = 0x09;
	c[CAP_VS + 1] = 0;
	c[CAP_VS + 2] = 0x1C;
	nic->vs_mode = nic->vs_addr = nic->vs_data = 0;
	nic->dma.cache_gen = 0;
	for (unsigned q = 0; q < SIM_MAX_SLICES; q++)
		nic->sl[q].intrq_gen = 0;
}

/* The bytes below are read by the model's loop as it runs (DMA, interrupts) and written by
 * another thread: the daemon's server, or the driver's on an in-process model. Relaxed
 * atomic byte loads and stores (plain moves on x86): the loop acts on a bit a little
 * before or after the write, as a device sees a config write land between two of its own
 * accesses. */
static uint8_t cfg_byte(const struct sim_nic *nic, unsigned off)
{
	return __atomic_load_n(&nic->cfg[off], __ATOMIC_RELAXED);
}

bool sim_cfg_msix_enabled(const struct sim_nic *nic)
{
	return cfg_byte(nic, CAP_MSIX + 3) & 0x80;
}

bool sim_cfg_msi_enabled(const struct sim_nic *nic)
{
	return (cfg_byte(nic, CAP_MSI + 2) & 1) || (cfg_byte(nic, CAP_MSIX + 3) & 0x80);
}

bool sim_cfg_bus_master(const struct sim_nic *nic)
{
	return cfg_byte(nic, 0x04) & 0x04;
}

bool sim_cfg_intx_disabled(const struct sim_nic *nic)
{
	return cfg_byte(nic, 0x05) & 0x04;
}

void sim_cfg_enable_msi(struct sim_nic *nic)
{
	__atomic_fetch_or(&nic->cfg[CAP_MSI + 2], 1, __ATOMIC_RELAXED);
}

void sim_nic_set_pcie_width(struct sim_nic *nic, unsigned width)
{
	put16(nic->cfg, CAP_PCIE + 0x12, (uint16_t)((width << 4) | 1));
}

static uint32_t sram_word(const struct sim_nic *nic, uint32_t addr)
{
	if (addr == 0xFFFFFFF0u)
		return nic->reboot_status;
	if (addr > SIM_SRAM_SIZE - 4)
		return 0xFFFFFFFFu;
	addr &= ~3u;
	const uint8_t *p = nic->bar + addr;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int sim_nic_cfg_read(struct sim_nic *nic, unsigned off, unsigned size, uint32_t *val)
{
	if (!(size == 1 || size == 2 || size == 4) || off + size > 256 || (off & (size - 1))) {
		log_err("%s: config read of %u bytes at 0x%x: use aligned 1, 2 or 4 byte reads "
			"inside 256 bytes",
			nic->name, size, off);
		return -EINVAL;
	}
	/* VFIO answers the IDs and the command register from its own copies (vfio-pci
	 * virtualizes them), so through VFIO a removed NIC shows there as it was. */
	bool virtual = nic->removed_vfio && off + size <= 0x06;
	if (atomic_load_explicit(&nic->removed, memory_order_relaxed) && !virtual) {
		*val = size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1; /* no device answers */
		return 0;
	}
	if (off >= CAP_VS + 0x14 && off < CAP_VS + 0x18) { /* data register */
		uint32_t v = 0;
		if (nic->vs_mode == VS_MODE_READ32)
			v = sram_word(nic, nic->vs_addr);
		else if (nic->vs_mode == VS_MODE_LOCATE)
			v = nic->vs_data;
		uint8_t tmp[4];
		put32(tmp, 0, v);
		*val = get(tmp, off - (CAP_VS + 0x14), size);
		return 0;
	}
	*val = get(nic->cfg, off, size);
	return 0;
}

static void write_bytes(struct sim_nic *nic, unsigned off, unsigned size, uint32_t val,
			const uint8_t *mask)
{
	for (unsigned i = 0; i < size; i++) {
		uint8_t m = mask[i];
		uint8_t b = (uint8_t)(val >> (8 * i));
		__atomic_store_n(&nic->cfg[off + i], (uint8_t)((nic->cfg[off + i] & ~m) | (b & m)),
				 __ATOMIC_RELAXED);
	}
}

int sim_nic_cfg_write(struct sim_nic *nic, unsigned off, unsigned size, uint32_t val)
{
	if (!(size == 1 || size == 2 || size == 4) || off + size > 256 || (off & (size - 1))) {
		log_err("%s: config write of %u bytes at 0x%x: use aligned 1, 2 or 4 byte "
			"writes inside 256 bytes",
			nic->name, size, off);
		return -EINVAL;
	}
	if (atomic_load_explicit(&nic->removed, memory_order_relaxed))
		return 0; /* lost, as on a real bus */
	bool master = sim_cfg_bus_master(nic);
	for (unsigned i = 0; i < size; i++) {
		unsigned o = off + i;
		uint8_t b = (uint8_t)(val >> (8 * i));
		uint8_t m = 0;
		if (o == 0x04)
			m = 0x06; /* memory space, bus master */
		else if (o == 0x05)
			m = 0x04; /* INTx disable */
		else if (o == 0x0C || o == 0x0D || o == 0x3C)
			m = 0xFF;
		else if (o >= 0x10 && o < 0x14)
			m = o == 0x10 ? 0x00 : (o == 0x13 ? 0xFF : (o == 0x12 ? 0x00 : 0x00));
		else if (o == CAP_PM + 4)
			m = 0x03;
		else if (o == CAP_MSI + 2)
			m = 0x71; /* enable, multiple message enable */
		else if (o >= CAP_MSI + 4 && o < CAP_MSI + 0x0E)
			m = 0xFF;
		else if (o == CAP_PCIE + 8 || o == CAP_PCIE + 9)
			m = 0xFF; /* device control (MRRS in bits 14:12) */
		else if (o == CAP_PCIE + 0x10)
			m = 0xFF; /* link control */
		else if (o == CAP_MSIX + 3)
			m = 0xC0; /* enable, function mask */
		else if (o >= CAP_VS + 4 && o < CAP_VS + 0x1C)
			m = 0xFF;
		write_bytes(nic, o, 1, b, &m);
	}
	if (master && !sim_cfg_bus_master(nic)) {
		/* no more DMA: drop the fast-path translations, which the loop reads and
		 * writes, with the loop kept off the NIC (a close or a reset: seldom). With
		 * bus mastering off the loop fills none (sim_dma_slow refuses). */
		bool was = atomic_exchange(&nic->halted, true);
		sim_world_sync(nic->world);
		nic->dma.cache_gen = 0;
		for (unsigned q = 0; q < SIM_MAX_SLICES; q++)
			nic->sl[q].intrq_gen = 0;
		atomic_store(&nic->halted, was);
	}
	/* Vendor-specific capability side effects (§1.7). */
	nic->vs_mode = nic->cfg[CAP_VS + 0x10];
	if (off <= CAP_VS + 0x18 && off + size > CAP_VS + 0x18) {
		uint32_t a = get(nic->cfg, CAP_VS + 0x18, 4);
		if (nic->vs_mode == VS_MODE_LOCATE && a == 3) {
			put32(nic->cfg, CAP_VS + 0x18, SIM_STRINGS_OFF);
			nic->vs_data = SIM_STRINGS_LEN;
		}
		nic->vs_addr = get(nic->cfg, CAP_VS + 0x18, 4);
	}
	return 0;
}
