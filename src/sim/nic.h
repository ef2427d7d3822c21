/* SPDX-License-Identifier: BSD-3-Clause */
/* The device model's private state: one struct per NIC, per cable, per world, shared by
 * the files of src/sim/ (one concern each). Nothing here is visible to the driver, which
 * sees only BAR0, config space, DMA into its registered memory and the irq eventfd.
 */
#ifndef MYRIO_SIM_NIC_H
#define MYRIO_SIM_NIC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/host.h"
#include "sim/model.h"
#include "sim/timing.h"
#include "util/csum.h"
#include "util/toeplitz.h"
#include "util/tso_segment.h"

/* ---- BAR0 layout (§1.3); offsets marked "model" are firmware-chosen (returned by
 * GET_*_OFFSET) and therefore the model's own choice. ---- */
#define SIM_BAR0_LEN (16u << 20)
#define SIM_HDR_PTR_OFF 0x3Cu
#define SIM_STAGING_OFF 0x100000u
#define SIM_SRAM_SIZE 0x1DFF00u
#define SIM_STRINGS_OFF 0x1DFE00u
#define SIM_STRINGS_LEN 256u
#define SIM_CMD_OFF 0xF80000u
#define SIM_HANDOFF_OFF 0xFC0000u
#define SIM_DUMMY_RDMA_OFF 0xFC01C0u
#define SIM_SEND_GO_OFF 0x380000u
#define SIM_SEND_STOP_OFF 0x3C0000u
/* model: control area in SRAM above any image we accept (images end below it) */
#define SIM_CTRL_OFF 0xC0000u
#define SIM_SEND_RING_OFF 0xC0000u  /* up to 4096 x 16 bytes */
#define SIM_SMALL_RING_OFF 0xD0000u /* up to 4096 x 8 bytes */
#define SIM_BIG_RING_OFF 0xD8000u   /* up to 4096 x 8 bytes */
#define SIM_CLAIM_OFF 0xE0000u	    /* claim0/claim1 of slice s at +8s */
#define SIM_DEASSERT_OFF 0xE0100u
#define SIM_COAL_OFF 0xE0140u
#define SIM_RSS_TABLE_OFF 0xE0200u /* 256 one-byte entries */
#define SIM_RSS_KEY_OFF 0xE0300u
#define SIM_MAX_RING 4096u
/* model: the rings of slice s > 0, each slice a block of send, small and big ring (the same
 * layout as slice 0's at SIM_SEND_RING_OFF), above the doorbell windows */
#define SIM_SLICE_RINGS_OFF 0x400000u
#define SIM_SLICE_STRIDE 0x20000u
#define SIM_DOORBELL_STRIDE 64u /* SEND_GO/SEND_STOP of slice s at +64s (§1.3) */
#define SIM_RSS_KEY_LEN 40u
/* conf.high_rings: the rings and interrupt words above, moved up by this much: above 2 MiB,
 * where a board's doorbell windows are (the offsets are the firmware's choice, §3.3). */
#define SIM_HIGH_RINGS_SHIFT 0x200000u
#define SIM_IMAGE_MAX (SIM_CTRL_OFF - 8u) /* largest image the model hands off */

/* A write-only trigger word the host has not written since the model consumed it reads
 * back as this (raw, as stored). Any host store, even of 0, changes it (docs). */
#define SIM_POISON 0x5EC0DE5Au

/* ---- command results (§3.2) ---- */
enum {
	SIM_OK = 0,
	SIM_ERR_UNKNOWN = 1,
	SIM_ERR_RANGE = 2,
	SIM_ERR_BUSY = 3,
	SIM_ERR_MULTICAST = 9,
	SIM_ERR_UNALIGNED = 10,
	SIM_ERR_I2C_ABSENT = 13,
};

/* ---- status block counters (§6.1), host order inside the model ---- */
struct sim_counters {
	uint32_t dropped_pause, dropped_unicast_filtered, dropped_bad_crc32, dropped_bad_phy;
	uint32_t dropped_multicast_filtered, dropped_link_overflow;
	uint32_t dropped_link_error_or_filtered, dropped_runt, dropped_overrun;
	uint32_t dropped_no_small_buffer, dropped_no_big_buffer;
};

