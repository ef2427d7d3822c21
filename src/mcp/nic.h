/* SPDX-License-Identifier: BSD-3-Clause */
/* One Myri-10G NIC driven from user space: its bus, firmware, command channel, DMA memory and
 * the rings of slice 0. Bring-up follows the Linux driver's order (§8). */
#ifndef MYRIO_MCP_NIC_H
#define MYRIO_MCP_NIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcp/cmd.h"
#include "mcp/fw_header.h"
#include "mcp/multicast.h"
#include "mem/dma.h"
#include "myrio/port.h"
#include "rings/rings.h"
#include "util/counter.h"

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
	/* myrio_rx_verify found a buffer not as described: any queue's thread counts */
	_Atomic uint64_t rx_mismatches;
	/* written by the recovery (one at a time), read by the port's stats from any thread */
	counter64 rdma_tags_lost; /* RDMA tags the NIC reported lost, over all resets */
	counter64 resets;	  /* recoveries completed */
	counter64 failures;	  /* recovery attempts that failed */
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

/* A queue's gate, with several queues (watchdog_queues.c): the owner's bursts run inside it,
 * so the watchdog's recovery knows when no thread touches the rings. seq is odd while the
 * owner is inside (written by the owner only); seen is the port's gate state the owner
 * last went in under. One cache line each: the owners share nothing. The rest is the
 * owner's watchdog look at its own slice. */
struct myri_gate {
	_Atomic uint32_t seq;
	uint32_t seen;
	uint64_t next_ns; /* the owner's next look at its slice */
	uint32_t last_tx_req, last_tx_done, last_pause;
	uint64_t last_rx_packets, last_bad_completion;
	uint64_t last_q0_updates; /* slice 0's status updates queue 0 had taken */
	bool stall_warned;
} __attribute__((aligned(64)));

/* The port's gate state: generation << 1 | halted. A recovery raises halted, waits until no
 * owner is inside its gate, resets the NIC and lowers it with the next generation; each
 * owner then restarts its rings (the pools are the owner's) at its next burst. */
#define MYRI_GATE_HALTED 1u

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
	_Atomic bool up; /* written by bring-up and recovery, read by the port's stats anywhere */
	bool tso_mode0;	 /* SET_TSO_MODE 0 accepted: TSO offered (§5.6) */
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
	/* the watchdog with several queues (watchdog_queues.c) */
	struct myri_gate *gates;     /* one per queue */
	_Atomic uint32_t gate_state; /* generation << 1 | MYRI_GATE_HALTED */
	_Atomic uint32_t recoverer;  /* 1 + the queue whose thread recovers, 0: none */
	_Atomic int wd_asked;	     /* a reason asked for from any thread (rx mismatch) */
	bool keep_rings;	     /* open after a recovery with several queues: see there */
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
/* ETHERNET_DOWN and the wait only: the NIC stops touching the rings, buffers stay.
 * -ETIMEDOUT: the command went unanswered; -ETIME: no down status update came. */
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
/* Shared by the recoveries of one queue and of several (watchdog.c). */
#define WD_CALLS 256u /* data-path calls between looks at the clock */
#define WD_PERIOD_MS_DEFAULT 1000u
#define WD_RESET_GAP_NS 100000000ull /* resets the data path asks for: at most 10 per second */
uint64_t myri_wd_now(const struct myri_nic *nic);
const char *myri_wd_reason_text(enum myri_wd_reason why);
void myri_wd_log_reason(struct myri_nic *nic, enum myri_wd_reason why);
/* Config space or BAR0 reads all ones: the NIC is not on the bus. */
bool myri_wd_nic_gone(struct myrio_bus *bus, uint32_t *cmdreg);
/* The send ring of r seen stuck is given WD_CONFIRM_NS to move. */
bool myri_wd_tx_still_stuck(struct myri_nic *nic, struct myri_rings *r);
/* ETHERNET_DOWN went unanswered (down_rc -ETIMEDOUT): a hung firmware cannot take a new
 * image either, so the function is reset (FLR) where the bus has one, before the firmware
 * is loaded or adopted again. */
void myri_wd_reset_hung(struct myri_nic *nic, int down_rc);
/* PCI set-up, firmware, reset and open again on the same memory and pools. */
int myri_watchdog_reload(struct myri_nic *nic);
/* The same buffers of a ring posted again from slot 0 after a reset (watchdog_queues.c). */
int myri_rx_ring_repost(struct myri_rx_ring *ring);
/* Asks for a reset at the next data-path call (the receive rings are out of step). */
void myri_watchdog_request(struct myri_nic *nic, enum myri_wd_reason why);

/* The watchdog with several queues (watchdog_queues.c). Every queue's burst runs inside its
 * gate; a recovery holds them all out, so no lock is taken on the data path. */
int myri_gates_init(struct myri_nic *nic);
void myri_gates_fini(struct myri_nic *nic);
/* The gate's slow way in: the port is halted (returns false: the burst returns 0), or a
 * recovery happened since the owner's last burst (its rings restart, returns true). */
bool myri_gate_enter_slow(struct myri_nic *nic, unsigned q, uint32_t state);
static inline bool myri_gate_enter(struct myri_nic *nic, unsigned q)
{
	struct myri_gate *g = &nic->gates[q];
	/* store then load, both sequentially consistent: either the recovery sees this queue
	 * inside, or this queue sees the halt (watchdog_queues.c) */
	uint32_t seq = atomic_load_explicit(&g->seq, memory_order_relaxed);
	atomic_store_explicit(&g->seq, seq + 1, memory_order_seq_cst);
	uint32_t st = atomic_load_explicit(&nic->gate_state, memory_order_seq_cst);
	if (__builtin_expect(st == g->seen, 1))
		return true;
	return myri_gate_enter_slow(nic, q, st);
}
static inline void myri_gate_leave(struct myri_nic *nic, unsigned q)
{
	struct myri_gate *g = &nic->gates[q];
	uint32_t seq = atomic_load_explicit(&g->seq, memory_order_relaxed);
	atomic_store_explicit(&g->seq, seq + 1, memory_order_release);
}
/* Waits until every queue but `self` (MYRI_MAX_SLICES: none) has been outside its gate
 * once since the call: whatever they read before is no longer in use. */
void myri_gates_grace(struct myri_nic *nic, unsigned self);
/* The queue's slow path inside its gate, when its countdown reaches 0: the look at its
 * slice once a period. Returns a reason to recover (the caller leaves the gate first and
 * calls myri_queues_recover), else WD_NONE; *hold: the burst returns 0 (the port is down,
 * or a reset it asked for waits). */
enum myri_wd_reason myri_queue_look(struct myri_nic *nic, unsigned q, bool *hold);
/* Recovery of a port of several queues, from queue q's thread outside its gate. Returns 0
 * when the port is up, -ENETDOWN otherwise. */
int myri_queues_recover(struct myri_nic *nic, unsigned q, enum myri_wd_reason why);

/* Firmware loading (fw_load.c) */
int mcp_fw_load_file(struct myri_nic *nic, const char *path);
int mcp_fw_adopt(struct myri_nic *nic);
int mcp_dummy_rdma(struct myri_nic *nic, bool enable);
int mcp_read_eeprom(struct myri_nic *nic);

#endif
