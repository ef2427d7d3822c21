/* SPDX-License-Identifier: BSD-3-Clause */
/* Bring-up of one NIC: probe (§8.1), reset sequence (§8.2), open (§8.3), close (§8.4). */
#include "mcp/nic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mcp/wait.h"
#include "util/log.h"
#include "util/pci_cap.h"

#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY 0x2
#define PCI_COMMAND_MASTER 0x4
#define PCI_COMMAND_INTX_DISABLE 0x400
#define PCI_CAP_ID_EXP 0x10
#define PCI_EXP_DEVCTL 0x08
#define PCI_EXP_DEVCTL_READRQ 0x7000
#define PCI_EXP_DEVCTL_READRQ_512 0x2000
#define PCI_EXP_DEVCTL_READRQ_4096 0x5000
#define RX_POOL_EXTRA_DEFAULT 1024u
#define SMALL_SIZE 256u /* frames up to this many bytes use the small ring */
#define DOWN_WAIT_US 1000000u
#define TX_DRAIN_WAIT_US 1000000u

static int cmd(struct myri_nic *nic, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2,
	       uint32_t *out)
{
	return mcp_cmd(&nic->cmd, op, d0, d1, d2, out);
}

/* Memory space and bus mastering on; read requests of 4096 bytes (§1.8). Returns the
 * maximum read request size in effect, 0 if unknown. */
