/* SPDX-License-Identifier: BSD-3-Clause */
/* Send descriptors (§5.2-§5.5), the commit protocol and wrap (§5.7), completions (§5.8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rings_fixture.h"
#include "util/csum.h"

static struct myrio_pkt *frame(struct fix *x, uint32_t len, uint32_t data_off)
{
	struct myrio_pkt *p = myrio_pkt_alloc(x->tx_pool);
	assert_non_null(p);
	p->data_off = data_off;
	p->len = len;
	uint8_t *d = myrio_pkt_data(p);
	for (uint32_t i = 0; i < len; i++)
		d[i] = (uint8_t)(i + 1);
	return p;
}

static void desc_check(const struct mcp_tx_desc *d, uint64_t addr, uint16_t len, uint8_t flags,
		       uint8_t rdma, uint8_t cso, uint16_t pseudo)
{
	assert_int_equal((uint64_t)be32(d->addr_high) << 32 | be32(d->addr_low), addr);
	assert_int_equal(be16(d->length), len);
	assert_int_equal(d->flags, flags);
	assert_int_equal(d->rdma_count, rdma);
	assert_int_equal(d->cksum_offset, cso);
	assert_int_equal(be16(d->pseudo_hdr_offset), pseudo);
	assert_int_equal(d->pad, 0);
}

static void single_descriptor_encoding(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pkt *p = frame(x, 60, MYRIO_PKT_HEADROOM);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	assert_int_equal(tx_encode(&x->r.tx, p, d), 1);
	desc_check(&d[0], myrio_pkt_data_iova(p), 60,
		   MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL, 1, 0, 0);
	/* bytes on the wire, big-endian */
	const uint8_t *b = (const uint8_t *)&d[0];
	assert_int_equal(b[10], 0);
	assert_int_equal(b[11], 60);
	assert_int_equal(b[15], MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL);
	p->len = 1521; /* beyond MXGEFW_SEND_SMALL_SIZE: no SMALL */
	x->r.tx.max_frame = 9018;
	assert_int_equal(tx_encode(&x->r.tx, p, d), 1);
	assert_int_equal(d[0].flags, MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO);
	myrio_pkt_free(p);
	fix_free(x);
}

static void split_at_tx_boundary(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 9018);
	/* place the frame 100 bytes before a 2 KiB boundary */
	struct myrio_pkt *p = myrio_pkt_alloc(x->tx_pool);
	uint64_t data = p->iova + MYRIO_PKT_HEADROOM;
	uint64_t edge = (data + 2047) & ~2047ull;
	if (edge - data < 100)
		edge += 2048;
	p->data_off = (uint32_t)(edge - 100 - p->iova);
	p->len = 1518;
	assert_true(p->data_off + p->len <= p->buf_len);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	assert_int_equal(tx_encode(&x->r.tx, p, d), 2);
	desc_check(&d[0], edge - 100, 100, MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL,
		   2, 0, 0);
	desc_check(&d[1], edge, 1418, MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL, 1, 0, 0);

	/* checksum offload: start 34, field 50; second descriptor starts at byte 100 (even) */
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 34;
	p->csum_field = 50;
	assert_int_equal(tx_encode(&x->r.tx, p, d), 2);
	uint8_t f = MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL | MCP_TX_FLAG_CKSUM;
	desc_check(&d[0], edge - 100, 100, f | MCP_TX_FLAG_FIRST, 2, 34, 50);
	desc_check(&d[1], edge, 1418, f, 1, 0, 50);
	/* odd split (101 bytes first) sets ALIGN_ODD; a start beyond the split is relative */
	p->data_off -= 1;
	p->csum_start = 120;
	assert_int_equal(tx_encode(&x->r.tx, p, d), 2);
	desc_check(&d[0], edge - 101, 101, f | MCP_TX_FLAG_FIRST, 2, 120, 50);
	desc_check(&d[1], edge, 1417, f | MCP_TX_FLAG_ALIGN_ODD, 1, 19, 50);
	myrio_pkt_free(p);
	fix_free(x);
}

