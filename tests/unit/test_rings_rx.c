/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive rings (§4.3) and completion ring (§4.6): posting, consumption, wrap, bad input,
 * the rx token (§6.5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rings_fixture.h"

/* Rings of rx_entries slots, both filled; pool_extra spare buffers per pool. */
static struct fix *fix_posted(uint32_t rx_entries, uint32_t pool_extra)
{
	struct fix *x = fix_new(rx_entries, 64, pool_extra, 1518);
	rx_ring_refill(&x->r.small);
	rx_ring_refill(&x->r.big);
	return x;
}

static void refill_posts_whole_ring_in_groups(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 16, 1518);
	assert_int_equal(rx_ring_refill(&x->r.small), 64);
	assert_int_equal(rx_ring_refill(&x->r.small), 0); /* full */
	for (uint32_t s = 0; s < 64; s++) {
		uint8_t *d = x->sram + FIX_SMALL_OFF + 8 * s;
		uint64_t a = (uint64_t)get_be32(d) << 32 | get_be32(d + 4);
		struct myrio_pkt *p = x->r.small.info[s];
		assert_non_null(p);
		assert_int_equal(a, p->iova + MYRIO_PKT_HEADROOM);
		/* small buffers never cross a 4 KiB page (§4.4) */
		assert_int_equal(a / 4096, (a + 2 + 256 - 1) / 4096);
		for (uint32_t t = 0; t < s; t++)
			assert_ptr_not_equal(p, x->r.small.info[t]);
	}
	assert_int_equal(myrio_pool_free_count(x->small_pool), 16);
	fix_free(x);
}

static void frames_delivered_in_order_across_wraps(void **state)
{
	(void)state;
	struct fix *x = fix_posted(64, 32);
	struct myrio_pkt *pkts[32];
	uint64_t expect_addr[32];
	unsigned total = 0;
	/* 40 rounds of up to 20 frames: both rx rings (64) and the completion ring (128)
	 * wrap many times. */
	for (unsigned round = 0; round < 40; round++) {
		unsigned n = 1 + round % 20;
		for (unsigned i = 0; i < n; i++) {
			uint16_t len = (uint16_t)((total + i) % 3 == 0 ? 1000 + i : 60 + i);
			expect_addr[i] = fix_nic_receive(x, len > 256, len, (uint16_t)(0x1234 + i));
			assert_true(expect_addr[i] != 0);
		}
		uint16_t got = rings_rx_burst(&x->r, pkts, 32);
		assert_int_equal(got, n);
		for (unsigned i = 0; i < n; i++) {
			uint16_t len = (uint16_t)((total + i) % 3 == 0 ? 1000 + i : 60 + i);
			assert_int_equal(pkts[i]->len, len);
			assert_int_equal(pkts[i]->data_off, MYRIO_PKT_HEADROOM + 2);
			assert_int_equal(pkts[i]->iova + MYRIO_PKT_HEADROOM, expect_addr[i]);
			assert_int_equal(pkts[i]->rx_csum, 0x1234 + i);
			assert_int_equal(pkts[i]->ol_flags, MYRIO_PKT_RX_CSUM_PARTIAL);
		}
		myrio_pkt_free_bulk(pkts, got);
		total += n;
		/* consumed entries are zeroed */
		for (uint32_t e = 0; e <= x->r.rx_done_mask; e++)
			assert_int_equal(x->done[e].length, 0);
		/* refilled in groups of 8: never fewer than ring - 7 posted */
		assert_true(x->r.small.posted - x->r.small.done >= 64 - 7);
		assert_true(x->r.big.posted - x->r.big.done >= 64 - 7);
		assert_int_equal(x->r.small.posted % 8, 0);
	}
	assert_int_equal(x->r.rx_packets, total);
	assert_int_equal(rings_rx_burst(&x->r, pkts, 32), 0);
	fix_free(x);
}

static void burst_limit_respected(void **state)
{
	(void)state;
	struct fix *x = fix_posted(64, 32);
	for (int i = 0; i < 10; i++) {
		fix_nic_receive(x, false, 64, 0);
	}
	struct myrio_pkt *pkts[4];
	assert_int_equal(rings_rx_burst(&x->r, pkts, 4), 4);
	myrio_pkt_free_bulk(pkts, 4);
	assert_int_equal(rings_rx_burst(&x->r, pkts, 4), 4);
	myrio_pkt_free_bulk(pkts, 4);
	assert_int_equal(rings_rx_burst(&x->r, pkts, 4), 2);
	myrio_pkt_free_bulk(pkts, 2);
	fix_free(x);
}