unsigned myri_nic_pci_setup(struct myrio_bus *bus)
{
	uint32_t v;
	if (bus->ops->cfg_read(bus, PCI_COMMAND, 2, &v) == 0)
		bus->ops->cfg_write(bus, PCI_COMMAND, 2,
				    v | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	else
		log_warn("%s: cannot read the PCI command register", bus->name);
	unsigned cap = myrio_bus_find_cap(bus, PCI_CAP_ID_EXP);
	if (!cap)
		return 0;
	unsigned at = cap + PCI_EXP_DEVCTL;
	uint32_t ctl;
	if (bus->ops->cfg_read(bus, at, 2, &ctl) < 0)
		return 0;
	/* VFIO writes this register to the device only when its own copy changes: after a
	 * reboot reset the device to 512 while that copy still says 4096, writing 4096 alone
	 * would do nothing. Another value first makes the 4096 a change. */
	ctl &= ~(uint32_t)PCI_EXP_DEVCTL_READRQ;
	bus->ops->cfg_write(bus, at, 2, ctl | PCI_EXP_DEVCTL_READRQ_512);
	ctl |= PCI_EXP_DEVCTL_READRQ_4096;
	bus->ops->cfg_write(bus, at, 2, ctl);
	if (bus->ops->cfg_read(bus, at, 2, &ctl) < 0)
		return 0;
	return 128u << ((ctl & PCI_EXP_DEVCTL_READRQ) >> 12);
}

/* Whether MSI or MSI-X is enabled in config space (under VFIO, as VFIO shows it). */
static bool msi_on(struct myrio_bus *bus)
{
	uint32_t flags;
	unsigned msi = myrio_bus_find_cap(bus, PCI_CAP_ID_MSI);
	if (msi && bus->ops->cfg_read(bus, msi + 2, 2, &flags) == 0 && (flags & 1))
		return true;
	unsigned msix = myrio_bus_find_cap(bus, PCI_CAP_ID_MSIX);
	return msix && bus->ops->cfg_read(bus, msix + 2, 2, &flags) == 0 && (flags & 0x8000);
}

/* The interrupt mode, decided before CMD_RESET, after every reboot too (its config space is
 * wiped). MSI when asked for; otherwise INTx, masked with INTX_DISABLE (VFIO clears it at
 * open) so that a polled NIC never asserts a shared line, and status_handle runs the
 * deassert handshake without which the firmware sends no more status updates (§6.5). */
static void irq_mode(struct myri_nic *nic)
{
	struct myrio_bus *bus = nic->bus;
	int rc = 0;
	for (unsigned s = 0; s < MYRI_MAX_SLICES; s++)
		nic->vec_fd[s] = -1;
	if (nic->nq_wanted > 1) { /* MSI-X, a vector per slice (§6.4), or polled */
		rc = -ENOTSUP;
		if (nic->irq_wanted && bus->ops->irq_vectors)
			rc = bus->ops->irq_vectors(bus, nic->nq_wanted, nic->vec_fd);
		if (rc < 0)
			for (unsigned s = 0; s < MYRI_MAX_SLICES; s++)
				nic->vec_fd[s] = -1;
	} else if (bus->ops->irq_setup) {
		rc = bus->ops->irq_setup(bus, nic->irq_wanted);
	} else if (nic->irq_wanted) {
		rc = bus->ops->irq_fd(bus);
	}
	nic->msi = rc >= 0 && msi_on(bus);
	if (nic->irq_wanted && !nic->msi)
		log_warn("%s: MSI could not be enabled (%s): the port runs polled, with INTx "
			 "masked",
			 bus->name, rc < 0 ? strerror(-rc) : "not enabled in config space");
	uint32_t v;
	if (bus->ops->cfg_read(bus, PCI_COMMAND, 2, &v) == 0 && v != 0xffff) {
		v = nic->msi ? v & ~(uint32_t)PCI_COMMAND_INTX_DISABLE
			     : v | PCI_COMMAND_INTX_DISABLE;
		bus->ops->cfg_write(bus, PCI_COMMAND, 2, v);
	}
}

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

/* GET_RX_RING_SIZE / GET_SEND_RING_SIZE (§3.3), checked: nothing from the NIC is trusted. */
static int read_ring_sizes(struct myri_nic *nic)
{
	uint32_t rx_bytes, tx_bytes;
	int rc = cmd(nic, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, &rx_bytes);
	if (rc == 0)
		rc = cmd(nic, MCP_CMD_GET_SEND_RING_SIZE, 0, 0, 0, &tx_bytes);
	if (rc < 0)
		return rc;
	uint32_t rx = rx_bytes / 8, tx = tx_bytes / 16;
	if (!pow2_in(rx, 16, 32768) || !pow2_in(tx, 16, 32768)) {
		log_err("%s: the NIC reports impossible ring sizes (rx %u bytes, send %u bytes)",
			nic->bus->name, rx_bytes, tx_bytes);
		return -EPROTO;
	}
	if (nic->rx_entries && (rx != nic->rx_entries || tx != nic->tx_entries)) {
		log_err("%s: ring sizes changed under us (rx %u -> %u, send %u -> %u)",
			nic->bus->name, nic->rx_entries, rx, nic->tx_entries, tx);
		return -EPROTO;
	}
	nic->rx_entries = rx;
	nic->tx_entries = tx;
	nic->intrq_entries = 2 * rx; /* every posted buffer can be outstanding (§4.6) */
	return 0;
}

int myri_nic_firmware(struct myri_nic *nic)
{
	/* §2.2-§2.4: load the image, or keep what runs (§2.3). */
	int rc;
	if (nic->fw_path) {
		rc = mcp_fw_load_file(nic, nic->fw_path);
		if (rc == -ENOENT && nic->fw_adopt) {
			log_warn("%s: firmware image %s not found; adopting the running firmware",
				 nic->bus->name, nic->fw_path);
			rc = mcp_fw_adopt(nic);
		}
	} else if (nic->fw_adopt) {
		rc = mcp_fw_adopt(nic);
	} else {
		log_err("%s: no firmware image given and adoption disabled: set "
			"myrio_port_conf.firmware or adopt_firmware",
			nic->bus->name);
		rc = -EINVAL;
	}
	return rc;
}

/* The name of an image's "p" (unaligned-completion) flavour: "eth" in the file name becomes
 * "ethp" (myri10ge_eth_z8e.dat -> myri10ge_ethp_z8e.dat, as Linux's and FreeBSD's names).
 * NULL when the name has no "eth" or no memory. */
static char *unaligned_image_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *eth = strstr(base, "eth");
	if (!eth || eth[3] == 'p')
		return NULL;
	size_t head = (size_t)(eth + 3 - path), len = strlen(path);
	char *p = malloc(len + 2);
	if (!p)
		return NULL;
	memcpy(p, path, head);
	p[head] = 'p';
	memcpy(p + head + 1, path + head, len - head + 1);
	return p;
}

/* UNALIGNED_TEST failed (§2.1): the root complex splits read completions at other than
 * 4 KiB, and the aligned image must not run there (Linux and FreeBSD switch to the "p"
 * image). Under VFIO the driver cannot enable ECRC on the root port, so this is met more
 * often than under Linux. The "p" image is loaded, and reloaded after a reboot; without it
 * the port does not start. */