/* Model-side counters and diagnostics, for tests and the daemon's statistics. */
struct sim_nic_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t rx_down;      /* frames that arrived while ETHERNET_UP was not in force */
	uint64_t tx_link_down; /* frames sent into a cable whose link is down */
	uint64_t tx_runts;     /* frames sent shorter than 60 bytes (the NIC never pads) */
	uint64_t tx_invalid;   /* chains that broke a rule of §5.3-§5.6 (dropped) */
	uint64_t tx_tso_segments;
	uint64_t rx_misaligned; /* rx buffers breaking the §4.4 alignment rules */
	uint64_t dma_faults;	/* accesses to IOVAs not registered with the model */
	uint64_t cmds, cmd_errors;
	uint64_t irqs; /* status-block DMAs (interrupts raised) */
	uint64_t handoffs, handoffs_refused;
	uint64_t completions_bad; /* injected bad completions */
	uint64_t pause_timeouts;  /* the peer stopped refilling for PAUSE_MAX_NS: dropping */
	uint64_t tx_read_faults;  /* send-buffer reads that failed, each losing an RDMA tag */
	uint64_t intx_asserts;	  /* updates that asserted INTx: MSI off, INTX_DISABLE clear */
	uint64_t intx_held;	  /* updates held back: INTx mode, the deassert never came */
};

/* ---- DMA table: the model's IOMMU (dma_table.c) ---- */
struct sim_dma_ent {
	uint64_t iova, end; /* [iova, end) */
	uint8_t *va;
};
struct sim_dma_table {
	uint64_t gen; /* never reused, unlike the table's address */
	unsigned n;
	struct sim_dma_ent e[];
};
struct sim_dma {
	_Atomic(struct sim_dma_table *) table; /* immutable once published, sorted by iova */
	pthread_mutex_t wlock;		       /* writers (map/unmap) */
	/* model-thread only: the last hit, checked against the table it came from */
	uint64_t cache_gen; /* 0: empty */
	struct sim_dma_ent cache;
	uint64_t next_gen; /* writers */
};

/* ---- cables (cable.c) ---- */
struct sim_frag {
	const uint8_t *p;
	uint32_t len;
};
/* A frame in flight: gather list over the sender's memory (never written) plus the
 * checksum the sender's NIC inserts (§5.5, §5.6), applied to the receiver's copy. That
 * checksum covers the sender's bytes [sum_from, len) and sum_seed (TSO: the pseudo-header);
 * whoever reads those bytes sums them on the way (the receiving NIC's copy, which also
 * takes its completion sum, §4.6; an endpoint's linearisation), so that the payload is
 * read once: sim_frame_csum_field turns that sum into the field's value. */
struct sim_frame {
	const struct sim_frag *frags;
	unsigned nfrags;
	uint32_t len;
	int32_t patch_off; /* -1: no checksum inserted; else where, BE16, after sum_from */
	uint32_t sum_from;
	uint16_t sum_seed;
	bool sum_tso; /* TSO's TCP checksum: ~sum, 0 kept; else §5.5's rule (0 as 0xFFFF) */
	bool bad_crc;
};

/* The value the sender's NIC stores at patch_off, from the sum of bytes [sum_from, len). */
static inline uint16_t sim_frame_csum_field(const struct sim_frame *f, uint16_t sum)
{
	uint16_t s = csum16_add(sum, f->sum_seed);
	return f->sum_tso ? (uint16_t)~s : csum_tx_value(s);
}

struct sim_cable;
struct sim_wire { /* one direction of a cable */
	struct sim_cable *cable;
	struct sim_nic *dst_nic; /* or */
	struct sim_endpoint *dst_ep;
	uint64_t t_free; /* ps: the wire is busy until then */
	uint64_t t_queued; /* ps: a posted frame waits for the wire until then (tx.c) */
	uint8_t *stash;	 /* one frame held back by a reorder fault */
	uint32_t stash_len;
	bool stashed;
	uint64_t stash_at;
	uint64_t frames, lost, duplicated, reordered, corrupted, down_drops;
};
struct sim_cable {
	struct myrio_sim *world;
	struct sim_nic *a, *b; /* b is NULL for an endpoint cable */
	struct sim_endpoint *ep;
	struct sim_wire ab, ba; /* a->b (or a->ep) and b->a (or ep->a) */
	uint64_t link_bps;	/* 0 = unlimited */
	struct myrio_sim_faults faults;
	bool faults_on;
	uint64_t rng;
	_Atomic bool admin_up; /* myrio_sim_set_link */
	bool flapped_down;
	uint64_t next_flap_ns;
	bool up;	   /* effective, as last reported to the NICs */
	uint8_t *scratch;  /* gather buffer for endpoints and faults */
	unsigned ep_quiet; /* endpoint polls that found nothing, for back-off */
	_Atomic(struct myrio_sim_faults *) new_faults; /* set_faults from another thread */
};

