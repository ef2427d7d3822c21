/* SPDX-License-Identifier: BSD-3-Clause */
/* The e1000e port back-end: struct myrio_port_ops for an Intel 82574 on a struct myrio_bus
 * (VFIO), with one receive and one transmit ring of legacy descriptors and zero-copy
 * buffers from the port's pools. No offloads: the stack checksums in software. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "e1000e/e1000e_hw.h"
#include "mem/dma.h"
#include "port/port_ops.h"
#include "util/log.h"

#define RING 256u /* descriptors per ring: RDLEN/TDLEN 4 KiB, a multiple of 128 bytes */
#define RX_POOL_DEFAULT 1024u
#define ETH_HLEN 14u
#define MAX_MTU (E1000E_RX_BUF - 18u) /* one buffer per frame: no jumbo frames (LPE off) */

struct e1000e_port {
	struct myrio_port port; /* first: the generic layer casts */
	struct e1000e_hw hw;
	struct myrio_dma_region rings; /* tx ring, then rx ring */
	volatile struct e1000e_tx_desc *tx;
	volatile struct e1000e_rx_desc *rx;
	struct myrio_pkt *tx_pkt[RING], *rx_pkt[RING];
	struct myrio_pool *rx_pool;
	uint32_t tx_tail, tx_clean; /* next descriptor to fill, oldest not yet completed */
	uint32_t rx_next;	    /* next descriptor the device completes */
	uint32_t mtu;
	struct myrio_port_stats st;
	/* the device's clear-on-read counters, accumulated */
	uint64_t crc_errors, missed, no_buffer;
	bool promisc, mc_listed, mc_all; /* what decides RCTL.MPE */
};

static struct e1000e_port *ep(struct myrio_port *port)
{
	return (struct e1000e_port *)port;
}

/* Descriptors the device has written back are read after their DD bit. */
static inline void rmb(void)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* Descriptor stores reach memory before the tail register tells the device. */
static inline void wmb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void rx_give(struct e1000e_port *p, uint32_t i, struct myrio_pkt *pkt)
{
	p->rx_pkt[i] = pkt;
	p->rx[i].addr = myrio_pkt_data_iova(pkt);
	p->rx[i].status = 0;
}

static uint16_t e_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct e1000e_port *p = ep(port);
	myrio_port_poll_count(port);
	uint16_t got = 0;
	uint32_t i = p->rx_next, refilled = 0;
	while (got < n) {
		volatile struct e1000e_rx_desc *d = &p->rx[i];
		if (!(d->status & E1000E_DESC_DD))
			break;
		rmb();
		struct myrio_pkt *fresh = myrio_pkt_alloc(p->rx_pool);
		if (!fresh) {
			p->st.rx_refill_failed++; /* the frame waits in the ring for a buffer */
			break;
		}
		struct myrio_pkt *pkt = p->rx_pkt[i];
		uint32_t len = d->length;
		/* The device's word is checked like any other input. */
		if (!(d->status & E1000E_RXD_EOP) || d->errors || len < ETH_HLEN ||
		    len > E1000E_RX_BUF) {
			p->st.rx_bad_completion++;
			myrio_pkt_free(pkt);
		} else {
			pkt->len = len;
			p->st.rx_bytes += len;
			pkts[got++] = pkt;
		}
		rx_give(p, i, fresh);
		refilled++;
		i = (i + 1) % RING;
	}
	if (refilled) {
		wmb();
		/* The tail is the last descriptor the device may fill: one behind rx_next. */
		e1000e_wr(&p->hw, E1000E_RDT, (i + RING - 1) % RING);
		p->rx_next = i;
	}
	p->st.rx_packets += got;
	return got;
}

/* Frees the buffers of descriptors the device has finished with. */
static void tx_reap(struct e1000e_port *p)
{
	while (p->tx_clean != p->tx_tail && (p->tx[p->tx_clean].status & E1000E_DESC_DD)) {
		myrio_pkt_free(p->tx_pkt[p->tx_clean]);
		p->tx_pkt[p->tx_clean] = NULL;
		p->tx_clean = (p->tx_clean + 1) % RING;
	}
}