static int load_unaligned_image(struct myri_nic *nic)
{
	char *p = unaligned_image_path(nic->fw_path);
	int rc = p ? mcp_fw_load_file(nic, p) : -ENOENT;
	if (rc < 0) {
		log_err("%s: the root complex sends unaligned completions, where firmware %s must "
			"not run: install its unaligned (\"p\") image %s",
			nic->bus->name, nic->fw_path, p ? p : "(myri10ge_ethp_z8e.dat)");
		free(p);
		return rc == -ENOENT ? -EPROTO : rc;
	}
	log_info("%s: unaligned completions: running the \"p\" image %s", nic->bus->name, p);
	free(nic->fw_path);
	nic->fw_path = p;
	mcp_dummy_rdma(nic, true); /* after every load (§2.6) */
	return 0;
}

int myri_nic_probe(struct myri_nic *nic, struct myrio_bus *bus, const struct myrio_port_conf *conf)
{
	int rc;
	nic->bus = bus;
	nic->mtu = conf->mtu ? conf->mtu : 1500;
	if (nic->mtu < 68 || nic->mtu > 9000) {
		log_err("%s: MTU %u is out of range 68..9000", bus->name, nic->mtu);
		return -EINVAL;
	}
	if (bus->bar0_len < MCP_BAR0_MIN_LEN) {
		log_err("%s: BAR0 is %zu bytes, a Myri-10G has at least 16 MiB: wrong device?",
			bus->name, bus->bar0_len);
		return -ENODEV;
	}
	nic->intr_coal_us = conf->intr_coal_us;
	nic->promisc = conf->promisc;
	nic->irq_wanted = conf->irq;
	nic->rx_pool_extra = conf->rx_pool_size ? conf->rx_pool_size : RX_POOL_EXTRA_DEFAULT;
	unsigned mrrs = myri_nic_pci_setup(bus);

	rc = myrio_dma_alloc(&nic->ctrl, NIC_CTRL_LEN);
	if (rc < 0)
		return rc;
	rc = bus->ops->dma_map(bus, &nic->ctrl);
	if (rc < 0) {
		log_err("%s: cannot map control memory for DMA: %s", bus->name, strerror(-rc));
		myrio_dma_free(&nic->ctrl);
		return rc;
	}
	mcp_cmd_init(&nic->cmd, bus, (uint8_t *)nic->ctrl.va + NIC_CTRL_RESP,
		     nic->ctrl.iova + NIC_CTRL_RESP);

	nic->fw_adopt = conf->adopt_firmware;
	if (conf->firmware) {
		nic->fw_path = strdup(conf->firmware);
		if (!nic->fw_path)
			return -ENOMEM;
	}
	rc = myri_nic_firmware(nic);
	if (rc < 0)
		return rc;
	mcp_dummy_rdma(nic, true); /* as L after every load (§2.6); failure is harmless */
	rc = mcp_read_eeprom(nic);
	if (rc < 0)
		return rc;
	/* Optional commands may be unknown to the firmware, but a silent NIC is fatal. */
	uint32_t tso6;
	rc = cmd(nic, MCP_CMD_GET_MAX_TSO6_HDR_SIZE, 0, 0, 0, &tso6);
	if (rc == -ETIMEDOUT)
		return rc;
	rc = read_ring_sizes(nic);
	if (rc < 0)
		return rc;
	/* §2.1: a loaded image keeps 4 KiB descriptors only if the chipset delivers aligned
	 * completions; an adopted one is assumed unaligned (2 KiB). */
	if (mrrs && mrrs != 4096)
		nic->tx_boundary = MCP_TX_BOUNDARY_UNALIGNED;
	if (nic->fw_loaded && nic->tx_boundary == MCP_TX_BOUNDARY_ALIGNED) {
		uint64_t page = nic->ctrl.iova + NIC_CTRL_DMATEST;
		rc = cmd(nic, MCP_CMD_UNALIGNED_TEST, (uint32_t)page, (uint32_t)(page >> 32),
			 MCP_DMA_TEST_READ_WRITE(MCP_TX_BOUNDARY_ALIGNED), NULL);
		if (rc == -ETIMEDOUT)
			return rc;
		if (rc < 0)
			return load_unaligned_image(nic);
	}
	return 0;
}

/* Reads a BAR0 offset the NIC hands out and checks that len bytes fit in BAR0 there: the
 * doorbell windows of a board lie above its 2 MiB of SRAM. */
