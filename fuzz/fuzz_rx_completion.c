/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: what the device writes into host memory on the data path, fed to the
 * driver's ring code (src/rings/) on plain memory: completion entries with any length,
 * checksum and position (§4.6), status blocks with any counters, link state and
 * send_done_count (§6.1, §6.5), interleaved with receive bursts, transmit bursts and the
 * application holding and releasing buffers.
 *
 * Invariants checked after every step: each delivered packet lies inside its pool's
 * buffer and no longer than the MTU allows; no buffer is lost or delivered twice (every
 * buffer of each pool is either free, posted in a ring, in the send ring, or held by the
 * "application"); the driver's ring indexes stay within the ring.
 *
 * Input: a sequence of operations, one opcode byte each followed by its arguments.
 */
#include <string.h>

#include "fuzz_common.h"
#include "bus/bus.h"
#include "mem/dma.h"
#include "rings/rings.h"
#include "util/byteorder.h"

#define RX_ENTRIES 32u
#define TX_ENTRIES 64u
#define DONE_ENTRIES (2 * RX_ENTRIES)
#define SMALL_SIZE 256u
#define MAX_FRAME 1518u
#define HOLD_MAX 256u
#define SMALL_OFF 0x0000u
#define BIG_OFF 0x1000u
#define TX_OFF 0x2000u
#define CLAIM_OFF 0x8000u

struct world {
	struct myri_rings r;
	uint8_t *sram;
	struct mcp_irq_data *status;
	struct mcp_slot *done;
	struct myrio_pool *small_pool, *big_pool, *tx_pool;
	uint32_t nic_done_idx, nic_small, nic_big;
	struct myrio_pkt *held[HOLD_MAX];
	unsigned nheld;
	uint32_t pkt_req_seen; /* chains the NIC has been shown (for send_done_count) */
};

/* The rings as bring-up leaves them: empty, completion ring zeroed, rx rings full. */
static void world_start(struct world *w)
{
	struct myri_rings *r = &w->r;
	static struct myrio_bus no_bus; /* nothing sleeps: posting tells nobody */
	r->bus = &no_bus;
	memset(w->sram, 0, 0x10000);
	memset(w->status, 0, 64);
	memset(w->done, 0, DONE_ENTRIES * sizeof(struct mcp_slot));
	w->nic_done_idx = w->nic_small = w->nic_big = 0;
	w->nheld = 0;
	r->rx_done_idx = 0;
	r->rx_token = false;
	r->link_up = 3;
	r->small.posted = r->small.done = r->big.posted = r->big.done = 0;
	r->tx.req = r->tx.done = r->tx.pkt_req = r->tx.pkt_done = 0;
	uint32_t offs[2] = {SMALL_OFF, BIG_OFF};
	for (int i = 0; i < 2; i++)
		for (uint32_t s = 0; s < RX_ENTRIES; s++)
			put_be32(w->sram + offs[i] + 8 * s + 4, MCP_RX_DESC_INVALID);
	memset(r->tx.info, 0, TX_ENTRIES * sizeof(struct myrio_pkt *));
	rx_ring_refill(&r->small);
	rx_ring_refill(&r->big);
}

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->sram = aligned_alloc(4096, 0x10000);
	w->status = aligned_alloc(64, 64);
	w->done = calloc(DONE_ENTRIES, sizeof(struct mcp_slot));
	if (!w->sram || !w->status || !w->done)
		abort();
	if (myrio_pool_create_in(NULL, RX_ENTRIES + 16, 448, &w->small_pool) ||
	    myrio_pool_create_in(NULL, RX_ENTRIES + 16, 128 + 2 + MAX_FRAME, &w->big_pool) ||
	    myrio_pool_create_in(NULL, 2 * TX_ENTRIES, 2048, &w->tx_pool))
		abort();
	struct myri_rings *r = &w->r;
	r->rx_done = w->done;
	r->rx_done_mask = DONE_ENTRIES - 1;
	r->small_size = SMALL_SIZE;
	r->max_frame = MAX_FRAME;
	struct myri_rx_ring *rings[2] = {&r->small, &r->big};
	struct myrio_pool *pools[2] = {w->small_pool, w->big_pool};
	for (int i = 0; i < 2; i++) {
		rings[i]->sram = w->sram + (i ? BIG_OFF : SMALL_OFF);
		rings[i]->mask = RX_ENTRIES - 1;
		rings[i]->pool = pools[i];
		rings[i]->info = calloc(RX_ENTRIES, sizeof(struct myrio_pkt *));
	}
	r->tx.sram = w->sram + TX_OFF;
	r->tx.mask = TX_ENTRIES - 1;
	r->tx.info = calloc(TX_ENTRIES, sizeof(struct myrio_pkt *));
	r->tx.boundary = 2048;
	r->tx.max_frame = MAX_FRAME;
	r->status = w->status;
	r->claim0 = w->sram + CLAIM_OFF;
	r->claim1 = w->sram + CLAIM_OFF + 4;
	r->deassert = (volatile uint8_t *)&r->deassert_sink; /* MSI style */
}

