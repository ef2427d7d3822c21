/* SPDX-License-Identifier: BSD-3-Clause */
/* The watchdog of a port with several queues (§8.5, §7): each queue's thread looks at its
 * own slice, and a recovery resets the whole NIC while the other threads keep calling their
 * bursts, without a lock on the data path.
 *
 * Every burst runs inside its queue's gate (nic.h): the owner makes its sequence odd, then
 * reads the port's gate state; a recovery raises the halt, then waits until every other
 * sequence is even. Both sides store before they load, sequentially consistent, so either
 * the recovery sees the queue inside (and waits for its burst to end) or the queue sees the
 * halt (and its burst returns 0 without touching its rings). While the queues are held
 * out, the recovery owns the NIC and every ring's indices, but not the pools: a queue's
 * pools are its owner's (its received buffers are freed by its thread, unlocked). So the
 * recovery posts each ring's own buffers again (they were the NIC's, no pool is touched),
 * marks the rings for restart and lowers the halt with a new generation; each owner's next
 * burst sees the generation, hands back the few buffers that did not make a group of 8,
 * frees the sends that were pending (lost with the old NIC state, counted in
 * tx_lost_reset; TCP retransmits), tops its receive rings up, and goes on. A frame is
 * never sent twice: the NIC's send rings start empty after RESET. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mcp/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

#define PCI_COMMAND_MASTER 0x4
#define DOWN_WAIT_US 1000000u

int myri_gates_init(struct myri_nic *nic)
{
	nic->gates = aligned_alloc(64, sizeof(*nic->gates) * MYRI_MAX_SLICES);
	if (!nic->gates)
		return -ENOMEM;
	memset(nic->gates, 0, sizeof(*nic->gates) * MYRI_MAX_SLICES);
	atomic_init(&nic->gate_state, 0);
	atomic_init(&nic->recoverer, 0);
	atomic_init(&nic->wd_asked, WD_NONE);
	uint64_t next = nic->wd.period_ns ? myri_wd_now(nic) + nic->wd.period_ns : 0;
	for (unsigned q = 0; q < nic->nq; q++) {
		myri_queue_rings(nic, q)->poll_countdown = WD_CALLS;
		nic->gates[q].next_ns = next;
	}
	return 0;
}

void myri_gates_fini(struct myri_nic *nic)
{
	free(nic->gates);
	nic->gates = NULL;
}

/* After a reset the owner starts its look afresh: its send ring restarted from 0. */
static void look_snapshot(struct myri_gate *g, const struct myri_rings *r)
{
	g->last_tx_req = r->tx.pkt_req;
	g->last_tx_done = r->tx.pkt_done;
	g->last_rx_packets = r->rx_packets;
	g->last_bad_completion = r->rx_bad_completion;
}

/* The owner's part of a recovery, at its first burst after it: what needs its pools. */
static void rings_restart(struct myri_nic *nic, struct myri_rings *r)
{
	rx_ring_release_leftover(&r->small);
	rx_ring_release_leftover(&r->big);
	struct myri_tx_ring *t = &r->tx;
	r->tx_lost_reset += t->pkt_req - t->pkt_done;
	tx_ring_release(t);
	t->req = t->done = t->pkt_req = t->pkt_done = t->multi_end = 0;
	if (nic->up) {
		rx_ring_refill(&r->small);
		rx_ring_refill(&r->big);
	}
	r->restart = false;
}

bool myri_gate_enter_slow(struct myri_nic *nic, unsigned q, uint32_t state)
{
	struct myri_gate *g = &nic->gates[q];
	if (state & MYRI_GATE_HALTED) {
		myri_gate_leave(nic, q);
		return false;
	}
	struct myri_rings *r = myri_queue_rings(nic, q);
	if (r->restart)
		rings_restart(nic, r);
	look_snapshot(g, r);
	g->seen = state;
	return true;
}

void myri_gates_grace(struct myri_nic *nic, unsigned self)
{
	uint32_t seq[MYRI_MAX_SLICES];
	for (unsigned q = 0; q < nic->nq; q++)
		seq[q] = atomic_load_explicit(&nic->gates[q].seq, memory_order_seq_cst);
	for (unsigned q = 0; q < nic->nq; q++)
		while (q != self && (seq[q] & 1) &&
		       atomic_load_explicit(&nic->gates[q].seq, memory_order_acquire) == seq[q])
			sched_yield();
}

/* Posts the buffers the ring held (posted, not yet consumed) again from slot 0, in their
 * order, as groups of 8 (§4.3); the rest (fewer than 8) stays in info[] after posted for
 * the owner (leftover). The NIC forgot them at RESET; nobody else has them. */