int myri_nic_get_offset(struct myri_nic *nic, uint32_t op, uint32_t arg, uint32_t len,
			uint32_t *off)
{
	int rc = cmd(nic, op, arg, 0, 0, off);
	if (rc < 0)
		return rc;
	if ((*off & 3) || (uint64_t)*off + len > nic->bus->bar0_len) {
		log_err("%s: the NIC answered %s with offset 0x%x, outside BAR0 for %u bytes",
			nic->bus->name, mcp_cmd_name(op), *off, len);
		return -EPROTO;
	}
	return 0;
}

/* §8.2: RESET, DMA tests, interrupt queue, IRQ offsets, MAC, pause, promiscuous, multicast. */
static int reset_sequence(struct myri_nic *nic)
{
	struct myri_rings *r = &nic->rings;
	uint32_t data;
	irq_mode(nic);
	int rc = cmd(nic, MCP_CMD_RESET, 0, 0, 0, &data);
	if (rc < 0) {
		log_err("%s: RESET failed", nic->bus->name);
		return rc;
	}
	uint64_t page = nic->ctrl.iova + NIC_CTRL_DMATEST;
	uint32_t len = nic->tx_boundary;
	const uint32_t modes[3] = {MCP_DMA_TEST_READ(len), MCP_DMA_TEST_WRITE(len),
				   MCP_DMA_TEST_READ_WRITE(len)};
	for (int i = 0; i < 3; i++) {
		rc = cmd(nic, MCP_CMD_DMA_TEST, (uint32_t)page, (uint32_t)(page >> 32), modes[i],
			 &data);
		if (rc == -ETIMEDOUT)
			return rc;
		if (rc < 0)
			log_warn("%s: DMA test %d failed (%d)", nic->bus->name, i, rc);
		else if ((data >> 16) == 0 || (data & 0xffff) == 0)
			log_warn("%s: DMA test %d reports no transfers", nic->bus->name, i);
	}
	rc = cmd(nic, MCP_CMD_SET_RSS_MCP_SLOT_TYPE, 0, 0, 0, NULL);
	if (rc == -ETIMEDOUT)
		return rc;
	rc = cmd(nic, MCP_CMD_SET_INTRQ_SIZE, nic->intrq_entries * 4, 0, 0, NULL);
	if (rc == 0 && nic->nq_wanted > 1)
		rc = myri_slices_reset(nic);
	if (rc < 0)
		return rc;
	rc = cmd(nic, MCP_CMD_SET_INTRQ_DMA, (uint32_t)nic->intrq.iova,
		 (uint32_t)(nic->intrq.iova >> 32), 0, NULL);
	if (rc < 0)
		return rc;
	rc = myri_nic_get_offset(nic, MCP_CMD_GET_IRQ_ACK_OFFSET, 0, 8 * MYRI_MAX_SLICES,
				 &nic->irq_ack_off);
	if (rc == 0)
		rc = myri_nic_get_offset(nic, MCP_CMD_GET_IRQ_DEASSERT_OFFSET, 0, 4,
					 &nic->irq_deassert_off);
	if (rc == 0)
		rc = myri_nic_get_offset(nic, MCP_CMD_GET_INTR_COAL_DELAY_OFFSET, 0, 4,
					 &nic->coal_off);
	if (rc < 0)
		return rc;
	mmio_write32(nic->bus->bar0, nic->coal_off, nic->intr_coal_us);

	/* Host side starts from zero with the NIC (§8.2 step 9). */
	memset(nic->intrq.va, 0, nic->intrq.len);
	memset((uint8_t *)nic->ctrl.va + NIC_CTRL_STATUS, 0, sizeof(struct mcp_irq_data));
	r->rx_done = nic->intrq.va;
	r->rx_done_idx = 0;
	r->rx_done_mask = nic->intrq_entries - 1;
	r->status = (void *)((uint8_t *)nic->ctrl.va + NIC_CTRL_STATUS);
	r->bus = nic->bus;
	r->claim0 = nic->bus->bar0 + nic->irq_ack_off;
	r->claim1 = nic->bus->bar0 + nic->irq_ack_off + 4;
	r->deassert = nic->msi ? (volatile uint8_t *)&r->deassert_sink
			       : nic->bus->bar0 + nic->irq_deassert_off;
	r->rx_token = false;

	const uint8_t *m = nic->ee.mac;
	rc = cmd(nic, MCP_CMD_SET_MAC_ADDRESS,
		 (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3],
		 (uint32_t)m[4] << 8 | m[5], 0, NULL);
	if (rc == 0)
		rc = cmd(nic,
			 nic->pause ? MCP_CMD_ENABLE_FLOW_CONTROL : MCP_CMD_DISABLE_FLOW_CONTROL, 0,
			 0, 0, NULL);
	if (rc == 0)
		rc = cmd(nic, nic->promisc ? MCP_CMD_ENABLE_PROMISC : MCP_CMD_DISABLE_PROMISC, 0, 0,
			 0, NULL);
	if (rc < 0)
		return rc;
	/* The filter starts empty and off after RESET (§7.4); a NIC whose filter cannot be
	 * written still works, receiving all multicast, unless it stopped answering. */
	rc = myri_mc_apply(nic);
	return rc == -ETIMEDOUT || (rc < 0 && nic->rx_filter_bug) ? rc : 0;
}

