/* SPDX-License-Identifier: BSD-3-Clause */
/* TSO send chains (§5.6): descriptor encoding (flags, runs in rdma_count, cksum_offset,
 * tx_boundary cuts, odd offsets, limits) and their trip through the ring: commit, wrap,
 * completion counting one per chain, freeing every packet of the chain. Expected values
 * are worked out by hand from the rules of §5.6 (the layout of Linux myri10ge_xmit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rings_fixture.h"

#define HDR 0x01u   /* TSO_HDR */
#define FST 0x02u   /* FIRST */
#define ODD 0x04u   /* ALIGN_ODD */
#define LAST 0x08u  /* TSO_LAST */
#define CHOP 0x10u  /* TSO_CHOP */
#define PLD 0x20u   /* TSO_PLD */
#define SMALL 0x01u /* on payload descriptors: MSS <= 1520 */

_Static_assert(HDR == MCP_TX_FLAG_TSO_HDR && LAST == MCP_TX_FLAG_TSO_LAST &&
		   CHOP == MCP_TX_FLAG_TSO_CHOP && PLD == MCP_TX_FLAG_TSO_PLD,
	       "TSO flag values of §5.3");

/* A packet whose data starts `before` bytes ahead of a 2 KiB boundary, len bytes of a
 * pattern. */
static struct myrio_pkt *placed(struct myrio_pool *pool, uint32_t before, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	assert_non_null(p);
	uint64_t data = p->iova + MYRIO_PKT_HEADROOM;
	uint64_t edge = (data + before + 2047) & ~2047ull;
	p->data_off = (uint32_t)(edge - before - p->iova);
	p->len = len;
	assert_true(p->data_off + len <= p->buf_len);
	uint8_t *d = myrio_pkt_data(p);
	for (uint32_t i = 0; i < len; i++)
		d[i] = (uint8_t)(i * 7 + len);
	return p;
}

/* Makes head + the others one TSO request. */
static void request(struct myrio_pkt **pk, unsigned n, uint16_t mss, uint16_t hlen)
{
	for (unsigned i = 0; i + 1 < n; i++)
		pk[i]->next = pk[i + 1];
	pk[n - 1]->next = NULL;
	pk[0]->ol_flags = MYRIO_PKT_TX_TSO;
	pk[0]->csum_start = 34; /* Ethernet + IPv4 */
	pk[0]->tso_hlen = hlen;
	pk[0]->tso_mss = mss;
	pk[0]->tso_npkts = (uint16_t)n;
}

static void check(const struct mcp_tx_desc *d, uint64_t addr, uint16_t len, uint8_t flags,
		  uint8_t rdma, uint8_t cso, uint16_t mss)
{
	assert_int_equal((uint64_t)be32(d->addr_high) << 32 | be32(d->addr_low), addr);
	assert_int_equal(be16(d->length), len);
	assert_int_equal(d->flags, flags);
	assert_int_equal(d->rdma_count, rdma);
	assert_int_equal(d->cksum_offset, cso);
	assert_int_equal(be16(d->pseudo_hdr_offset), mss); /* the MSS in every descriptor */
	assert_int_equal(d->pad, 0);
}

static struct myrio_pool *big_pool(void)
{
	struct myrio_pool *pool;
	assert_int_equal(myrio_pool_create_in(NULL, 80, 12288, &pool), 0);
	return pool;
}

static void free_all(struct myrio_pkt **pk, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		myrio_pkt_free(pk[i]);
}

/* The stack's request: headers + one MSS, then a full MSS: one descriptor each, every
 * payload descriptor starts a segment. */
static void full_segments(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pool *pool = big_pool();
	struct myrio_pkt *pk[2] = {placed(pool, 0, 66 + 1448), placed(pool, 0, 1448)};
	request(pk, 2, 1448, 66);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC_TSO];
	struct myrio_pkt *owner[MCP_TX_MAX_DESC_TSO];
	uint32_t total = 0;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, owner, &total), 3);
	assert_int_equal(total, 66 + 2 * 1448);
	uint64_t h = myrio_pkt_data_iova(pk[0]);
	check(&d[0], h, 66, HDR | FST, 1, 34, 1448);
	check(&d[1], h + 66, 1448, PLD | FST | SMALL, 1, 0, 1448);
	check(&d[2], myrio_pkt_data_iova(pk[1]), 1448, PLD | FST | SMALL | LAST, 1, 0, 1448);
	assert_null(owner[0]);
	assert_ptr_equal(owner[1], pk[0]);
	assert_ptr_equal(owner[2], pk[1]);
	/* an MSS above 1520: no SMALL on the payload descriptors; the segments must fit the
	 * port's frames */
	pk[0]->len = 66 + 1600;
	pk[1]->len = 1000;
	pk[0]->tso_mss = 1600;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	x->r.tx.max_frame = 9018;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 3);
	check(&d[1], h + 66, 1600, PLD | FST, 1, 0, 1600);
	check(&d[2], myrio_pkt_data_iova(pk[1]), 1000, PLD | FST | LAST, 1, 0, 1600);
	free_all(pk, 2);
	myrio_pool_destroy(pool);
	fix_free(x);
}

