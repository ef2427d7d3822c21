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
	uint32_t last_tx_req, last_tx_done, last_pause;
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

/* A slice beyond 0 (§7.1, slices.c): its rings, its completion ring and status block in
 * one DMA region, its own receive pools (a queue's buffers are freed by its own thread),
 * Slice 0 is the NIC's own rings, intrq and pools. */
#define MYRI_MAX_SLICES 16u
#define SLICE_STATUS_OFF 0u /* its status block, then its completion ring */
#define SLICE_INTRQ_OFF 4096u
struct myri_slice {
	struct myri_rings rings;
	struct myrio_dma_region mem;
	struct myrio_pool *small_pool, *big_pool;
};

/* RSS (§7.3) as the port asked for it; the NIC's copy is written at every open. */
struct myri_rss {
	uint8_t key[40];
	uint8_t table[256];
	uint32_t table_size;
	uint32_t hash_type; /* SET_RSS_ENABLE d1 */
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
	bool pause; /* 802.3x flow control (§7.4): driver argument pause=, on by default */
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
	/* slices (slices.c): nq queues, slice s > 0 in extra[s - 1] */
	uint32_t nq_wanted; /* driver arg queues= / conf.nb_queues */
	uint32_t nq;
	bool multi_tx; /* a send ring per slice (§5.9) */
	struct myri_slice *extra;
	struct myri_rss rss;
	int vec_fd[MYRI_MAX_SLICES]; /* MSI-X vector of each slice with several; -1: polled */
};

/* The rings of queue q (< nq). */
static inline struct myri_rings *myri_queue_rings(struct myri_nic *nic, unsigned q)
{
	return q == 0 ? &nic->rings : &nic->extra[q - 1].rings;
}

/* Helpers the slices share with slice 0 (nic.c). */
int myri_nic_get_offset(struct myri_nic *nic, uint32_t op, uint32_t arg, uint32_t len,
			uint32_t *off);
int myri_nic_rx_pools(struct myri_nic *nic, struct myrio_pool **small, struct myrio_pool **big);
/* Hands a slice's posted buffers and pending chains back to their pools, frees its arrays. */
void myri_rings_drop(struct myri_rings *r);
int myri_nic_rings_setup(struct myri_nic *nic, unsigned s, struct myri_rings *r,
			 struct myrio_pool *small, struct myrio_pool *big);

/* Slices (slices.c), in the reset sequence and the open of §7.2. */
/* After SET_INTRQ_SIZE: GET_MAX_RSS_QUEUES, ENABLE_RSS_QUEUES, each slice's SET_INTRQ_DMA. */
int myri_slices_reset(struct myri_nic *nic);
/* Before ETHERNET_UP: each slice's rings filled and its status block; the RSS table, key
 * and hash type. */
int myri_slices_open(struct myri_nic *nic);
int myri_slices_write_rss(struct myri_nic *nic);
void myri_slices_drop_buffers(struct myri_nic *nic);
void myri_slices_release(struct myri_nic *nic);

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