static int rx_ring_setup(struct myri_nic *nic, unsigned s, struct myri_rx_ring *ring, uint32_t op,
			 struct myrio_pool *pool)
{
	uint32_t off;
	int rc = myri_nic_get_offset(nic, op, s, nic->rx_entries * 8, &off);
	if (rc < 0)
		return rc;
	ring->sram = nic->bus->bar0 + off;
	if (nic->keep_rings) /* the same buffers go to the NIC again (watchdog_queues.c) */
		return myri_rx_ring_repost(ring);
	ring->mask = nic->rx_entries - 1;
	ring->posted = ring->done = 0;
	ring->pool = pool;
	ring->info = calloc(nic->rx_entries, sizeof(*ring->info));
	return ring->info ? 0 : -ENOMEM;
}

/* Buffer sizes (§4.4/§4.5, docs/driver.md): small buffers in 512-byte elements that never
 * cross a 4 KiB page, and one big buffer per frame from a pool whose elements hold the
 * largest frame (so an MTU 9000 frame uses one 9 KiB buffer). One pair per slice. */
int myri_nic_rx_pools(struct myri_nic *nic, struct myrio_pool **small, struct myrio_pool **big)
{
	uint32_t count = nic->rx_entries + nic->rx_pool_extra;
	int rc = myrio_pool_create_bounded(nic->bus, count, 512 - 64, MCP_RX_SMALL_NO_CROSS, small);
	if (rc < 0)
		return rc;
	rc = myrio_pool_create_in(nic->bus, count, MYRIO_PKT_HEADROOM + MCP_RX_PAD + nic->max_frame,
				  big);
	if (rc < 0)
		return rc;
	nic->small_size = SMALL_SIZE;
	/* Told capacity includes the 2-byte pad (§4.4): the whole buffer behind the headroom. */
	nic->big_size = ((*big)->buf_len - MYRIO_PKT_HEADROOM) & ~7u;
	return 0;
}

/* Slice s's rings at the offsets the NIC hands out (§4.3, §5.7), empty. */
int myri_nic_rings_setup(struct myri_nic *nic, unsigned s, struct myri_rings *r,
			 struct myrio_pool *small, struct myrio_pool *big)
{
	uint32_t send_off;
	int rc =
	    myri_nic_get_offset(nic, MCP_CMD_GET_SEND_OFFSET, s, nic->tx_entries * 16, &send_off);
	if (rc == 0)
		rc = rx_ring_setup(nic, s, &r->small, MCP_CMD_GET_SMALL_RX_OFFSET, small);
	if (rc == 0)
		rc = rx_ring_setup(nic, s, &r->big, MCP_CMD_GET_BIG_RX_OFFSET, big);
	if (rc < 0)
		return rc;
	r->bus = nic->bus; /* told when a burst posted work (every slice's rings) */
	r->tx.sram = nic->bus->bar0 + send_off;
	r->tx.mask = nic->tx_entries - 1;
	r->tx.boundary = nic->tx_boundary;
	r->tx.max_frame = nic->max_frame;
	if (nic->keep_rings) {
		r->restart = true; /* pending sends: the owner's pools */
	} else {
		r->tx.info = calloc(nic->tx_entries, sizeof(*r->tx.info));
		if (!r->tx.info)
			return -ENOMEM;
	}
	r->small_size = nic->small_size;
	r->max_frame = nic->max_frame;
	counter32_set(&r->link_up, MYRIO_LINK_UNKNOWN);
	counter32_set(&r->snap.rdma_tags_available, MCP_RDMA_TAGS);
	return 0;
}

