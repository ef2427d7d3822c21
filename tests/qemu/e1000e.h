/* A minimal, test-only driver for the Intel 82574 (e1000e) as QEMU emulates it: enough to
 * move frames through one transmit and one receive ring with legacy descriptors. It exists
 * to prove libmyrio's PCI/VFIO bus on real VFIO; it talks to the device only through the
 * struct myrio_bus that src/pci/ returns, exactly like the myri10ge driver does. */
#ifndef MYRIO_TEST_E1000E_H
#define MYRIO_TEST_E1000E_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus/bus.h"
#include "mem/dma.h"

#define E1000E_RING 32
#define E1000E_BUF 2048

struct e1000e_tx_desc {
	uint64_t addr;
	uint16_t length;
	uint8_t cso;
	uint8_t cmd;
	uint8_t status;
	uint8_t css;
	uint16_t special;
};

struct e1000e_rx_desc {
	uint64_t addr;
	uint16_t length;
	uint16_t csum;
	uint8_t status;
	uint8_t errors;
	uint16_t special;
};

struct e1000e {
	struct myrio_bus *bus;
	struct myrio_dma_region mem; /* rings and buffers, one region */
	volatile struct e1000e_tx_desc *tx;
	volatile struct e1000e_rx_desc *rx;
	uint8_t *tx_buf, *rx_buf;
	unsigned tx_tail, tx_clean, rx_next;
	uint8_t mac[6];
	bool mac_from_eeprom_matches;
};

static inline uint32_t e1000e_rd(const struct e1000e *n, uint32_t off)
{
	return *(volatile uint32_t *)(n->bus->bar0 + off);
}

static inline void e1000e_wr(const struct e1000e *n, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(n->bus->bar0 + off) = v;
}

/* Register offsets (82574 datasheet, chapter 10) */
enum {
	E1000E_CTRL = 0x0000,
	E1000E_STATUS = 0x0008,
	E1000E_EERD = 0x0014,
	E1000E_ICR = 0x00c0,
	E1000E_IMS = 0x00d0,
	E1000E_IMC = 0x00d8,
	E1000E_IVAR = 0x00e4,
	E1000E_RCTL = 0x0100,
	E1000E_TCTL = 0x0400,
	E1000E_RDBAL = 0x2800,
	E1000E_RDBAH = 0x2804,
	E1000E_RDLEN = 0x2808,
	E1000E_RDH = 0x2810,
	E1000E_RDT = 0x2818,
	E1000E_TDBAL = 0x3800,
	E1000E_TDBAH = 0x3804,
	E1000E_TDLEN = 0x3808,
	E1000E_TDH = 0x3810,
	E1000E_TDT = 0x3818,
	E1000E_GPRC = 0x4074,
	E1000E_GPTC = 0x4080,
	E1000E_RAL0 = 0x5400,
	E1000E_RAH0 = 0x5404,
};

/* Resets the function, reads the MAC, maps the rings (bus->ops->dma_map), enables both
 * directions and waits for link. */
int e1000e_open(struct e1000e *n, struct myrio_bus *bus);
void e1000e_close(struct e1000e *n);
/* Routes receive interrupts to MSI-X vector 0 / MSI, the one the bus's irq_fd reports. */
void e1000e_enable_rx_irq(struct e1000e *n);
/* Queues one frame from the driver's own buffer; returns the descriptor index used. */
int e1000e_send(struct e1000e *n, const void *frame, uint16_t len);
/* Queues a descriptor whose buffer is at an arbitrary IOVA (the IOMMU negative test). */
int e1000e_send_iova(struct e1000e *n, uint64_t iova, uint16_t len);
/* Waits up to timeout_ms for the descriptor to complete; 0 or -ETIMEDOUT. */
int e1000e_tx_wait(struct e1000e *n, int idx, unsigned timeout_ms);
/* Points the next receive descriptor's buffer at an arbitrary IOVA (the IOMMU negative
 * test); returns its index. e1000e_rx_restore gives it its own buffer back. */
unsigned e1000e_rx_point_next(struct e1000e *n, uint64_t iova);
void e1000e_rx_restore(struct e1000e *n, unsigned idx);
/* Waits up to timeout_ms for a frame; copies it into buf; returns its length or -errno. */
int e1000e_recv(struct e1000e *n, void *buf, size_t len, unsigned timeout_ms);

#endif