/* Payload buffers that do not line up with the MSS: CHOP where a segment ends inside a
 * descriptor, which then starts the next run. */
static void chop_and_runs(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pool *pool = big_pool();
	struct myrio_pkt *pk[3] = {placed(pool, 0, 54 + 1500), placed(pool, 0, 700),
				   placed(pool, 0, 300)};
	request(pk, 3, 1000, 54); /* payload 2500: segments 1000, 1000, 500 */
	struct mcp_tx_desc d[MCP_TX_MAX_DESC_TSO];
	uint32_t total;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 4);
	uint64_t h = myrio_pkt_data_iova(pk[0]);
	check(&d[0], h, 54, HDR | FST, 1, 34, 1000);
	/* segment 2 begins 1000 bytes into d1: its run is d1 (from the cut) and d2 */
	check(&d[1], h + 54, 1500, PLD | FST | SMALL | CHOP, 2, 0, 1000);
	/* segment 3 begins 500 bytes into d2 and goes on in d3: the final segment, a run of
	 * two with TSO_LAST from the cut on */
	check(&d[2], myrio_pkt_data_iova(pk[1]), 700, PLD | SMALL | CHOP | LAST, 2, 0, 1000);
	check(&d[3], myrio_pkt_data_iova(pk[2]), 300, PLD | SMALL | LAST, 1, 0, 1000);
	free_all(pk, 3);
	myrio_pool_destroy(pool);
	fix_free(x);
}

/* tx_boundary cuts in the headers and in payload, odd offsets, a final segment of two
 * descriptors. */
static void boundary_cuts_and_odd_offsets(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pool *pool = big_pool();
	struct myrio_pkt *pk[3] = {placed(pool, 21, 54 + 1001), placed(pool, 501, 1001),
				   placed(pool, 100, 300)};
	request(pk, 3, 1001, 54);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC_TSO];
	struct myrio_pkt *owner[MCP_TX_MAX_DESC_TSO];
	uint32_t total;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, owner, &total), 7);
	assert_int_equal(total, 54 + 1001 + 1001 + 300);
	uint64_t h = myrio_pkt_data_iova(pk[0]), a = myrio_pkt_data_iova(pk[1]),
		 b = myrio_pkt_data_iova(pk[2]);
	/* headers cut at the boundary 21 bytes in: a run of two; the second starts 33 bytes
	 * before the payload (odd), 13 bytes before the TCP header */
	check(&d[0], h, 21, HDR | FST, 2, 34, 1001);
	check(&d[1], h + 21, 33, HDR | ODD, 1, 13, 1001);
	check(&d[2], h + 54, 1001, PLD | FST | SMALL, 1, 0, 1001);
	/* segment 2 split by the boundary after 501 bytes: run of two, second at odd 501 */
	check(&d[3], a, 501, PLD | FST | SMALL, 2, 0, 1001);
	check(&d[4], a + 501, 500, PLD | SMALL | ODD, 1, 0, 1001);
	/* the last, short segment split after 100 bytes: both carry TSO_LAST */
	check(&d[5], b, 100, PLD | FST | SMALL | LAST, 2, 0, 1001);
	check(&d[6], b + 100, 200, PLD | SMALL | LAST, 1, 0, 1001);
	struct myrio_pkt *want[7] = {NULL, NULL, pk[0], NULL, pk[1], NULL, pk[2]};
	for (int i = 0; i < 7; i++)
		assert_ptr_equal(owner[i], want[i]);
	/* the same request with a 4 KiB boundary crosses only where the packets do */
	x->r.tx.boundary = 4096;
	unsigned n = tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total);
	assert_true(n >= 4 && n <= 7);
	for (unsigned i = 0; i < n; i++) {
		uint64_t at = (uint64_t)be32(d[i].addr_high) << 32 | be32(d[i].addr_low);
		assert_int_equal(at / 4096, (at + be16(d[i].length) - 1) / 4096);
	}
	free_all(pk, 3);
	myrio_pool_destroy(pool);
	fix_free(x);
}

