/* SPDX-License-Identifier: BSD-3-Clause */
/* Descriptors by hand on an Intel 82574 (e1000e) as QEMU emulates it, on top of the port
 * back-end's bring-up (src/e1000e/e1000e_hw.h): frames copied through the test's own
 * buffers, and descriptors pointed at arbitrary IOVAs, which the IOMMU tests need and the
 * port API rightly does not offer. It talks to the device only through the struct
 * myrio_bus that src/pci/ returns. */
#ifndef MYRIO_TEST_E1000E_H
#define MYRIO_TEST_E1000E_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus/bus.h"
#include "e1000e/e1000e_hw.h"
#include "mem/dma.h"

#define E1000E_RING 32
#define E1000E_BUF E1000E_RX_BUF

struct e1000e {
	struct e1000e_hw hw; /* bring-up shared with the port back-end (src/e1000e/) */
	struct myrio_bus *bus;
	struct myrio_dma_region mem; /* rings and buffers, one region */
	volatile struct e1000e_tx_desc *tx;
	volatile struct e1000e_rx_desc *rx;
	uint8_t *tx_buf, *rx_buf;
	unsigned tx_tail, tx_clean, rx_next;
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