static uint16_t e_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct e1000e_port *p = ep(port);
	tx_reap(p);
	uint16_t taken = 0;
	uint32_t tail = p->tx_tail;
	for (; taken < n; taken++) {
		struct myrio_pkt *pkt = pkts[taken];
		if ((tail + 1) % RING == p->tx_clean) {
			p->st.tx_ring_full += (uint64_t)(n - taken);
			break;
		}
		/* No offloads here (info.caps says so): a request for one is refused, as is a
		 * frame the device cannot send in one descriptor. */
		if ((pkt->ol_flags & (MYRIO_PKT_TX_CSUM | MYRIO_PKT_TX_TSO)) ||
		    pkt->len < ETH_HLEN || pkt->len > p->mtu + ETH_HLEN + 4u ||
		    (uint64_t)pkt->data_off + pkt->len > pkt->buf_len) {
			p->st.tx_dropped_bad++;
			myrio_pkt_free_req(pkt);
			continue;
		}
		volatile struct e1000e_tx_desc *d = &p->tx[tail];
		d->addr = myrio_pkt_data_iova(pkt);
		d->length = (uint16_t)pkt->len;
		d->cso = 0;
		d->css = 0;
		d->special = 0;
		d->status = 0;
		d->cmd = E1000E_TXD_EOP | E1000E_TXD_IFCS | E1000E_TXD_RS;
		p->tx_pkt[tail] = pkt;
		p->st.tx_packets++;
		p->st.tx_bytes += pkt->len;
		tail = (tail + 1) % RING;
	}
	if (tail != p->tx_tail) {
		wmb();
		p->tx_tail = tail;
		e1000e_wr(&p->hw, E1000E_TDT, tail); /* one doorbell per burst */
	}
	return taken;
}

static int e_pool_create(struct myrio_port *port, uint32_t count, uint32_t buf_len,
			 struct myrio_pool **out)
{
	return myrio_pool_create_in(ep(port)->hw.bus, count, buf_len, out);
}

static int e_link(struct myrio_port *port)
{
	return e1000e_rd(&ep(port)->hw, E1000E_STATUS) & E1000E_STATUS_LU ? MYRIO_LINK_UP
									  : MYRIO_LINK_DOWN;
}

static int e_info(struct myrio_port *port, struct myrio_port_info *info)
{
	struct e1000e_port *p = ep(port);
	snprintf(info->bus, sizeof(info->bus), "%s", p->hw.bus->kind);
	memcpy(info->mac, p->hw.mac, 6);
	info->mtu = p->mtu;
	info->max_frame = p->mtu + 18u;
	info->tx_ring_entries = RING;
	info->rx_ring_entries = RING;
	info->caps = 0;
	return 0;
}

/* The device's counters clear when read (82574 datasheet §10.2.6): each read adds to the
 * port's totals. */
static void read_counters(struct e1000e_port *p)
{
	p->crc_errors += e1000e_rd(&p->hw, E1000E_CRCERRS);
	p->missed += e1000e_rd(&p->hw, E1000E_MPC);
	p->no_buffer += e1000e_rd(&p->hw, E1000E_RNBC);
}

static int e_stats(struct myrio_port *port, struct myrio_port_stats *s)
{
	struct e1000e_port *p = ep(port);
	read_counters(p);
	*s = p->st;
	s->rx_missed = p->missed;
	s->rx_errors = p->crc_errors;
	s->link_up = e_link(port) == MYRIO_LINK_UP;
	return 0;
}

static const char *const xstat_names[] = {"crc_errors", "missed_packets", "rx_no_buffer"};
#define N_XSTATS (sizeof(xstat_names) / sizeof(xstat_names[0]))