int myri_rx_ring_repost(struct myri_rx_ring *ring)
{
	/* with what an earlier recovery left over, if its owner has not run since */
	uint32_t n = ring->posted - ring->done + ring->leftover, entries = ring->mask + 1;
	if (n > entries) /* never: the driver's own indices */
		n = 0;
	struct myrio_pkt **held = malloc(sizeof(*held) * (n ? n : 1));
	if (!held)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		held[i] = ring->info[(ring->done + i) & ring->mask];
	memset(ring->info, 0, sizeof(*ring->info) * entries);
	ring->posted = ring->done = 0;
	uint32_t groups = n / RX_GROUP;
	for (uint32_t g = 0; g < groups; g++)
		rx_ring_post_group(ring, held + g * RX_GROUP);
	ring->leftover = n - groups * RX_GROUP;
	memcpy(ring->info + ring->posted, held + groups * RX_GROUP, sizeof(*held) * ring->leftover);
	mmio_wmb();
	free(held);
	return 0;
}

/* ETHERNET_DOWN and its status update (§8.4), read from slice 0's block without handing
 * sent buffers back (that is the owner's, at its restart). Returns -ETIMEDOUT when the NIC
 * does not answer the command. */
static int down_quietly(struct myri_nic *nic)
{
	struct myri_rings *r = &nic->rings;
	int rc = mcp_cmd(&nic->cmd, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL);
	for (unsigned waited = 0; rc == 0 && waited < DOWN_WAIT_US; waited += 100) {
		volatile struct mcp_irq_data *s = r->status;
		if (s->valid) {
			dma_rmb();
			uint8_t down = s->link_down;
			s->valid = 0;
			mmio_wmb();
			mmio_write32(r->claim1, 0, MCP_CLAIM_VALUE);
			if (down)
				break;
		}
		nic->bus->ops->delay_us(nic->bus, 100);
	}
	nic->up = false;
	return rc;
}

/* Holds every queue but q out of its rings: raises the halt, waits for the bursts inside
 * to end (a burst is short; a look may wait WD_CONFIRM_NS). */
static uint32_t halt_queues(struct myri_nic *nic, unsigned q)
{
	uint32_t st =
	    atomic_fetch_or_explicit(&nic->gate_state, MYRI_GATE_HALTED, memory_order_seq_cst);
	for (unsigned i = 0; i < nic->nq; i++)
		while (i != q &&
		       (atomic_load_explicit(&nic->gates[i].seq, memory_order_seq_cst) & 1))
			sched_yield();
	return st & ~MYRI_GATE_HALTED;
}

/* The NIC reset under held queues: firmware (after a function-level reset if the firmware
 * stopped answering), RESET and open with every ring's own buffers (keep_rings). */
static int recover_held(struct myri_nic *nic, enum myri_wd_reason why)
{
	struct myri_watchdog *wd = &nic->wd;
	uint32_t cmdreg;
	if (myri_wd_nic_gone(nic->bus, &cmdreg)) {
		log_err("%s: the NIC does not answer (reads complete with all ones: gone from the "
			"bus?): the port is down until it answers again",
			nic->bus->name);
		wd->gone = true;
		nic->up = false;
		return -ENETDOWN;
	}
	wd->gone = false;
	myri_wd_log_reason(nic, why);
	if (why != WD_REBOOTED && why != WD_GONE && nic->up)
		myri_wd_reset_hung(nic, down_quietly(nic));
	nic->up = false;
	nic->keep_rings = true;
	int rc = myri_watchdog_reload(nic);
	nic->keep_rings = false;
	return rc;
}

int myri_queues_recover(struct myri_nic *nic, unsigned q, enum myri_wd_reason why)
{
	uint32_t none = 0;
	if (!atomic_compare_exchange_strong(&nic->recoverer, &none, q + 1))
		return 0; /* another queue's thread recovers: this one's next burst waits */
	uint32_t gen = halt_queues(nic, q);
	mcp_cmd_lock(&nic->cmd);
	struct myri_watchdog *wd = &nic->wd;
	int rc = recover_held(nic, why);
	for (unsigned i = 0; i < nic->nq; i++) {
		struct myri_rings *r = myri_queue_rings(nic, i);
		r->restart = true;
		r->poll_countdown = rc == 0 ? WD_CALLS : 1; /* down: every burst looks */
	}
	atomic_store(&nic->wd_asked, WD_NONE);
	wd->last_reset_ns = myri_wd_now(nic);
	if (rc < 0 && !wd->gone) {
		wd->failures++;
		log_err("%s: recovery failed (%s); the port stays down and the watchdog retries "
			"in %llu ms",
			nic->bus->name, strerror(-rc),
			(unsigned long long)(wd->period_ns / 1000000));
	} else if (rc == 0) {
		wd->resets++;
		log_info("%s: recovered (%llu resets so far)", nic->bus->name,
			 (unsigned long long)wd->resets);
	}
	mcp_cmd_unlock(&nic->cmd);
	atomic_store_explicit(&nic->gate_state, gen + 2, memory_order_seq_cst);
	atomic_store(&nic->recoverer, 0);
	return rc < 0 ? -ENETDOWN : 0;
}