/* ---- the NIC ---- */
struct sim_fw { /* what the running "firmware" image selects (§2.1) */
	char version[128];
	unsigned major, minor, tiny;
	bool unaligned, rss, multi_tx;
	bool eeprom; /* the power-on firmware, not a handed-off image */
	bool rx_filter_bug; /* EEPROM 1.4.4-1.4.11: broadcasts dropped unless ALLMULTI */
	bool misreads; /* an aligned image behind an unaligned root complex (conf.unaligned_rc) */
};

struct sim_rxring {
	uint32_t off, mask, cons;
};

/* One slice (§7.1): its rings, completion ring, status block and interrupt state (§6.5).
 * Slice 0 always exists; the RSS firmware runs up to SIM_MAX_SLICES. */
#define SIM_MAX_SLICES 16u
struct sim_slice {
	struct sim_rxring small, big;
	uint32_t tx_off; /* its send ring in BAR0 */
	uint32_t tx_cons, send_done;
	bool tx_active;	     /* multi-TX: between SEND_GO and SEND_STOP (§5.9) */
	bool tx_hung;	     /* SIM_FAULT_TX_HANG of this slice: stopped until CMD_RESET */
	uint64_t tx_idle_at; /* ns: its send ring was last seen empty (tx.c pacing) */
	bool intrq_dma_set;
	uint64_t intrq_iova;
	uint32_t intrq_idx;
	uint32_t *intrq_va; /* the ring, translated once per DMA-table generation */
	uint64_t intrq_gen;
	bool stats_set;
	uint64_t stats_iova;
	uint32_t stats_host_size; /* the host's struct size; valid is its last byte */
	bool armed, token_at_nic;
	uint32_t rx_new; /* completions written since the rx token left */
	bool send_pending;
	uint64_t pending_since; /* ns; coalescing starts here */
	bool pending;
	int irq_fd; /* MSI-X vector s > 0 (slice 0's is the NIC's irq_fd); -1: none wired */
};

struct sim_nic {
	struct myrio_sim *world;
	unsigned index;
	char name[32];
	uint8_t eeprom_mac[6];
	uint8_t *bar; /* BAR0, shared memory */
	uint32_t rings_at; /* 0, or SIM_HIGH_RINGS_SHIFT (conf.high_rings) */
	int bar_fd;
	int irq_fd;
	int wake_fd; /* the attached host's own way to wake the model thread (wake.c) */
	_Atomic bool attached;
	_Atomic bool halted; /* the model loop skips the NIC (detach, reboot in progress) */
	uint64_t booted_at;  /* ns: the firmware is still booting until then (conf.boot_ms) */
	uint32_t boot_hdr;   /* the header pointer it writes when it has booted */

	/* config space (cfgspace.c) */
	uint8_t cfg[256];
	uint32_t vs_mode, vs_addr, vs_data;
	uint32_t reboot_status;

	struct sim_fw fw;
	struct sim_dma dma;
	struct sim_host_dma host_dma; /* host.h: map is NULL unless hosted */
	struct sim_cable *cable;
	struct sim_wire *out; /* the direction this NIC transmits into */