/* A descriptor holding two segment ends (MSS below the descriptor length), and a request
 * ending exactly on a segment boundary inside a descriptor. */
static void small_mss_several_cuts(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pool *pool = big_pool();
	struct myrio_pkt *pk[2] = {placed(pool, 0, 54 + 300), placed(pool, 0, 900)};
	request(pk, 2, 400, 54); /* payload 1200: three segments of 400 */
	struct mcp_tx_desc d[MCP_TX_MAX_DESC_TSO];
	uint32_t total;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 3);
	uint64_t h = myrio_pkt_data_iova(pk[0]);
	check(&d[0], h, 54, HDR | FST, 1, 34, 400);
	/* d1: bytes 0-299 of segment 1; run d1-d2 (segment 1 ends inside d2) */
	check(&d[1], h + 54, 300, PLD | FST | SMALL, 2, 0, 400);
	/* d2: 100 bytes end segment 1, 400 make segment 2, 400 segment 3, ending exactly:
	 * CHOP, and the final segment lies inside it */
	check(&d[2], myrio_pkt_data_iova(pk[1]), 900, PLD | SMALL | CHOP | LAST, 1, 0, 400);
	free_all(pk, 2);
	myrio_pool_destroy(pool);
	fix_free(x);
}

/* Requests the NIC must not get: malformed, beyond 64 descriptors or 64 KiB. */
static void limits_and_malformed(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 128, 0, 1518);
	struct myrio_pool *pool = big_pool();
	struct mcp_tx_desc d[MCP_TX_MAX_DESC_TSO];
	uint32_t total;
	struct myrio_pkt *pk[64];
	pk[0] = placed(pool, 0, 66 + 1448);
	for (int i = 1; i < 46; i++)
		pk[i] = placed(pool, 0, 1448);
	/* 45 x 1448 = 65160 bytes: fits 64 KiB */
	request(pk, 45, 1448, 66);
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 46);
	/* 46 segments: 66608 bytes of payload, more than 64 KiB */
	request(pk, 46, 1448, 66);
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	/* a 512-byte boundary cuts every buffer in three: more than 64 descriptors */
	request(pk, 30, 1448, 66);
	x->r.tx.boundary = 512;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	x->r.tx.boundary = 2048;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 31);
	/* malformed: each is refused */
	pk[0]->tso_mss = 0;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	pk[0]->tso_mss = 9001;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	pk[0]->tso_mss = 1448;
	pk[0]->csum_start = 14; /* no room for an IPv4 header */
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	pk[0]->csum_start = 34;
	pk[0]->tso_hlen = 40; /* TCP header shorter than 20 bytes */
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	pk[0]->tso_hlen = 66;
	pk[29]->next = NULL; /* the chain is shorter than tso_npkts */
	request(pk, 30, 1448, 66);
	pk[0]->tso_npkts = 31;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	request(pk, 3, 1448, 66);
	pk[1]->len = 0; /* zero-length member */
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	pk[1]->len = 1448;
	request(pk, 1, 1448, 66);
	pk[0]->len = 66; /* headers only */
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[0], d, NULL, &total), 0);
	/* through the burst: taken, dropped, counted, every packet of the chain freed */
	pk[0]->len = 66 + 1448;
	request(pk, 3, 1448, 66);
	pk[0]->tso_mss = 0;
	myrio_pkt_ref(pk[0]); /* keep the test's holds to check the drops */
	myrio_pkt_ref(pk[1]);
	myrio_pkt_ref(pk[2]);
	assert_int_equal(rings_tx_burst(&x->r, pk, 1), 1);
	assert_int_equal(x->r.tx_dropped_bad, 1);
	assert_int_equal(x->r.tx_packets, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pk[i]->refcnt, 1);
	free_all(pk, 46);
	assert_int_equal(myrio_pool_free_count(pool), 80);
	myrio_pool_destroy(pool);
	fix_free(x);
}

/* The NIC side: the chain at its consumer index, published (first flags non-zero), up to
 * the next descriptor with flags 0 or FIRST without TSO_PLD (§5.7); flags cleared. */
static unsigned nic_read(struct fix *x, struct mcp_tx_desc *out)
{
	uint32_t mask = x->r.tx.mask;
	struct mcp_tx_desc *ring = (struct mcp_tx_desc *)(x->sram + FIX_TX_OFF);
	if (ring[x->nic_tx & mask].flags == 0)
		return 0;
	unsigned n = 0;
	do {
		struct mcp_tx_desc *s = &ring[(x->nic_tx + n) & mask];
		out[n++] = *s;
		s->flags = 0;
		uint8_t f = ring[(x->nic_tx + n) & mask].flags;
		if (!f || ((f & FST) && !(f & PLD)) || n == mask + 1)
			break;
	} while (1);
	x->nic_tx += n;
	return n;
}