int myri_nic_open(struct myri_nic *nic)
{
	struct myri_rings *r = &nic->rings;
	int rc;
	nic->max_frame = nic->mtu + 18; /* MTU + Ethernet header + VLAN tag (§3.3 SET_MTU) */
	if (!nic->intrq.va) {
		rc = myrio_dma_alloc(&nic->intrq, nic->intrq_entries * 4);
		if (rc == 0)
			rc = nic->bus->ops->dma_map(nic->bus, &nic->intrq);
		if (rc < 0) {
			log_err("%s: cannot map the completion ring: %s", nic->bus->name,
				strerror(-rc));
			return rc;
		}
	}
	if (!nic->keep_rings)
		memset(r, 0, sizeof(*r));
	rc = reset_sequence(nic);
	if (rc < 0)
		return rc;

	if (!nic->small_pool) { /* a recovery keeps the pools: the application holds buffers */
		rc = myri_nic_rx_pools(nic, &nic->small_pool, &nic->big_pool);
		if (rc < 0)
			return rc;
	}
	rc = myri_nic_rings_setup(nic, 0, r, nic->small_pool, nic->big_pool);
	if (rc == 0)
		rc = read_ring_sizes(nic);
	if (rc < 0)
		return rc;

	/* Fill both rings completely before ETHERNET_UP (§8.3 step 5, §10.1 rule 3); with
	 * keep_rings they hold what they held, and their owner tops them up. */
	uint32_t small = nic->keep_rings ? r->small.posted : rx_ring_refill(&r->small);
	uint32_t big = nic->keep_rings ? r->big.posted : rx_ring_refill(&r->big);
	bool full = small == nic->rx_entries && big == nic->rx_entries;
	if (!full && nic->recovering && small && big && !nic->keep_rings) {
		log_warn("%s: the application holds receive buffers: rings start with %u small "
			 "and %u big buffers of %u",
			 nic->bus->name, small, big, nic->rx_entries);
	} else if (!full && !nic->keep_rings) {
		log_err("%s: cannot fill the receive rings", nic->bus->name);
		return -ENOMEM;
	}
	uint64_t st = nic->ctrl.iova + NIC_CTRL_STATUS;
	rc = cmd(nic, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)st, (uint32_t)(st >> 32),
		 sizeof(struct mcp_irq_data), NULL);
	if (rc == -ENOSYS) /* old firmware: the 40-byte tail of the block (§6.2) */
		rc = cmd(nic, MCP_CMD_SET_STATS_DMA_OBSOLETE, (uint32_t)(st + 24),
			 (uint32_t)((st + 24) >> 32), 0, NULL);
	if (rc == 0)
		rc = cmd(nic, MCP_CMD_SET_MTU, nic->max_frame, 0, 0, NULL);
	if (rc == 0)
		rc = cmd(nic, MCP_CMD_SET_SMALL_BUFFER_SIZE, nic->small_size, 0, 0, NULL);
	if (rc == 0)
		rc = cmd(nic, MCP_CMD_SET_BIG_BUFFER_SIZE, nic->big_size, 0, 0, NULL);
	if (rc < 0)
		return rc;
	rc = cmd(nic, MCP_CMD_SET_TSO_MODE, 0, 0, 0, NULL);
	if (rc < 0 && rc != -ENOSYS)
		return rc;
	/* TSO requests carry the mode-0 checksum seed (§5.6): offered only when the firmware
	 * took mode 0 (L goes on without it; a firmware that does not know the command may
	 * not do TSO the way we encode it). */
	nic->tso_mode0 = rc == 0;
	if (nic->nq > 1) {
		rc = myri_slices_open(nic);
		if (rc < 0)
			return rc;
	}
	rc = cmd(nic, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL);
	if (rc < 0) {
		log_err("%s: ETHERNET_UP failed", nic->bus->name);
		return rc;
	}
	nic->up = true;
	if (nic->multi_tx) /* every send ring stays started: no GO/STOP on the data path */
		for (unsigned s = 0; s < nic->nq; s++)
			mmio_write32(nic->bus->bar0, MCP_SEND_GO_OFF + MCP_DOORBELL_STRIDE * s, 1);
	return 0;
}

