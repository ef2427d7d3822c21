/* SPDX-License-Identifier: BSD-3-Clause */
/* One Myri-10G NIC driven from user space: its bus, firmware, command channel, DMA memory and
 * the rings of slice 0. Bring-up follows the Linux driver's order (§8). */
#ifndef MYRIO_MCP_NIC_H
#define MYRIO_MCP_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "mcp/cmd.h"
#include "mcp/fw_header.h"
#include "mcp/multicast.h"
#include "mem/dma.h"
#include "myrio/port.h"
#include "rings/rings.h"

struct myrio_bus;

/* Why the watchdog resets the NIC (§8.5). */
enum myri_wd_reason {
	WD_NONE,
	WD_REBOOTED,	   /* bus master cleared: the NIC rebooted itself (§2.5) */
	WD_TX_STUCK,	   /* send ring made no progress for a period, no pause frames */
	WD_BAD_COMPLETION, /* completion with an impossible length: rings may be out of step */
	WD_RX_MISMATCH,	   /* a buffer does not hold what its completion described */
	WD_GONE,	   /* config space reads all ones: the NIC left the bus */
	WD_RDMA_TAGS,	   /* send-buffer DMA reads failed: their tags are lost until a reset */
};

/* Watchdog state (§8.5, watchdog.c). The data path only decrements rings.poll_countdown;
 * the clock is looked at when it reaches 0. */
struct myri_watchdog {
	uint32_t calls;	    /* calls between looks while the NIC is up */
	uint64_t period_ns; /* 0: watchdog off */
	uint64_t next_ns;   /* time of the next check */
	uint32_t last_tx_done, last_pause;
	uint64_t last_rx_packets;
	uint64_t last_bad_completion;
	bool stall_warned;	     /* pause frames hold the send ring: said once */
	enum myri_wd_reason request; /* reset asked for by the data path, done at the next call */
	bool gone;		     /* the NIC does not answer config reads */
	uint64_t last_reset_ns;
	uint64_t rx_mismatches;	 /* myrio_rx_verify found a buffer not as described */
	uint64_t rdma_tags_lost; /* RDMA tags the NIC reported lost, over all resets */
	uint64_t resets;	 /* recoveries completed */
	uint64_t failures;	 /* recovery attempts that failed */
};

struct myri_nic {
	struct myrio_bus *bus;
	struct mcp_cmd_chan cmd;
	struct mcp_fw_info fw;
	struct mcp_eeprom ee;
	bool fw_loaded;	    /* false: adopted the running firmware (§2.3) */
	bool rx_filter_bug; /* adopted 1.4.4-1.4.11: broadcasts dropped unless ALLMULTI */
	uint32_t tx_boundary;
	uint32_t mtu, max_frame, small_size, big_size;
	uint32_t rx_entries, tx_entries, intrq_entries;
	uint32_t intr_coal_us;
	bool promisc;
	uint32_t rx_pool_extra;
	bool up;
	bool tso_mode0;	    /* SET_TSO_MODE 0 accepted: TSO offered (§5.6) */
	bool dummy_rdma_on; /* to be turned off before the DMA memory goes (§2.6) */
	char *fw_path;	    /* image loaded at probe, reloaded after a reboot (§2.5) */
	bool fw_adopt;	    /* adoption allowed (conf.adopt_firmware) */
	bool recovering;    /* open after a reboot: rx rings may start partly filled */
	bool irq_wanted;    /* conf.irq: MSI wired before every reset sequence */
	bool msi;	    /* MSI (or MSI-X) on: no INTx, no deassert handshake (§6.5) */
	/* DMA memory: control page (response, status block, DMA-test page) and the
	 * completion ring, each mapped on the bus. */
	struct myrio_dma_region ctrl, intrq;
	struct myrio_pool *small_pool, *big_pool;
	uint32_t irq_ack_off, irq_deassert_off, coal_off;
	struct myri_rings rings;
	struct myri_watchdog wd;
	struct myri_mc mc; /* the groups the host wants, rewritten after every reset */
};

/* Layout of the control region. */
#define NIC_CTRL_RESP 0u       /* command response / confirm word (§3.1) */
#define NIC_CTRL_STATUS 64u    /* status block (§6.1) */
#define NIC_CTRL_DUMMY 128u    /* dummy-RDMA target (§2.6), zeros */
#define NIC_CTRL_DMATEST 4096u /* 4 KiB page for DMA_TEST (§8.2) */
#define NIC_CTRL_LEN 8192u

/* Probe: map control memory, adopt or load the firmware (§2.2-§2.4), dummy RDMA, read the
 * EEPROM strings and the ring sizes. */
int myri_nic_probe(struct myri_nic *nic, struct myrio_bus *bus, const struct myrio_port_conf *conf);
/* Reset sequence (§8.2) + open (§8.3): on return the NIC is up with full rx rings. */
int myri_nic_open(struct myri_nic *nic);
/* ETHERNET_DOWN and the wait for its status update (§8.4); releases all buffers. */
int myri_nic_close(struct myri_nic *nic);
/* ETHERNET_DOWN and the wait only: the NIC stops touching the rings, buffers stay. */
int myri_nic_down(struct myri_nic *nic);
/* Frees the DMA memory (the bus stays open). */
void myri_nic_release(struct myri_nic *nic);

/* PCI command register (memory space, bus master) and read request size (§1.8); returns
 * the read request size in effect, 0 if unknown. */
unsigned myri_nic_pci_setup(struct myrio_bus *bus);
/* Loads or adopts the firmware as configured at probe (§2.2-§2.4). */
int myri_nic_firmware(struct myri_nic *nic);
/* Returns every posted rx buffer and pending tx chain to its pool and frees the ring
 * arrays; the pools stay. */
void myri_nic_drop_buffers(struct myri_nic *nic);

/* Watchdog (watchdog.c, §8.5). */
void myri_watchdog_init(struct myri_nic *nic, uint32_t period_ms);
/* Slow path, called when rings.poll_countdown reaches 0: checks the NIC once per period and
 * recovers it after a reboot. Returns 0 when the NIC is up, -ENETDOWN otherwise. */
int myri_watchdog_tick(struct myri_nic *nic);
/* Recovery (§8.5): close if the NIC still runs, reload, reset, open on the same pools. */
int myri_watchdog_recover(struct myri_nic *nic, enum myri_wd_reason why);
/* Asks for a reset at the next data-path call (the receive rings are out of step). */
void myri_watchdog_request(struct myri_nic *nic, enum myri_wd_reason why);

/* Firmware loading (fw_load.c) */
int mcp_fw_load_file(struct myri_nic *nic, const char *path);
int mcp_fw_adopt(struct myri_nic *nic);
int mcp_dummy_rdma(struct myri_nic *nic, bool enable);
int mcp_read_eeprom(struct myri_nic *nic);

#endif