static void complete(struct fix *x, uint32_t done)
{
	x->status->send_done_count = be32(done);
	x->status->valid = MCP_VALID_TX;
	rings_tx_burst(&x->r, NULL, 0);
}

/* Through the ring: a plain frame, a TSO chain that wraps the ring end, a plain frame;
 * completions count one per chain and free every packet of the chain. */
static void burst_wrap_and_completion(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 16, 0, 1518);
	struct myrio_pool *pool = big_pool();
	/* move the producer to slot 12 with plain frames the NIC completes */
	for (int i = 0; i < 12; i++) {
		struct myrio_pkt *p = placed(pool, 0, 60);
		assert_int_equal(rings_tx_burst(&x->r, &p, 1), 1);
		struct mcp_tx_desc d[1];
		assert_int_equal(nic_read(x, d), 1);
	}
	complete(x, 12);
	unsigned free0 = myrio_pool_free_count(pool);
	struct myrio_pkt *pk[6] = {placed(pool, 0, 100), placed(pool, 21, 54 + 1001),
				   placed(pool, 501, 1001), placed(pool, 100, 300),
				   placed(pool, 0, 1514), NULL};
	request(pk + 1, 3, 1001, 54);
	struct mcp_tx_desc want[7];
	uint32_t total;
	assert_int_equal(tx_encode_tso(&x->r.tx, pk[1], want, NULL, &total), 7);
	struct myrio_pkt *burst[3] = {pk[0], pk[1], pk[4]};
	/* 1 + 7 + 1 descriptors; 15 slots free */
	assert_int_equal(rings_tx_burst(&x->r, burst, 3), 3);
	assert_int_equal(x->r.tx_packets, 15);
	assert_int_equal(x->r.tx_tso_chains, 1);
	assert_int_equal(x->r.tx_bytes, 12 * 60 + 100 + total + 1514);
	struct mcp_tx_desc got[16];
	assert_int_equal(nic_read(x, got), 1);
	assert_int_equal(nic_read(x, got), 7); /* slots 13, 14, 15, 0, 1, 2, 3 */
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(nic_read(x, got), 1);
	/* the plain frame and the chain done: all four packets back, the last one not */
	complete(x, 14);
	assert_int_equal(myrio_pool_free_count(pool), free0 - 1);
	complete(x, 15);
	assert_int_equal(myrio_pool_free_count(pool), free0);
	assert_int_equal(x->r.tx.req, x->r.tx.done);
	myrio_pool_destroy(pool);
	fix_free(x);
}

/* A chain that needs more slots than are free waits (nothing written); a chain in the
 * ring when the port stops is freed whole. */
static void ring_full_and_release(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 8, 0, 1518);
	struct myrio_pool *pool = big_pool();
	unsigned free0 = myrio_pool_free_count(pool);
	struct myrio_pkt *pk[4] = {placed(pool, 0, 54 + 1448), placed(pool, 1000, 1448),
				   placed(pool, 1000, 1448), placed(pool, 1000, 1448)};
	request(pk, 4, 1448, 54); /* 2 + 2 + 2 + 2 = 8 descriptors > 7 free slots */
	assert_int_equal(rings_tx_burst(&x->r, pk, 1), 0);
	assert_int_equal(x->r.tx_ring_full, 1);
	assert_int_equal(x->r.tx.req, 0);
	struct mcp_tx_desc got[8];
	assert_int_equal(nic_read(x, got), 0);
	request(pk, 3, 1448, 54); /* 6 descriptors */
	assert_int_equal(rings_tx_burst(&x->r, pk, 1), 1);
	assert_int_equal(x->r.tx.req, 6);
	tx_ring_release(&x->r.tx);
	assert_int_equal(x->r.tx.pkt_done, 1);
	assert_int_equal(myrio_pool_free_count(pool), free0 - 1);
	myrio_pkt_free(pk[3]);
	myrio_pool_destroy(pool);
	fix_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_segments),
		cmocka_unit_test(chop_and_runs),
		cmocka_unit_test(boundary_cuts_and_odd_offsets),
		cmocka_unit_test(small_mss_several_cuts),
		cmocka_unit_test(limits_and_malformed),
		cmocka_unit_test(burst_wrap_and_completion),
		cmocka_unit_test(ring_full_and_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