static void jumbo_and_descriptor_limit(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 9018);
	struct myrio_pool *big;
	assert_int_equal(myrio_pool_create_in(NULL, 4, 9300, &big), 0);
	struct myrio_pkt *p = myrio_pkt_alloc(big);
	p->len = 9018;
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	unsigned n = tx_encode(&x->r.tx, p, d);
	assert_true(n >= 5 && n <= 6);
	uint32_t sum = 0;
	uint64_t at = myrio_pkt_data_iova(p);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = (uint64_t)be32(d[i].addr_high) << 32 | be32(d[i].addr_low);
		assert_int_equal(a, at);
		uint32_t l = be16(d[i].length);
		assert_int_equal(a / 2048, (a + l - 1) / 2048); /* never crosses */
		at += l;
		sum += l;
		assert_int_equal(d[i].flags & MCP_TX_FLAG_FIRST, i == 0 ? MCP_TX_FLAG_FIRST : 0);
	}
	assert_int_equal(sum, 9018);
	assert_int_equal(d[0].rdma_count, n);
	/* more than 12 descriptors: refused */
	x->r.tx.boundary = 512;
	assert_int_equal(tx_encode(&x->r.tx, p, d), 0);
	struct myrio_pkt *pk[1] = {p};
	assert_int_equal(rings_tx_burst(&x->r, pk, 1), 1); /* taken, dropped, counted */
	assert_int_equal(x->r.tx_dropped_bad, 1);
	assert_int_equal(myrio_pool_free_count(big), 4);
	myrio_pool_destroy(big);
	fix_free(x);
}

/* The NIC side: reads the chain at its consumer index, checks that it is published and
 * complete, clears the flags (§5.7) and returns the frame's bytes' addresses/lengths. */
static unsigned nic_read_chain(struct fix *x, struct mcp_tx_desc *out)
{
	uint32_t mask = x->r.tx.mask;
	struct mcp_tx_desc *ring = (struct mcp_tx_desc *)(x->sram + FIX_TX_OFF);
	struct mcp_tx_desc *first = &ring[x->nic_tx & mask];
	if (first->flags == 0)
		return 0;
	assert_true(first->flags & MCP_TX_FLAG_FIRST);
	unsigned n = first->rdma_count;
	for (unsigned i = 0; i < n; i++) {
		struct mcp_tx_desc *d = &ring[(x->nic_tx + i) & mask];
		assert_true(d->flags & MCP_TX_FLAG_NO_TSO);
		out[i] = *d;
		d->flags = 0;
	}
	x->nic_tx += n;
	return n;
}

static void burst_commits_pads_and_completes(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pkt *pk[4] = {frame(x, 42, MYRIO_PKT_HEADROOM), frame(x, 60, MYRIO_PKT_HEADROOM),
				   frame(x, 1514, MYRIO_PKT_HEADROOM), frame(x, 1519, MYRIO_PKT_HEADROOM)};
	uint8_t *runt = myrio_pkt_data(pk[0]);
	memset(runt + 42, 0xaa, 30);
	unsigned free0 = myrio_pool_free_count(x->tx_pool);
	assert_int_equal(rings_tx_burst(&x->r, pk, 4), 4);
	assert_int_equal(x->r.tx_dropped_bad, 1); /* 1519 > max frame */
	assert_int_equal(x->r.tx_packets, 3);
	assert_int_equal(pk[0]->len, 60);
	for (int i = 42; i < 60; i++)
		assert_int_equal(runt[i], 0);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	uint32_t lens[3] = {60, 60, 1514};
	for (int i = 0; i < 3; i++) {
		unsigned n = nic_read_chain(x, d);
		assert_true(n >= 1);
		uint32_t sum = 0;
		for (unsigned k = 0; k < n; k++)
			sum += be16(d[k].length);
		assert_int_equal(sum, lens[i]);
		assert_int_equal((uint64_t)be32(d[0].addr_high) << 32 | be32(d[0].addr_low),
				 myrio_pkt_data_iova(pk[i]));
	}
	assert_int_equal(nic_read_chain(x, d), 0);
	/* nothing freed before the NIC says so */
	assert_int_equal(myrio_pool_free_count(x->tx_pool), free0 + 1);
	x->status->send_done_count = be32(2);
	x->status->valid = MCP_VALID_TX;
	assert_int_equal(rings_tx_burst(&x->r, pk, 0), 0);
	assert_int_equal(myrio_pool_free_count(x->tx_pool), free0 + 3);
	assert_int_equal(fix_claim(x, 1), MCP_CLAIM_VALUE);
	/* a send_done_count beyond what was sent is not trusted */
	x->status->send_done_count = be32(1000);
	x->status->valid = MCP_VALID_TX;
	status_poll(&x->r);
	assert_int_equal(x->r.tx_bad_done, 1);
	assert_int_equal(myrio_pool_free_count(x->tx_pool), free0 + 4);
	assert_int_equal(x->r.tx.req, x->r.tx.done);
	fix_free(x);
}