static int e_xstats_names(struct myrio_port *port, struct myrio_xstat_name *names, unsigned n)
{
	for (unsigned i = 0; i < N_XSTATS && i < n; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s", xstat_names[i]);
	return (int)N_XSTATS;
}

static int e_xstats(struct myrio_port *port, uint64_t *values, unsigned n)
{
	struct e1000e_port *p = ep(port);
	read_counters(p);
	const uint64_t v[N_XSTATS] = {p->crc_errors, p->missed, p->no_buffer};
	for (unsigned i = 0; i < N_XSTATS && i < n; i++)
		values[i] = v[i];
	return (int)N_XSTATS;
}

static void release(struct e1000e_port *p)
{
	for (uint32_t i = 0; i < RING; i++) {
		if (p->tx_pkt[i])
			myrio_pkt_free_req(p->tx_pkt[i]);
		if (p->rx_pkt[i])
			myrio_pkt_free(p->rx_pkt[i]);
	}
	if (p->rx_pool)
		myrio_pool_destroy(p->rx_pool);
	if (p->rings.bus)
		p->hw.bus->ops->dma_unmap(p->hw.bus, &p->rings);
	if (p->rings.va)
		myrio_dma_free(&p->rings);
}

static void e_close(struct myrio_port *port)
{
	struct e1000e_port *p = ep(port);
	struct myrio_bus *bus = p->hw.bus;
	e1000e_hw_stop(&p->hw); /* no DMA after this: the buffers go back to their pools */
	release(p);
	myrio_bus_close(bus);
	free(p);
}

/* No multicast table array (MTA) is written: a listed group or allmulti turns on
 * multicast-promiscuous reception (RCTL.MPE), a superset the stack filters in software. */
static int e_mc_update(struct e1000e_port *p)
{
	uint32_t rctl = e1000e_rd(&p->hw, E1000E_RCTL) & ~E1000E_RCTL_MPE;
	if (p->promisc || p->mc_listed || p->mc_all)
		rctl |= E1000E_RCTL_MPE;
	e1000e_wr(&p->hw, E1000E_RCTL, rctl);
	return 0;
}

static int e_mc_addr_list(struct myrio_port *port, const uint8_t (*addrs)[6], unsigned n)
{
	ep(port)->mc_listed = n > 0;
	return e_mc_update(ep(port));
}

static int e_allmulti(struct myrio_port *port, bool on)
{
	ep(port)->mc_all = on;
	return e_mc_update(ep(port));
}

static const struct myrio_port_ops e1000e_ops = {
    .rx_burst = e_rx_burst,
    .tx_burst = e_tx_burst,
    .pool_create = e_pool_create,
    .link = e_link,
    .info = e_info,
    .stats = e_stats,
    .xstats_names = e_xstats_names,
    .xstats = e_xstats,
    .mc_addr_list = e_mc_addr_list,
    .allmulti = e_allmulti,
    .close = e_close,
};

static int bring_up(struct e1000e_port *p, struct myrio_bus *bus,
		    const struct myrio_port_conf *conf)
{
	int rc = e1000e_hw_reset(&p->hw, bus);
	if (rc < 0)
		return rc;
	rc = myrio_dma_alloc(&p->rings, 2 * RING * sizeof(struct e1000e_rx_desc));
	if (rc < 0)
		return rc;
	rc = bus->ops->dma_map(bus, &p->rings);
	if (rc < 0)
		return rc;
	uint32_t count = conf->rx_pool_size ? conf->rx_pool_size : RX_POOL_DEFAULT;
	if (count < RING) {
		log_err("%s: rx_pool_size %u is smaller than the receive ring (%u)", bus->name,
			count, RING);
		return -EINVAL;
	}
	rc = myrio_pool_create_in(bus, count, MYRIO_PKT_HEADROOM + E1000E_RX_BUF, &p->rx_pool);
	if (rc < 0)
		return rc;
	p->tx = (volatile struct e1000e_tx_desc *)p->rings.va;
	p->rx = (volatile struct e1000e_rx_desc *)((uint8_t *)p->rings.va +
						   RING * sizeof(struct e1000e_tx_desc));
	for (uint32_t i = 0; i < RING; i++)
		rx_give(p, i, myrio_pkt_alloc(p->rx_pool));
	e1000e_hw_start(&p->hw, p->rings.iova, myrio_dma_iova(&p->rings, (const void *)p->rx), RING,
			conf->promisc ? E1000E_RCTL_UPE | E1000E_RCTL_MPE : 0);
	return e1000e_hw_wait_link(&p->hw);
}

const struct myrio_pci_id myrio_e1000e_pci_ids[] = {
    {E1000E_PCI_VENDOR_INTEL, E1000E_PCI_DEVICE_82574L},
    {0, 0},
};

int myrio_e1000e_open(struct myrio_bus *bus, const struct myrio_port_conf *conf,
		      struct myrio_port **out)
{
	*out = NULL;
	static const struct myrio_driver_arg no_args[] = {{0}};
	if (myrio_driver_args_parse(bus->name, conf->driver_args, no_args) < 0) {
		myrio_bus_close(bus);
		return -EINVAL;
	}
	uint32_t mtu = conf->mtu ? conf->mtu : 1500;
	if (mtu < 68 || mtu > MAX_MTU) {
		log_err("%s: MTU %u: the e1000e driver takes 68..%u (no jumbo frames)", bus->name,
			mtu, MAX_MTU);
		myrio_bus_close(bus);
		return -EINVAL;
	}
	struct e1000e_port *p = calloc(1, sizeof(*p));
	if (!p) {
		myrio_bus_close(bus);
		return -ENOMEM;
	}
	p->port.ops = &e1000e_ops;
	p->mtu = mtu;
	p->promisc = conf->promisc;
	p->rings.fd = -1;
	int rc = bring_up(p, bus, conf);
	if (rc < 0) {
		log_err("%s: e1000e bring-up failed (%s)", bus->name, strerror(-rc));
		e1000e_hw_stop(&p->hw);
		release(p);
		myrio_bus_close(bus);
		free(p);
		return rc;
	}
	log_info("%s: e1000e up, MAC %02x:%02x:%02x:%02x:%02x:%02x, rings of %u", bus->name,
		 p->hw.mac[0], p->hw.mac[1], p->hw.mac[2], p->hw.mac[3], p->hw.mac[4], p->hw.mac[5],
		 RING);
	*out = &p->port;
	return 0;
}
