/* Test-only 82574 driver over a struct myrio_bus: reset, MAC, one tx and one rx ring. */
#include "e1000e.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CTRL_SLU (1u << 6)
#define CTRL_RST (1u << 26)
#define STATUS_LU (1u << 1)
#define EERD_START 1u
#define EERD_DONE (1u << 1)
#define RCTL_EN (1u << 1)
#define RCTL_BAM (1u << 15)
#define RCTL_SECRC (1u << 26)
#define TCTL_EN (1u << 1)
#define TCTL_PSP (1u << 3)
#define TCTL_CT (0x0fu << 4)
#define TCTL_COLD (0x3fu << 12)
#define RAH_AV (1u << 31)
#define TXD_EOP 0x01
#define TXD_IFCS 0x02
#define TXD_RS 0x08
#define DESC_DD 0x01
#define RXD_EOP 0x02
#define ICR_RXT0 (1u << 7)
#define ICR_RXQ0 (1u << 20)
#define IVAR_RXQ0_VEC0 0x8u /* valid bit, vector 0 */

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

static int eeprom_word(struct e1000e *n, unsigned addr, uint16_t *w)
{
	e1000e_wr(n, E1000E_EERD, (addr << 2) | EERD_START);
	for (int i = 0; i < 1000; i++) {
		uint32_t v = e1000e_rd(n, E1000E_EERD);
		if (v & EERD_DONE) {
			*w = (uint16_t)(v >> 16);
			return 0;
		}
		n->bus->ops->delay_us(n->bus, 10);
	}
	return -ETIMEDOUT;
}

static int read_mac(struct e1000e *n)
{
	uint32_t ral = e1000e_rd(n, E1000E_RAL0), rah = e1000e_rd(n, E1000E_RAH0);
	uint8_t ee[6];
	for (unsigned i = 0; i < 3; i++) {
		uint16_t w;
		if (eeprom_word(n, i, &w) < 0)
			return -ETIMEDOUT;
		ee[2 * i] = (uint8_t)w;
		ee[2 * i + 1] = (uint8_t)(w >> 8);
	}
	for (unsigned i = 0; i < 4; i++)
		n->mac[i] = (uint8_t)(ral >> (8 * i));
	n->mac[4] = (uint8_t)rah;
	n->mac[5] = (uint8_t)(rah >> 8);
	n->mac_from_eeprom_matches = memcmp(ee, n->mac, 6) == 0;
	if (!(rah & RAH_AV) || !n->mac_from_eeprom_matches) {
		/* Receive-address 0 not loaded: take the EEPROM's and program it. */
		memcpy(n->mac, ee, 6);
		e1000e_wr(n, E1000E_RAL0, ee[0] | ee[1] << 8 | ee[2] << 16 | (uint32_t)ee[3] << 24);
		e1000e_wr(n, E1000E_RAH0, ee[4] | ee[5] << 8 | RAH_AV);
	}
	return 0;
}

static int wait_link(struct e1000e *n)
{
	for (int i = 0; i < 500; i++) {
		if (e1000e_rd(n, E1000E_STATUS) & STATUS_LU)
			return 0;
		n->bus->ops->delay_us(n->bus, 10000);
	}
	return -ENETDOWN;
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
	barrier();
	e1000e_wr(n, E1000E_TDBAL, (uint32_t)tx_iova);
	e1000e_wr(n, E1000E_TDBAH, (uint32_t)(tx_iova >> 32));
	e1000e_wr(n, E1000E_TDLEN, E1000E_RING * sizeof(struct e1000e_tx_desc));
	e1000e_wr(n, E1000E_TDH, 0);
	e1000e_wr(n, E1000E_TDT, 0);
	e1000e_wr(n, E1000E_RDBAL, (uint32_t)rx_iova);
	e1000e_wr(n, E1000E_RDBAH, (uint32_t)(rx_iova >> 32));
	e1000e_wr(n, E1000E_RDLEN, E1000E_RING * sizeof(struct e1000e_rx_desc));
	e1000e_wr(n, E1000E_RDH, 0);
	e1000e_wr(n, E1000E_RDT, E1000E_RING - 1);
	e1000e_wr(n, E1000E_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
	e1000e_wr(n, E1000E_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
}

int e1000e_open(struct e1000e *n, struct myrio_bus *bus)
{
	memset(n, 0, sizeof(*n));
	n->bus = bus;
	n->mem.fd = -1;
	e1000e_wr(n, E1000E_IMC, ~0u);
	e1000e_wr(n, E1000E_CTRL, e1000e_rd(n, E1000E_CTRL) | CTRL_RST);
	bus->ops->delay_us(bus, 10000);
	for (int i = 0; i < 100 && (e1000e_rd(n, E1000E_CTRL) & CTRL_RST); i++)
		bus->ops->delay_us(bus, 1000);
	e1000e_wr(n, E1000E_IMC, ~0u);
	(void)e1000e_rd(n, E1000E_ICR);
	int rc = read_mac(n);
	if (rc < 0) {
		fprintf(stderr, "%s: EEPROM read timed out\n", bus->name);
		return rc;
	}
	rc = myrio_dma_alloc(&n->mem, MEM_LEN);
	if (rc < 0)
		return rc;
	rc = bus->ops->dma_map(bus, &n->mem);
	if (rc < 0) {
		myrio_dma_free(&n->mem);
		return rc;
	}
	e1000e_wr(n, E1000E_CTRL, e1000e_rd(n, E1000E_CTRL) | CTRL_SLU);
	setup_rings(n);
	rc = wait_link(n);
	if (rc < 0)
		fprintf(stderr, "%s: no link after 5 s (STATUS 0x%08x)\n", bus->name,
			e1000e_rd(n, E1000E_STATUS));
	return rc;
}

void e1000e_close(struct e1000e *n)
{
	if (!n->bus)
		return;
	e1000e_wr(n, E1000E_IMC, ~0u);
	e1000e_wr(n, E1000E_RCTL, 0);
	e1000e_wr(n, E1000E_TCTL, 0);
	if (n->mem.bus)
		n->bus->ops->dma_unmap(n->bus, &n->mem);
	myrio_dma_free(&n->mem);
	n->bus = NULL;
}

void e1000e_enable_rx_irq(struct e1000e *n)
{
	e1000e_wr(n, E1000E_IVAR, IVAR_RXQ0_VEC0);
	e1000e_wr(n, E1000E_IMS, ICR_RXT0 | ICR_RXQ0);
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
	d->cmd = TXD_EOP | TXD_IFCS | TXD_RS;
	barrier();
	n->tx_tail = (idx + 1) % E1000E_RING;
	e1000e_wr(n, E1000E_TDT, n->tx_tail);
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
		if (n->tx[idx].status & DESC_DD) {
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
	for (unsigned t = 0; !(d->status & DESC_DD); t++) {
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		n->bus->ops->delay_us(n->bus, 1000);
	}
	barrier();
	int rc;
	uint16_t flen = d->length;
	if (!(d->status & RXD_EOP) || d->errors || flen > E1000E_BUF)
		rc = -EBADMSG; /* the device's word is checked like any other input */
	else if (flen > len)
		rc = -EMSGSIZE;
	else {
		memcpy(buf, n->rx_buf + (size_t)n->rx_next * E1000E_BUF, flen);
		rc = flen;
	}
	d->status = 0;
	barrier();
	e1000e_wr(n, E1000E_RDT, n->rx_next); /* give the buffer back */
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