/* The pause counter of the NIC (slice 0's status block, §6.1), as last written. */
static uint32_t fw_pause(const struct myri_nic *nic)
{
	return be32(nic->rings.status->dropped_pause);
}

/* Down after a failed recovery (or gone): every queue's look retries once a period (one
 * of them recovers). */
static int look_down(struct myri_nic *nic)
{
	uint32_t cmdreg;
	if (nic->wd.gone) {
		mcp_cmd_lock(&nic->cmd);
		bool gone = myri_wd_nic_gone(nic->bus, &cmdreg);
		mcp_cmd_unlock(&nic->cmd);
		return gone ? -1 : WD_GONE;
	}
	return WD_REBOOTED;
}

enum myri_wd_reason myri_queue_look(struct myri_nic *nic, unsigned q, bool *hold)
{
	struct myri_gate *g = &nic->gates[q];
	struct myri_rings *r = myri_queue_rings(nic, q);
	struct myri_watchdog *wd = &nic->wd;
	*hold = !nic->up;
	r->poll_countdown = nic->up ? WD_CALLS : 1;
	if (!wd->period_ns)
		return WD_NONE;
	uint64_t now = myri_wd_now(nic);
	int asked = atomic_load_explicit(&nic->wd_asked, memory_order_relaxed);
	if (nic->up && !asked && r->rx_bad_completion != g->last_bad_completion)
		asked = WD_BAD_COMPLETION;
	if (nic->up && asked) {
		if (wd->last_reset_ns && now - wd->last_reset_ns < WD_RESET_GAP_NS) {
			r->poll_countdown = 1; /* until then this queue receives nothing */
			*hold = true;
			return WD_NONE;
		}
		return (enum myri_wd_reason)asked;
	}
	if (now < g->next_ns)
		return WD_NONE;
	g->next_ns = now + wd->period_ns;
	if (!nic->up) {
		int v = look_down(nic);
		return v < 0 ? WD_NONE : (enum myri_wd_reason)v;
	}
	status_poll(r);
	uint32_t pause = fw_pause(nic);
	bool pending = r->tx.pkt_req != r->tx.pkt_done;
	bool tx_moved = r->tx.pkt_done != g->last_tx_done;
	bool paused = pause != g->last_pause;
	bool was_pending = g->last_tx_req != g->last_tx_done;
	bool stuck = pending && was_pending && !tx_moved && !paused;
	bool idle = !pending && !tx_moved && r->rx_packets == g->last_rx_packets;
	look_snapshot(g, r);
	g->last_pause = pause;
	uint64_t q0_updates = counter_read(&nic->rings.irq_updates);
	bool q0_took = q0_updates - g->last_q0_updates >= 2;
	g->last_q0_updates = q0_updates;
	if (tx_moved)
		g->stall_warned = false;
	if (pending && !tx_moved && paused && !g->stall_warned) {
		log_warn("%s: queue %u's send ring is held by pause frames: check the link "
			 "partner",
			 nic->bus->name, q);
		g->stall_warned = true;
	}
	if (q == 0 && r->snap.rdma_tags_available < MCP_RDMA_TAGS) {
		uint32_t lost = MCP_RDMA_TAGS - r->snap.rdma_tags_available;
		wd->rdma_tags_lost += lost;
		log_warn("%s: %u of %u RDMA tags lost: DMA reads of send buffers failed (an IOMMU "
			 "fault? check the kernel log); those frames are dropped",
			 nic->bus->name, lost, MCP_RDMA_TAGS);
		return WD_RDMA_TAGS;
	}
	if (!stuck && !idle)
		return WD_NONE;
	uint32_t cmdreg;
	mcp_cmd_lock(&nic->cmd); /* config space: one user at a time */
	bool gone = myri_wd_nic_gone(nic->bus, &cmdreg);
	mcp_cmd_unlock(&nic->cmd);
	if (gone || !(cmdreg & PCI_COMMAND_MASTER))
		return WD_REBOOTED; /* the recovery tells a NIC gone from a rebooted one */
	/* The pause counter is slice 0's (§6.1), carried by slice 0's status updates, which
	 * queue 0's thread takes. While one waits there untaken and that thread took fewer
	 * than two since the last look (it is away), the counter read above may be older than
	 * that look: a ring held by the peer's pause frames cannot be told from a stuck one,
	 * and the look waits for a period when it can. Two taken mean one was written after
	 * the last look. (An update waiting is the common case on a busy queue 0: waiting on
	 * that alone, a stuck ring was not reset in 60 s.) */
	bool pause_unseen = q != 0 && nic->rings.status->valid != 0 && !q0_took;
	if (!stuck || pause_unseen || !myri_wd_tx_still_stuck(nic, r)) {
		look_snapshot(g, r); /* it moved: the next look starts from here */
		return WD_NONE;
	}
	log_warn("%s: queue %u's send ring made no progress", nic->bus->name, q);
	return WD_TX_STUCK;
}