void myri_rings_drop(struct myri_rings *r)
{
	rx_ring_release(&r->small);
	rx_ring_release(&r->big);
	tx_ring_release(&r->tx);
	free(r->small.info);
	free(r->big.info);
	free(r->tx.info);
	r->small.info = r->big.info = NULL;
	r->tx.info = NULL;
}

void myri_nic_drop_buffers(struct myri_nic *nic)
{
	myri_slices_drop_buffers(nic);
	myri_rings_drop(&nic->rings);
}

/* Frees everything posted or queued and the pools. */
static void release_buffers(struct myri_nic *nic)
{
	myri_nic_drop_buffers(nic);
	struct myrio_pool *pools[2] = {nic->small_pool, nic->big_pool};
	for (int i = 0; i < 2; i++) {
		if (pools[i] && myrio_pool_free_count(pools[i]) != pools[i]->count)
			log_warn("%s: %u receive buffers were not freed before close",
				 nic->bus->name, pools[i]->count - myrio_pool_free_count(pools[i]));
		myrio_pool_destroy(pools[i]);
	}
	nic->small_pool = nic->big_pool = NULL;
}

/* Whether every queue's send ring is empty: the NIC reported each chain read. */
static bool tx_drained(struct myri_nic *nic)
{
	for (unsigned q = 0; q < nic->nq; q++) {
		struct myri_rings *r = myri_queue_rings(nic, q);
		/* a ring to restart lost its sends at the reset (watchdog_queues.c) */
		if (r->tx.pkt_done != r->tx.pkt_req && !r->restart)
			return false;
	}
	return true;
}

/* Frames posted before the close leave before the NIC stops: an application that sends
 * and then closes (a last datagram, an IGMP Leave) expects them to go. Bounded, like the
 * down wait, for a NIC that holds them (link down with pause, a hang the watchdog saw). */
static void tx_drain(struct myri_nic *nic)
{
	struct mcp_wait w;
	mcp_wait_start(&w, nic->bus, TX_DRAIN_WAIT_US);
	while (!tx_drained(nic) && !nic->wd.request && !nic->wd.gone && !mcp_wait_over(&w)) {
		unsigned handled = 0;
		for (unsigned q = 0; q < nic->nq; q++)
			handled += status_handle(myri_queue_rings(nic, q)) != 0;
		if (!handled)
			nic->bus->ops->delay_us(nic->bus, 100);
	}
	if (!tx_drained(nic))
		log_warn("%s: frames still in the send ring at close were not sent",
			 nic->bus->name);
}

int myri_nic_down(struct myri_nic *nic)
{
	if (!nic->up)
		return 0;
	struct myri_rings *r = &nic->rings;
	uint32_t downs = r->link_down_events;
	int rc = cmd(nic, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL);
	/* Wait for the "down" status update (§6.3), handling updates meanwhile. */
	struct mcp_wait w;
	mcp_wait_start(&w, nic->bus, DOWN_WAIT_US);
	while (rc == 0 && r->link_down_events == downs && !mcp_wait_over(&w)) {
		if (!status_handle(r))
			nic->bus->ops->delay_us(nic->bus, 100);
	}
	if (rc == 0 && r->link_down_events == downs) {
		log_warn("%s: no down status update within 1 s after ETHERNET_DOWN",
			 nic->bus->name);
		rc = -ETIME;
	}
	nic->up = false;
	return rc;
}

int myri_nic_close(struct myri_nic *nic)
{
	if (nic->up)
		tx_drain(nic);
	int rc = myri_nic_down(nic);
	release_buffers(nic);
	return rc;
}

void myri_nic_release(struct myri_nic *nic)
{
	/* The NIC must stop reading the dummy address before its memory goes (§2.6; L turns
	 * it off on remove). */
	if (nic->dummy_rdma_on)
		mcp_dummy_rdma(nic, false);
	release_buffers(nic);
	free(nic->fw_path);
	nic->fw_path = NULL;
	myri_slices_release(nic);
	struct myrio_dma_region *regs[2] = {&nic->intrq, &nic->ctrl};
	for (int i = 0; i < 2; i++) {
		if (!regs[i]->va)
			continue;
		if (regs[i]->bus)
			nic->bus->ops->dma_unmap(nic->bus, regs[i]);
		myrio_dma_free(regs[i]);
	}
}