static void impossible_lengths_are_counted_drops(void **state)
{
	(void)state;
	struct fix *x = fix_posted(64, 0);
	struct myrio_pkt *pkts[64];
	/* longer than the MTU allows */
	fix_nic_receive(x, true, 1519, 0);
	fix_nic_receive(x, true, 0xffff, 0);
	assert_int_equal(rings_rx_burst(&x->r, pkts, 64), 0);
	assert_int_equal(x->r.rx_bad_completion, 1); /* a bad entry ends the burst */
	assert_int_equal(rings_rx_burst(&x->r, pkts, 64), 0);
	assert_int_equal(x->r.rx_bad_completion, 2);
	/* buffers are not lost: all are in the ring or the pool */
	assert_int_equal(x->r.big.posted - x->r.big.done + myrio_pool_free_count(x->big_pool),
			 x->big_pool->count);
	/* a big frame when no big buffer is posted: drain the pool by holding frames */
	uint32_t held = 0;
	while (x->r.big.posted != x->r.big.done) {
		uint64_t a = fix_nic_receive(x, true, 1500, 0);
		assert_true(a != 0);
		assert_int_equal(rings_rx_burst(&x->r, &pkts[held], 1), 1);
		assert_int_equal(pkts[held]->iova + MYRIO_PKT_HEADROOM, a); /* still in step */
		held++;
	}
	/* 62 delivered; the 2 recycled buffers wait in the pool for a whole group of 8 */
	assert_int_equal(held, 62);
	assert_int_equal(myrio_pool_free_count(x->big_pool), 2);
	assert_true(x->r.big.refill_failed > 0);
	fix_nic_complete(x, 1500, 0);
	struct myrio_pkt *one[1];
	assert_int_equal(rings_rx_burst(&x->r, one, 1), 0);
	assert_int_equal(x->r.rx_bad_completion, 3);
	/* the application gives the buffers back: the ring fills again */
	myrio_pkt_free_bulk(pkts, held);
	assert_int_equal(rings_rx_burst(&x->r, one, 1), 0);
	assert_int_equal(x->r.big.posted - x->r.big.done, 64);
	fix_free(x);
}

/* A burst longer than the posted buffers of one ring: entries up to the smaller count are
 * taken without per-entry ring checks, the rest with them; frames stay in order and in
 * their own buffers, and a big frame with no big buffer left is a counted drop that ends
 * the burst. */
static void burst_beyond_posted_buffers(void **state)
{
	(void)state;
	struct fix *x = fix_posted(64, 0);
	struct myrio_pkt *held[64], *pkts[32];
	/* hold 58 big frames: the pool is empty, 6 big buffers stay posted */
	for (int i = 0; i < 58; i++) {
		assert_true(fix_nic_receive(x, true, 1000, 0) != 0);
		assert_int_equal(rings_rx_burst(&x->r, &held[i], 1), 1);
	}
	assert_int_equal(x->r.big.posted - x->r.big.done, 6);
	/* 4 small, 6 big, 2 big without a buffer, 3 small */
	uint64_t want[13];
	uint16_t lens[13];
	unsigned k = 0;
	for (int i = 0; i < 4; i++, k++) {
		lens[k] = (uint16_t)(60 + i);
		want[k] = fix_nic_receive(x, false, lens[k], (uint16_t)(0x1000 + k));
	}
	for (int i = 0; i < 6; i++, k++) {
		lens[k] = (uint16_t)(300 + i);
		want[k] = fix_nic_receive(x, true, lens[k], (uint16_t)(0x1000 + k));
	}
	fix_nic_complete(x, 1400, 0);
	fix_nic_complete(x, 1401, 0);
	for (int i = 0; i < 3; i++, k++) {
		lens[k] = (uint16_t)(70 + i);
		want[k] = fix_nic_receive(x, false, lens[k], (uint16_t)(0x1000 + k));
	}
	/* a bad entry ends a burst: what follows may be out of step (the port resets) */
	uint16_t got = rings_rx_burst(&x->r, pkts, 32);
	assert_int_equal(got, 10);
	assert_int_equal(x->r.rx_bad_completion, 1);
	assert_int_equal(rings_rx_burst(&x->r, pkts + got, 32 - got), 0);
	assert_int_equal(x->r.rx_bad_completion, 2);
	got += rings_rx_burst(&x->r, pkts + got, 32 - got);
	assert_int_equal(got, 13);
	for (unsigned i = 0; i < 13; i++) {
		assert_int_equal(pkts[i]->iova + MYRIO_PKT_HEADROOM, want[i]);
		assert_int_equal(pkts[i]->len, lens[i]);
		assert_int_equal(pkts[i]->data_off, MYRIO_PKT_HEADROOM + MCP_RX_PAD);
		assert_int_equal(pkts[i]->rx_csum, 0x1000 + i);
		assert_int_equal(pkts[i]->ol_flags, MYRIO_PKT_RX_CSUM_PARTIAL);
		assert_int_equal(pkts[i]->refcnt, 1);
		assert_null(pkts[i]->next);
	}
	myrio_pkt_free_bulk(pkts, 13);
	myrio_pkt_free_bulk(held, 58);
	fix_free(x);
}

