/* SPDX-License-Identifier: BSD-3-Clause */
/* What became of the datagrams the stack took: a datagram is on the wire only once the NIC
 * reported it sent, and the NIC's send ring and the stack's batch, shared by every socket,
 * refuse sends (EAGAIN) while full, as the kernel's socket buffer does.
 *
 * - The last one-frame datagram taken keeps a reference of ours (myrio_pkt_ref, as TCP
 *   keeps a sent segment): the NIC's report of it drops the driver's, and the send ring is
 *   worked in order, so every datagram before it was reported too. A close waits for it,
 *   and the exit waits for it and, after a datagram of several fragments (sent by the
 *   stack's copying path, which has no such handle), for every transmit buffer to be back.
 * - A refused send marks the stack full: POLLOUT is not reported until frames moved from
 *   the batch to the ring after the refusal (the NIC completed sends: the stack's tx_frames
 *   counter moved by ROOM_FRAMES), or, when the transmit pool was empty, until a buffer is free again.
 *   The NIC's send report interrupts, so a poll or epoll asleep for POLLOUT wakes for it.
 * The engine lock is held throughout. */
#include <errno.h>
#include <string.h>

#include "preload.h"

/* Frames that must have left the batch for the NIC since a refusal before a one-frame
 * datagram fits again: its own place and the one the stack keeps for an ARP request. */
#define ROOM_FRAMES 2

static struct myrio_pkt *last_sent; /* a reference of ours, or NULL */
static bool fragments_after;	    /* a datagram of several frames was sent after it */
static struct myrio_pool *tx_pool;  /* the stack's transmit pool, once known */

static bool full;	     /* a send was refused; no room seen since */
static bool full_pool;	     /* ... for want of a transmit buffer (ENOBUFS) */
static uint64_t full_frames; /* the stack's tx_frames at the refusal */

static uint64_t tx_frames(struct myrio_stack *s)
{
	struct myrio_stack_stats st;
	myrio_stack_stats(s, &st);
	return st.tx_frames;
}

static void note_refused(struct myrio_stack *s, int rc)
{
	full = true;
	full_pool = rc == -ENOBUFS;
	full_frames = tx_frames(s);
}

int udp_tx_send(struct myrio_udp_sock *u, const void *buf, size_t len, uint32_t ip,
		uint16_t port)
{
	struct myrio_stack *s = engine_stack();
	if (!s)
		return -ENETDOWN;
	int rc;
	if (len > myrio_udp_max_payload(s)) {
		rc = myrio_udp_sendto_copy(u, buf, len, ip, port);
		fragments_after |= rc == 0;
	} else {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
		if (!p) {
			rc = -ENOBUFS;
		} else {
			memcpy(myrio_pkt_data(p), buf, len);
			p->len = (uint32_t)len;
			myrio_pkt_ref(p); /* ours, dropped when a later datagram takes its place */
			rc = myrio_udp_sendto(u, p, ip, port);
			if (rc < 0) {
				myrio_pkt_free(p);
				myrio_pkt_free(p);
			} else {
				if (last_sent)
					myrio_pkt_free(last_sent);
				last_sent = p;
				tx_pool = p->pool;
				fragments_after = false;
			}
		}
	}
	if (rc == -EAGAIN || rc == -ENOBUFS)
		note_refused(s, rc);
	return rc;
}

bool udp_tx_room(void)
{
	if (!full)
		return true;
	struct myrio_stack *s = engine_stack();
	if (!s)
		return true;
	if (full_pool) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
		if (!p)
			return false;
		myrio_pkt_free(p);
	} else if (tx_frames(s) - full_frames < ROOM_FRAMES) {
		return false;
	}
	full = false;
	return true;
}

/* Every transmit buffer is back but our reference (nothing left with the NIC). */
static bool pool_whole(void)
{
	if (!tx_pool) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(engine_stack());
		if (!p)
			return false;
		tx_pool = p->pool;
		myrio_pkt_free(p);
	}
	uint32_t ours = last_sent && last_sent->refcnt == 1;
	return tx_pool->free_top + ours >= tx_pool->count;
}

static bool reported(bool whole)
{
	if (last_sent && last_sent->refcnt > 1)
		return false;
	return !whole || !fragments_after || pool_whole();
}

bool udp_tx_wait(uint64_t deadline_ms, bool whole)
{
	static bool gave_up; /* once a wait ran out, the NIC is not answering: others do not */
	if (!engine_stack() || gave_up)
		return false;
	engine_progress(); /* the batch goes to the NIC */
	while (!reported(whole)) {
		if (engine_now_ms() >= deadline_ms) {
			preload_log("datagrams sent were still not reported sent by the NIC after "
				    "%u ms: they may be lost",
				    UDP_TX_WAIT_MS);
			gave_up = true;
			return false;
		}
		/* the NIC's report interrupts; a short timeout in case it came before the arm */
		if (engine_block(NULL, 0, 1, NULL) < 0 && errno != EINTR)
			return false;
		engine_progress();
	}
	return true;
}