/* Close: the application and the rings give everything back; all buffers must be home. */
static void world_stop(struct world *w)
{
	myrio_pkt_free_bulk(w->held, w->nheld);
	w->nheld = 0;
	rx_ring_release(&w->r.small);
	rx_ring_release(&w->r.big);
	tx_ring_release(&w->r.tx);
	if (myrio_pool_free_count(w->small_pool) != w->small_pool->count ||
	    myrio_pool_free_count(w->big_pool) != w->big_pool->count ||
	    myrio_pool_free_count(w->tx_pool) != w->tx_pool->count)
		abort();
}

static bool in_pool(const struct myrio_pool *pool, const struct myrio_pkt *p)
{
	const uint8_t *b = (const uint8_t *)p;
	return b >= pool->base && b < pool->base + (size_t)pool->elem_size * pool->count &&
	       (size_t)(b - pool->base) % pool->elem_size == 0;
}

/* Buffers of a receive pool outside the pool: posted or held. */
static void check_accounting(struct world *w)
{
	struct myri_rings *r = &w->r;
	unsigned held_small = 0, held_big = 0;
	for (unsigned i = 0; i < w->nheld; i++) {
		if (w->held[i]->pool == w->small_pool)
			held_small++;
		else
			held_big++;
	}
	if (r->small.posted - r->small.done > RX_ENTRIES || r->big.posted - r->big.done > RX_ENTRIES)
		abort();
	if (myrio_pool_free_count(w->small_pool) + (r->small.posted - r->small.done) + held_small !=
		    w->small_pool->count ||
	    myrio_pool_free_count(w->big_pool) + (r->big.posted - r->big.done) + held_big !=
		    w->big_pool->count)
		abort();
	if (r->tx.req - r->tx.done > TX_ENTRIES || r->tx.pkt_req - r->tx.pkt_done > TX_ENTRIES)
		abort();
	if (myrio_pool_free_count(w->tx_pool) + (r->tx.pkt_req - r->tx.pkt_done) != w->tx_pool->count)
		abort();
}

/* The device takes the next valid descriptor of a ring (§4.3), as the NIC would. */
static uint64_t nic_take(struct world *w, bool big)
{
	uint32_t *idx = big ? &w->nic_big : &w->nic_small;
	uint8_t *d = w->sram + (big ? BIG_OFF : SMALL_OFF) + 8 * (*idx & (RX_ENTRIES - 1));
	uint32_t lo = get_be32(d + 4);
	if (lo == MCP_RX_DESC_INVALID)
		return 0;
	put_be32(d + 4, MCP_RX_DESC_INVALID);
	(*idx)++;
	return (uint64_t)get_be32(d) << 32 | lo;
}

static void nic_complete_at(struct world *w, uint32_t idx, uint16_t len, uint16_t csum)
{
	struct mcp_slot *s = &w->done[idx & (DONE_ENTRIES - 1)];
	s->checksum = be16(csum);
	s->length = be16(len);
}