static void ring_full_and_wrap(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 16, 0, 9018);
	x->r.tx.boundary = 2048;
	struct myrio_pkt *pk[32];
	/* one-descriptor frames: at most entries - 1 outstanding */
	for (int i = 0; i < 20; i++)
		pk[i] = frame(x, 64, MYRIO_PKT_HEADROOM);
	assert_int_equal(rings_tx_burst(&x->r, pk, 20), 15);
	assert_int_equal(x->r.tx_ring_full, 5);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	for (int i = 0; i < 15; i++)
		assert_int_equal(nic_read_chain(x, d), 1);
	x->status->send_done_count = be32(15);
	x->status->valid = MCP_VALID_TX;
	for (int i = 15; i < 20; i++)
		myrio_pkt_free(pk[i]);
	/* now 3-descriptor chains (frames straddling two boundaries) through many wraps */
	uint32_t sent = 15, seq = 0;
	for (int round = 0; round < 50; round++) {
		struct myrio_pkt *c[4];
		for (int i = 0; i < 4; i++) {
			struct myrio_pkt *p = myrio_pkt_alloc(x->tx_pool);
			assert_non_null(p);
			p->data_off = MYRIO_PKT_HEADROOM;
			p->len = 100 + seq % 7;
			p->user = seq++;
			c[i] = p;
		}
		/* force multi-descriptor chains with a tiny boundary */
		x->r.tx.boundary = 64;
		uint16_t took = rings_tx_burst(&x->r, c, 4);
		assert_true(took >= 1);
		for (int i = took; i < 4; i++)
			myrio_pkt_free(c[i]);
		for (int i = 0; i < took; i++) {
			unsigned n = nic_read_chain(x, d);
			assert_true(n >= 2);
			uint64_t at = myrio_pkt_data_iova(c[i]);
			uint32_t sum = 0;
			for (unsigned k = 0; k < n; k++) {
				assert_int_equal((uint64_t)be32(d[k].addr_high) << 32 |
							 be32(d[k].addr_low),
						 at + sum);
				sum += be16(d[k].length);
			}
			assert_int_equal(sum, c[i]->len);
		}
		sent += took;
		x->status->send_done_count = be32(sent);
		x->status->valid = MCP_VALID_TX;
	}
	status_poll(&x->r);
	assert_int_equal(x->r.tx.req, x->r.tx.done);
	assert_true(x->r.tx.req > 16 * 8); /* wrapped many times */
	assert_int_equal(myrio_pool_free_count(x->tx_pool), x->tx_pool->count);
	fix_free(x);
}

static void checksum_beyond_nic_limits_done_in_software(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 1518);
	struct myrio_pkt *p = frame(x, 400, MYRIO_PKT_HEADROOM);
	uint8_t *f = myrio_pkt_data(p);
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 300; /* > 255: the NIC cannot */
	p->csum_field = 306;
	put_be16(f + 306, 0x1234); /* pseudo-header seed */
	uint16_t want = csum_finish(csum_add(0, f + 300, 100));
	struct myrio_pkt *pk[1] = {p};
	assert_int_equal(rings_tx_burst(&x->r, pk, 1), 1);
	assert_int_equal(get_be16(f + 306), want);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	assert_int_equal(nic_read_chain(x, d), 1);
	assert_int_equal(d[0].flags & MCP_TX_FLAG_CKSUM, 0);
	/* a checksum field outside the frame: refused */
	struct myrio_pkt *q = frame(x, 100, MYRIO_PKT_HEADROOM);
	q->ol_flags = MYRIO_PKT_TX_CSUM;
	q->csum_start = 34;
	q->csum_field = 99;
	pk[0] = q;
	assert_int_equal(rings_tx_burst(&x->r, pk, 1), 1);
	assert_int_equal(x->r.tx_dropped_bad, 1);
	fix_free(x);
}

/* Send completions free packets in ring order, each to its own pool, drop only the ring's
 * reference (an extra holder keeps its packet), also across wraps and with chains of
 * several descriptors in between. */