	/* ---- state CMD_RESET forgets (§2.5) ---- */
	bool running; /* ETHERNET_UP in force */
	/* ETHERNET_DOWN came while sends were posted: it is answered once they are out (cmd.c),
	 * at down_resp; no other command is taken meanwhile */
	bool down_pending;
	uint64_t down_resp, down_until;
	uint32_t rx_entries, tx_entries;
	uint32_t intrq_bytes, intrq_mask; /* entries - 1 */
	bool intrq_size_set;
	uint32_t small_size, big_size, always_n;
	uint32_t mtu;
	uint8_t mac[6];
	bool promisc, allmulti, flow_control, relax_align;
	uint8_t mcast[SIM_MCAST_MAX][6];
	unsigned n_mcast, mcast_capacity; /* capacity: sim_nic_set_mcast_capacity, 0 = MAX */
	bool max_rss_queried;
	unsigned slices;
	bool multi_tx; /* ENABLE_RSS_QUEUES bit 1: a send ring per slice, served between its
			* GO and STOP */
	bool rss_enabled;
	uint32_t rss_table_size, rss_hash;
	uint32_t tso_mode, throttle;
	const struct sim_timing *timing; /* the board's own delays and PCIe cap (timing.h) */
	uint32_t tx_boundary;
	bool dummy_rdma_on;
	uint64_t dummy_rdma_iova;
	uint64_t dummy_rdma_next; /* ns: the next periodic read of the dummy target */
	uint64_t dummy_rdma_reads;
	struct sim_slice sl[SIM_MAX_SLICES];
	bool vec_per_slice; /* ENABLE_RSS_QUEUES bit 0: slice s raises MSI-X vector s */
	/* the key of the last RSS_KEY_UPDATED (or the default) as its lookup table, which a
	 * firmware would precompute too: a frame's hash is 12 lookups, not 96 key shifts */
	struct toeplitz_table rss_tt;
	uint32_t rdma_tags; /* DMA-read tags left; each failed send-buffer read loses one */
	struct sim_counters ctr;
	/* interrupts / status block (irq.c, §6.5) */
	bool stats_pending;
	uint8_t link_down_events;
	bool intx_wait;	 /* INTx mode: no update until the host writes the deassert word */
	bool intx_line;	 /* INTx asserted on the wire (sim_nic_intx_line) */
	bool intx_held;	 /* an update is due but waits for the deassert (counted once) */
	uint32_t link_state;		  /* 0 down, 1 up (what the status block reports) */
	uint32_t stats_interval_us;	  /* SET_STATS_INTERVAL; 0 = counters only with events */
	uint64_t next_stats_check;	  /* ns */
	struct sim_counters ctr_reported; /* as of the last stats_updated DMA */
	/* transmit pacing and 802.3x pause from the peer */
	uint64_t paused_since, pause_gave_up_at;
	uint64_t pause_frame_at; /* the last PAUSE frame counted while held */
	bool paused;
	/* i2c (SFP+ EEPROM) */
	uint64_t i2c_busy_until;
	uint8_t sfp[256];

	/* fault injection (model.h) */
	bool fault_cmd_timeout;
	bool fault_cmd_error;
	uint32_t fault_cmd_error_val;
	bool fault_bad_completion;
	uint32_t fault_bad_completion_len;
	bool fault_unaligned;
	bool fault_tx_hang; /* send engine stopped until CMD_RESET */
	uint32_t fault_tx_read_fail; /* send-buffer reads left to fail (SIM_FAULT_TX_READ) */
	bool fault_hdr_ptr;	     /* SIM_FAULT_HDR_PTR pending: the next attach's pointer */
	uint32_t fault_hdr_ptr_val;
	_Atomic bool removed; /* off the bus: nothing runs, config space reads all ones */
	bool removed_vfio;    /* ...but the IDs and command register read as VFIO's copies */

	struct sim_nic_stats st;
	uint8_t *scratch;	/* 64 KiB + headers: gather buffer for TSO and endpoints */
	/* The TSO request being put on the wire, one segment at a time (tx_tso.c): headers
	 * gathered into scratch, payload read where the host put it (pl, from cursor pl_i,
	 * pl_off); next < segs while segments are left. The payload is kept as IOVAs and
	 * translated for every segment: the host may unmap it while the request waits for
	 * the wire (a PAUSE), and its memory must not be read after that. */
	struct sim_tso {
		bool active;
		uint32_t idx;	/* its first descriptor */
		unsigned slice; /* whose send ring holds it: the engine finishes it first */
		struct tso_layout l; /* its headers, and what every segment's sums share */
		uint32_t payload, next;
		struct sim_tso_piece {
			uint64_t iova;
			uint32_t len;
		} pl[64];
		unsigned npl, pl_i;
		uint32_t pl_off;
	} tso;
	unsigned log_budget[4]; /* rate-limits diagnostics, per enum sim_diag */
};

/* ---- the world ---- */
#define SIM_MAX_NICS 64
struct myrio_sim {
	struct myrio_sim_conf conf;
	struct sim_nic *nics[SIM_MAX_NICS];
	unsigned n_nics;
	struct sim_cable *cables[SIM_MAX_NICS];
	unsigned n_cables;
	uint64_t now_ns; /* stepped: virtual; threaded: refreshed per iteration */
	uint64_t due_ns; /* the earliest sim_world_due of the last iteration (UINT64_MAX: none) */
	uint64_t t0_ns;
	pthread_t thread;
	bool thread_running;
	_Atomic bool stop;
	_Atomic uint64_t epoch;	   /* completed loop iterations (threaded) */
	_Atomic uint32_t *sleeping; /* threaded: the wake page's word (model.h) */
	_Atomic uint64_t sleeps;    /* threaded: the thread's idle sleeps (sim_world_sleeps) */
	int wake_page_fd, wake_fd;  /* threaded: -1 until sim_world_start */
	pthread_mutex_t wake_lock;  /* the NICs' wake_fd against the model thread's sleep */
	pthread_mutex_t step_lock; /* stepped: one stepping caller at a time */
	bool step_warned;	   /* myrio_sim_step on a threaded world: said once */
	struct sim_irq_kick *kick; /* hosts in other processes: irq_kick.c, else NULL */
};