static void app_rx(struct world *w, uint8_t n, uint8_t keep)
{
	struct myrio_pkt *pkts[64];
	uint16_t want = (uint16_t)(n % 64 + 1);
	uint16_t got = rings_rx_burst(&w->r, pkts, want);
	if (got > want)
		abort();
	for (uint16_t i = 0; i < got; i++) {
		struct myrio_pkt *p = pkts[i];
		bool small = in_pool(w->small_pool, p), big = in_pool(w->big_pool, p);
		if (!small && !big)
			abort();
		if (p->len == 0 || p->len > MAX_FRAME || (small && p->len > SMALL_SIZE) ||
		    (uint64_t)p->data_off + p->len > p->buf_len || p->refcnt != 1)
			abort();
		for (unsigned k = 0; k < w->nheld; k++)
			if (w->held[k] == p)
				abort(); /* delivered twice */
		/* touch the whole frame: ASan catches anything outside the region */
		volatile uint8_t *f = myrio_pkt_data(p);
		f[0] = f[p->len - 1];
		if ((keep >> (i & 7)) & 1 && w->nheld < HOLD_MAX)
			w->held[w->nheld++] = p;
		else
			myrio_pkt_free(p);
	}
}

static void app_tx(struct world *w, uint8_t n, uint16_t len, uint8_t flags)
{
	struct myrio_pkt *pkts[16];
	unsigned k = n % 16 + 1, got = 0;
	for (; got < k; got++) {
		struct myrio_pkt *p = myrio_pkt_alloc(w->tx_pool);
		if (!p)
			break;
		uint32_t room = myrio_pkt_tailroom(p);
		p->len = len % 2048;
		memset(myrio_pkt_data(p), 0xa5, p->len < room ? p->len : room);
		if (flags & 1) {
			p->ol_flags = MYRIO_PKT_TX_CSUM;
			p->csum_start = (uint16_t)(flags >> 1) * 4;
			p->csum_field = (uint16_t)(p->csum_start + 16);
		}
		pkts[got] = p;
	}
	uint16_t took = rings_tx_burst(&w->r, pkts, (uint16_t)got);
	myrio_pkt_free_bulk(pkts + took, got - took);
}

static void nic_status(struct world *w, struct fuzz_in *in)
{
	uint8_t sel = fuzz_u8(in);
	struct mcp_irq_data s;
	memset(&s, 0, sizeof(s));
	struct myri_tx_ring *t = &w->r.tx;
	/* send_done_count: mostly plausible (up to what was posted), sometimes anything */
	uint32_t d = fuzz_u32(in);
	if (sel & 0x80)
		s.send_done_count = be32(d);
	else
		s.send_done_count = be32(t->pkt_done + d % (t->pkt_req - t->pkt_done + 1));
	s.link_up = be32(fuzz_u32(in));
	s.dropped_no_small_buffer = be32(fuzz_u32(in));
	s.link_down = fuzz_u8(in);
	s.stats_updated = sel & 1;
	s.valid = (uint8_t)(fuzz_u8(in) | 1);
	memcpy(w->status, &s, sizeof(s));
	status_handle(&w->r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		fuzz_quiet();
		init = 1;
	}
	static struct world w;
	if (!w.sram)
		world_init(&w);
	world_start(&w);
	struct fuzz_in in = {data, size};
	for (unsigned steps = 0; in.n && steps < 4096; steps++) {
		uint8_t op = fuzz_u8(&in);
		switch (op % 8) {
		case 0: { /* a well-behaved frame of the fuzzed length */
			uint16_t len = fuzz_u16(&in), csum = fuzz_u16(&in);
			nic_take(&w, len > SMALL_SIZE);
			nic_complete_at(&w, w.nic_done_idx++, len, csum);
			break;
		}
		case 1: { /* an entry without a buffer taken: impossible on hardware */
			uint16_t len = fuzz_u16(&in);
			nic_complete_at(&w, w.nic_done_idx++, len, fuzz_u16(&in));
			break;
		}
		case 2: { /* an entry written at any index: out of order, or on a live slot */
			uint8_t idx = fuzz_u8(&in);
			uint16_t len = fuzz_u16(&in);
			nic_complete_at(&w, idx, len, 0);
			break;
		}
		case 3:
		case 4: {
			uint8_t n = fuzz_u8(&in);
			app_rx(&w, n, fuzz_u8(&in));
			break;
		}
		case 5: /* the application gives buffers back */
			myrio_pkt_free_bulk(w.held, w.nheld);
			w.nheld = 0;
			break;
		case 6: {
			uint8_t n = fuzz_u8(&in);
			uint16_t len = fuzz_u16(&in);
			app_tx(&w, n, len, fuzz_u8(&in));
			break;
		}
		case 7:
			nic_status(&w, &in);
			break;
		}
		check_accounting(&w);
	}
	world_stop(&w);
	return 0;
}