/* Dropped entries use up buffers too: a burst with more entries than posted buffers, many
 * of them impossible, never hands up a buffer that is not posted (nor one twice). */
static void dropped_entries_count_against_posted_buffers(void **state)
{
	(void)state;
	struct fix *x = fix_posted(16, 0);
	for (int i = 0; i < 10; i++)
		fix_nic_complete(x, 2000, 0); /* longer than the MTU: each drops a big buffer */
	for (int i = 0; i < 16; i++)
		fix_nic_complete(x, 1000, 0); /* only 6 big buffers are left for these */
	struct myrio_pkt *pkts[32];
	/* a bad entry ends a burst: burst until the 26 entries are gone (between bursts the
	 * ring is refilled from what the drops gave back) */
	unsigned got = 0;
	for (int b = 0; b < 64 && got + x->r.rx_bad_completion < 26; b++)
		got += rings_rx_burst(&x->r, pkts + got, (uint16_t)(32 - got));
	assert_int_equal(got + x->r.rx_bad_completion, 26);
	assert_true(got >= 6);
	for (unsigned i = 0; i < got; i++)
		for (unsigned k = 0; k < i; k++)
			assert_ptr_not_equal(pkts[i], pkts[k]);
	/* every big buffer is posted, free or held by us */
	assert_int_equal(x->r.big.posted - x->r.big.done + myrio_pool_free_count(x->big_pool) +
			     got,
			 x->big_pool->count);
	myrio_pkt_free_bulk(pkts, got);
	fix_free(x);
}

static void rx_token_returned_when_ring_empty(void **state)
{
	(void)state;
	struct fix *x = fix_posted(64, 32);
	struct myrio_pkt *pkts[8];
	for (int i = 0; i < 4; i++) {
		fix_nic_receive(x, false, 100, 0);
	}
	/* the NIC hands over the rx token with a status update */
	x->status->valid = MCP_VALID_RX;
	assert_int_equal(rings_rx_burst(&x->r, pkts, 2), 2); /* not empty yet */
	assert_int_equal(x->status->valid, 0);		     /* host cleared valid (MSI style) */
	assert_int_equal(fix_claim(x, 1), MCP_CLAIM_VALUE);  /* re-armed */
	assert_int_equal(fix_claim(x, 0), 0);
	assert_true(x->r.rx_token);
	myrio_pkt_free_bulk(pkts, 2);
	assert_int_equal(rings_rx_burst(&x->r, pkts, 8), 2); /* now empty */
	myrio_pkt_free_bulk(pkts, 2);
	assert_int_equal(fix_claim(x, 0), MCP_CLAIM_VALUE);
	assert_false(x->r.rx_token);
	fix_free(x);
}

static void link_and_counters_from_stats_update(void **state)
{
	(void)state;
	struct fix *x = fix_new(64, 64, 32, 1518);
	x->status->link_up = be32(1);
	x->status->dropped_no_small_buffer = be32(17);
	x->status->dropped_bad_crc32 = be32(3);
	x->status->rdma_tags_available = be32(15);
	x->status->stats_updated = 1;
	x->status->valid = MCP_VALID_TX;
	assert_int_equal(status_poll(&x->r), MCP_VALID_TX);
	assert_int_equal(x->r.link_up, 1);
	assert_int_equal(x->r.link_changes, 1);
	assert_int_equal(x->r.snap.dropped_no_small_buffer, 17);
	assert_int_equal(x->r.snap.dropped_bad_crc32, 3);
	/* without stats_updated the link fields are not looked at */
	x->status->link_up = be32(0);
	x->status->stats_updated = 0;
	x->status->valid = MCP_VALID_TX;
	status_poll(&x->r);
	assert_int_equal(x->r.link_up, 1);
	assert_int_equal(status_poll(&x->r), 0);
	fix_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(refill_posts_whole_ring_in_groups),
	    cmocka_unit_test(frames_delivered_in_order_across_wraps),
	    cmocka_unit_test(burst_limit_respected),
	    cmocka_unit_test(impossible_lengths_are_counted_drops),
	    cmocka_unit_test(burst_beyond_posted_buffers),
	    cmocka_unit_test(dropped_entries_count_against_posted_buffers),
	    cmocka_unit_test(rx_token_returned_when_ring_empty),
	    cmocka_unit_test(link_and_counters_from_stats_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