static void completions_free_to_each_pool_and_keep_extra_refs(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 16, 0, 9018);
	struct myrio_pool *other;
	assert_int_equal(myrio_pool_create_in(NULL, 64, 2048, &other), 0);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	unsigned free_a = myrio_pool_free_count(x->tx_pool), free_b = other->count;
	uint32_t sent = 0;
	for (int round = 0; round < 12; round++) {
		struct myrio_pkt *pk[6];
		for (int i = 0; i < 6; i++) {
			pk[i] = i & 1 ? myrio_pkt_alloc(other) : frame(x, 60, MYRIO_PKT_HEADROOM);
			pk[i]->len = 60 + (uint32_t)(i & 3);
		}
		/* round 3: one frame crosses a (tiny) boundary: a chain of two descriptors */
		x->r.tx.boundary = round == 3 ? 64 : 2048;
		if (round == 3)
			pk[2]->data_off = MYRIO_PKT_HEADROOM + 40;
		myrio_pkt_ref(pk[4]); /* an extra holder, like a TCP segment awaiting its ack */
		assert_int_equal(rings_tx_burst(&x->r, pk, 6), 6);
		unsigned descs = 0;
		for (int i = 0; i < 6; i++)
			descs += nic_read_chain(x, d);
		assert_int_equal(descs, round == 3 ? 7 : 6);
		/* the NIC reports four of the six: the last two stay with the ring */
		x->status->send_done_count = be32(sent + 4);
		x->status->valid = MCP_VALID_TX;
		status_poll(&x->r);
		assert_int_equal(pk[4]->refcnt, 2);
		assert_int_equal(pk[5]->refcnt, 1);
		assert_int_equal(pk[3]->refcnt, 0);
		assert_int_equal(myrio_pool_free_count(x->tx_pool), free_a - 1);
		assert_int_equal(myrio_pool_free_count(other), free_b - 1);
		sent += 6;
		x->status->send_done_count = be32(sent);
		x->status->valid = MCP_VALID_TX;
		status_poll(&x->r);
		assert_int_equal(pk[4]->refcnt, 1); /* the extra holder still has it */
		assert_int_equal(myrio_pool_free_count(x->tx_pool), free_a - 1);
		assert_int_equal(myrio_pool_free_count(other), free_b);
		myrio_pkt_free(pk[4]);
		assert_int_equal(myrio_pool_free_count(x->tx_pool), free_a);
	}
	assert_int_equal(x->r.tx.req, x->r.tx.done);
	assert_true(x->r.tx.req > 16 * 4); /* wrapped */
	myrio_pool_destroy(other);
	fix_free(x);
}

/* Frames longer than 1520 bytes (jumbo MTU) are sent without SMALL (§5.3). */
static void long_frame_without_small_flag(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 0, 9018);
	x->r.tx.boundary = 4096;
	struct myrio_pool *big;
	assert_int_equal(myrio_pool_create_in(NULL, 4, 8192, &big), 0);
	struct myrio_pkt *p = myrio_pkt_alloc(big), *q = myrio_pkt_alloc(big);
	p->data_off = 4096 - 64; /* data at element + 4096: aligned to the boundary */
	p->len = 3000;
	q->len = 1520;
	struct myrio_pkt *pk[2] = {p, q};
	assert_int_equal(rings_tx_burst(&x->r, pk, 2), 2);
	struct mcp_tx_desc d[MCP_TX_MAX_DESC];
	assert_int_equal(nic_read_chain(x, d), 1);
	desc_check(&d[0], myrio_pkt_data_iova(p), 3000, MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO, 1,
		   0, 0);
	assert_int_equal(nic_read_chain(x, d), 1);
	desc_check(&d[0], myrio_pkt_data_iova(q), 1520,
		   MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL, 1, 0, 0);
	x->status->send_done_count = be32(2);
	x->status->valid = MCP_VALID_TX;
	status_poll(&x->r);
	assert_int_equal(myrio_pool_free_count(big), 4);
	myrio_pool_destroy(big);
	fix_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_descriptor_encoding),
		cmocka_unit_test(split_at_tx_boundary),
		cmocka_unit_test(jumbo_and_descriptor_limit),
		cmocka_unit_test(burst_commits_pads_and_completes),
		cmocka_unit_test(ring_full_and_wrap),
		cmocka_unit_test(checksum_beyond_nic_limits_done_in_software),
		cmocka_unit_test(completions_free_to_each_pool_and_keep_extra_refs),
		cmocka_unit_test(long_frame_without_small_flag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