/* Work falls due at t (the world's ns) that no host will post: a frame waiting for the wire,
 * a coalesced interrupt. The model thread's idle sleep ends by then (world.c). */
static inline void sim_world_due(struct myrio_sim *w, uint64_t t)
{
	if (t < w->due_ns)
		w->due_ns = t;
}

/* ---- internal functions, by file ---- */
/* wake.c: the threaded world's sleep (model.h: sim_world_sleeping) */
int sim_wake_open(struct myrio_sim *w);
void sim_wake_close(struct myrio_sim *w);
void sim_wake_wait(struct myrio_sim *w, long timeout_ns);
int sim_wake_attach(struct sim_nic *nic);
void sim_wake_detach(struct sim_nic *nic);
/* nic.c */
/* The EEPROM address of a world's index-th NIC when none is given (00:60:dd:4d:...). */
void sim_nic_default_mac(unsigned index, uint8_t mac[6]);
int sim_nic_new(struct myrio_sim *w, unsigned index, const char *name, const uint8_t mac[6],
		struct sim_nic **out);
void sim_nic_free(struct sim_nic *nic);
unsigned sim_nic_poll(struct sim_nic *nic, uint64_t now);
void sim_nic_power_on(struct sim_nic *nic);
void sim_nic_logical_reset(struct sim_nic *nic);
/* Diagnostics are rate-limited per kind, so a flood of one hides no other. */
enum sim_diag { SIM_DIAG_DMA, SIM_DIAG_TX, SIM_DIAG_RX, SIM_DIAG_CTRL };
bool sim_nic_ratelimit(struct sim_nic *nic, enum sim_diag kind);
void sim_nic_get_stats(const struct sim_nic *nic, struct sim_nic_stats *st);
void sim_nic_get_counters(const struct sim_nic *nic, struct sim_counters *c);
void sim_nic_link_changed(struct sim_nic *nic, bool up);

/* sram.c */
int sim_sram_create(struct sim_nic *nic);
void sim_sram_destroy(struct sim_nic *nic);
void sim_sram_power_on(struct sim_nic *nic);
void sim_sram_write_strings(struct sim_nic *nic);
void sim_sram_init_rings(struct sim_nic *nic);
void sim_sram_gone(struct sim_nic *nic);
static inline uint32_t sim_rd32(const struct sim_nic *nic, uint32_t off) /* BE -> host */
{
	return __builtin_bswap32(
	    __atomic_load_n((const uint32_t *)(nic->bar + off), __ATOMIC_ACQUIRE));
}
static inline uint32_t sim_rd32_raw(const struct sim_nic *nic, uint32_t off)
{
	return __atomic_load_n((const uint32_t *)(nic->bar + off), __ATOMIC_ACQUIRE);
}
static inline void sim_wr32(struct sim_nic *nic, uint32_t off, uint32_t host_val)
{
	__atomic_store_n((uint32_t *)(nic->bar + off), __builtin_bswap32(host_val),
			 __ATOMIC_RELEASE);
}
static inline void sim_wr32_raw(struct sim_nic *nic, uint32_t off, uint32_t raw)
{
	__atomic_store_n((uint32_t *)(nic->bar + off), raw, __ATOMIC_RELEASE);
}

/* The command, handoff and dummy-RDMA blocks are 64 bytes each, taken when the host's
 * store to their last word replaced the poison the model left there. */
static inline bool sim_block_written(const struct sim_nic *nic, uint32_t block_off)
{
	return sim_rd32_raw(nic, block_off + 60) != SIM_POISON;
}

/* handoff.c */
unsigned sim_handoff_poll(struct sim_nic *nic);
void sim_fw_adopt_eeprom(struct sim_nic *nic);

