/* SPDX-License-Identifier: BSD-3-Clause */
/* Test-only descriptor handling for an 82574 over a struct myrio_bus: one tx and one rx
 * ring of the test's own buffers. */
#include "e1000e.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Layout of the one DMA region: rings first, then buffers. */
#define OFF_TX_RING 0x0000
#define OFF_RX_RING 0x1000
#define OFF_TX_BUF 0x10000
#define OFF_RX_BUF (OFF_TX_BUF + E1000E_RING * E1000E_BUF)
#define MEM_LEN (OFF_RX_BUF + E1000E_RING * E1000E_BUF)

static void barrier(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void setup_rings(struct e1000e *n)
{
	uint64_t tx_iova = n->mem.iova + OFF_TX_RING, rx_iova = n->mem.iova + OFF_RX_RING;
	n->tx = (volatile struct e1000e_tx_desc *)((uint8_t *)n->mem.va + OFF_TX_RING);
	n->rx = (volatile struct e1000e_rx_desc *)((uint8_t *)n->mem.va + OFF_RX_RING);
	n->tx_buf = (uint8_t *)n->mem.va + OFF_TX_BUF;
	n->rx_buf = (uint8_t *)n->mem.va + OFF_RX_BUF;
	for (unsigned i = 0; i < E1000E_RING; i++) {
		n->rx[i].addr = n->mem.iova + OFF_RX_BUF + (uint64_t)i * E1000E_BUF;
		n->rx[i].status = 0;
	}
	e1000e_hw_start(&n->hw, tx_iova, rx_iova, E1000E_RING, 0);
}

int e1000e_open(struct e1000e *n, struct myrio_bus *bus)
{
	memset(n, 0, sizeof(*n));
	n->bus = bus;
	n->mem.fd = -1;
	int rc = e1000e_hw_reset(&n->hw, bus);
	if (rc < 0)
		return rc;
	rc = myrio_dma_alloc(&n->mem, MEM_LEN);
	if (rc < 0)
		return rc;
	rc = bus->ops->dma_map(bus, &n->mem);
	if (rc < 0) {
		myrio_dma_free(&n->mem);
		return rc;
	}
	setup_rings(n);
	return e1000e_hw_wait_link(&n->hw);
}

void e1000e_close(struct e1000e *n)
{
	if (!n->bus)
		return;
	e1000e_hw_stop(&n->hw);
	if (n->mem.bus)
		n->bus->ops->dma_unmap(n->bus, &n->mem);
	myrio_dma_free(&n->mem);
	n->bus = NULL;
}

void e1000e_enable_rx_irq(struct e1000e *n)
{
	e1000e_wr(&n->hw, E1000E_IVAR, E1000E_IVAR_RXQ0_VEC0);
	e1000e_wr(&n->hw, E1000E_IMS, E1000E_ICR_RXT0 | E1000E_ICR_RXQ0);
}

static int post_tx(struct e1000e *n, uint64_t iova, uint16_t len)
{
	unsigned idx = n->tx_tail;
	if ((idx + 1) % E1000E_RING == n->tx_clean)
		return -ENOBUFS;
	volatile struct e1000e_tx_desc *d = &n->tx[idx];
	d->addr = iova;
	d->length = len;
	d->cso = 0;
	d->css = 0;
	d->special = 0;
	d->status = 0;
	d->cmd = E1000E_TXD_EOP | E1000E_TXD_IFCS | E1000E_TXD_RS;
	barrier();
	n->tx_tail = (idx + 1) % E1000E_RING;
	e1000e_wr(&n->hw, E1000E_TDT, n->tx_tail);
	return (int)idx;
}

int e1000e_send(struct e1000e *n, const void *frame, uint16_t len)
{
	if (len > E1000E_BUF)
		return -EMSGSIZE;
	unsigned idx = n->tx_tail;
	memcpy(n->tx_buf + (size_t)idx * E1000E_BUF, frame, len);
	return post_tx(n, n->mem.iova + OFF_TX_BUF + (uint64_t)idx * E1000E_BUF, len);
}

int e1000e_send_iova(struct e1000e *n, uint64_t iova, uint16_t len)
{
	return post_tx(n, iova, len);
}

int e1000e_tx_wait(struct e1000e *n, int idx, unsigned timeout_ms)
{
	for (unsigned t = 0; t <= timeout_ms; t++) {
		if (n->tx[idx].status & E1000E_DESC_DD) {
			n->tx_clean = ((unsigned)idx + 1) % E1000E_RING;
			return 0;
		}
		n->bus->ops->delay_us(n->bus, 1000);
	}
	return -ETIMEDOUT;
}

int e1000e_recv(struct e1000e *n, void *buf, size_t len, unsigned timeout_ms)
{
	volatile struct e1000e_rx_desc *d = &n->rx[n->rx_next];
	for (unsigned t = 0; !(d->status & E1000E_DESC_DD); t++) {
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		n->bus->ops->delay_us(n->bus, 1000);
	}
	barrier();
	int rc;
	uint16_t flen = d->length;
	if (!(d->status & E1000E_RXD_EOP) || d->errors || flen > E1000E_BUF)
		rc = -EBADMSG; /* the device's word is checked like any other input */
	else if (flen > len)
		rc = -EMSGSIZE;
	else {
		memcpy(buf, n->rx_buf + (size_t)n->rx_next * E1000E_BUF, flen);
		rc = flen;
	}
	d->status = 0;
	barrier();
	e1000e_wr(&n->hw, E1000E_RDT, n->rx_next); /* give the buffer back */
	n->rx_next = (n->rx_next + 1) % E1000E_RING;
	return rc;
}

unsigned e1000e_rx_point_next(struct e1000e *n, uint64_t iova)
{
	n->rx[n->rx_next].addr = iova;
	barrier();
	return n->rx_next;
}

void e1000e_rx_restore(struct e1000e *n, unsigned idx)
{
	n->rx[idx % E1000E_RING].addr =
	    n->mem.iova + OFF_RX_BUF + (uint64_t)(idx % E1000E_RING) * E1000E_BUF;
	barrier();
}