/* cmd.c */
unsigned sim_cmd_poll(struct sim_nic *nic, uint64_t now);
/* An ETHERNET_DOWN waiting for the posted sends: stops the NIC and answers once they are out. */
unsigned sim_cmd_down_poll(struct sim_nic *nic, uint64_t now);

/* dma_table.c */
int sim_dma_init(struct sim_dma *d);
void sim_dma_destroy(struct sim_dma *d);
void sim_dma_forget_all(struct sim_nic *nic);
uint8_t *sim_dma_slow(struct sim_nic *nic, uint64_t iova, uint32_t len, const char *what);
/* Host memory for [iova, iova+len), or NULL (logged and counted) when not registered. */
static inline uint8_t *sim_dma(struct sim_nic *nic, uint64_t iova, uint32_t len, const char *what)
{
	const struct sim_dma_table *t = atomic_load_explicit(&nic->dma.table, memory_order_acquire);
	if (__builtin_expect(t->gen == nic->dma.cache_gen && iova >= nic->dma.cache.iova &&
				 iova + len <= nic->dma.cache.end && iova + len >= iova,
			     1))
		return nic->dma.cache.va + (iova - nic->dma.cache.iova);
	return sim_dma_slow(nic, iova, len, what);
}
int sim_dma_write(struct sim_nic *nic, uint64_t iova, const void *src, uint32_t len,
		  const char *what);

/* slice.c: per-slice state after CMD_RESET, ring offsets, MSI-X vectors */
void sim_slices_reset(struct sim_nic *nic);
uint32_t sim_slice_rings(const struct sim_nic *nic, unsigned s); /* its send ring's offset */
void sim_slices_close_vectors(struct sim_nic *nic);
void sim_slice_clear_rings(struct sim_nic *nic, unsigned s);

/* rss.c: the slice a received frame goes to (§7.3) */
unsigned sim_rss_slice(struct sim_nic *nic, const uint8_t *fr, uint32_t len);
void sim_rss_reset(struct sim_nic *nic);
/* RSS_KEY_UPDATED: the key in SRAM becomes the one frames are hashed with. */
void sim_rss_key_updated(struct sim_nic *nic);

/* rx.c */
void sim_rx_frame(struct sim_nic *nic, const struct sim_frame *f);
/* True if `frames` frames of len bytes would find their buffers posted (pause model). */
bool sim_rx_has_room(struct sim_nic *nic, uint32_t len, uint32_t frames);

/* tx.c */
unsigned sim_tx_poll(struct sim_nic *nic, uint64_t now);
/* Whether a send ring the engine serves holds a posted chain, or a TSO request is under way. */
bool sim_tx_in_hand(const struct sim_nic *nic);

/* irq_kick.c: signalling and emptying an interrupt eventfd, never blocking */
void sim_irq_kick(struct myrio_sim *w, int fd);
void sim_irq_kick_close(struct myrio_sim *w);
void sim_irq_drain(int fd);
/* irq.c */
unsigned sim_irq_poll(struct sim_nic *nic, uint64_t now);
void sim_irq_event(struct sim_nic *nic, uint64_t now);
void sim_irq_reset(struct sim_nic *nic);

/* cfgspace.c */
void sim_cfg_power_on(struct sim_nic *nic);
bool sim_cfg_msi_enabled(const struct sim_nic *nic);
bool sim_cfg_msix_enabled(const struct sim_nic *nic);
bool sim_cfg_bus_master(const struct sim_nic *nic);
bool sim_cfg_intx_disabled(const struct sim_nic *nic);
void sim_cfg_enable_msi(struct sim_nic *nic);
void sim_nic_set_pcie_width(struct sim_nic *nic, unsigned width); /* x4 path tests */

/* cable.c */
int sim_cable_new(struct myrio_sim *w, struct sim_nic *a, struct sim_nic *b,
		  struct sim_endpoint *ep, struct sim_cable **out);
void sim_cable_free(struct sim_cable *c);
unsigned sim_cable_poll(struct sim_cable *c, uint64_t now);
bool sim_cable_busy(const struct sim_cable *c, uint64_t now); /* a frame on it or queued */
/* Sends a frame from nic into its cable; false if the wire is busy until later (paced). */
void sim_wire_send(struct sim_nic *from, const struct sim_frame *f, uint64_t now);
uint64_t sim_wire_ps(const struct sim_cable *c, uint32_t len); /* wire time in ps */

/* world.c */
void sim_world_sync(struct myrio_sim *w);
uint64_t sim_world_now(struct myrio_sim *w);

#endif
