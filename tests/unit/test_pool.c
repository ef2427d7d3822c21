/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet pools: O(1) alloc/free, bursts, refcounts, layout the NIC depends on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>

#include "mem/dma.h"
#include "myrio/pkt.h"

/* A pool of count buffers of at least size bytes in plain memory; it must be created. */
static struct myrio_pool *new_pool(uint32_t count, uint32_t size)
{
	struct myrio_pool *pool = NULL;
	assert_int_equal(myrio_pool_create_in(NULL, count, size, &pool), 0);
	return pool;
}

static void pool_hands_out_every_buffer_once(void **state)
{
	(void)state;
	struct myrio_pool *pool = new_pool(64, 1984);
	struct myrio_pkt *pkts[64];
	for (int i = 0; i < 64; i++) {
		pkts[i] = myrio_pkt_alloc(pool);
		assert_non_null(pkts[i]);
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(pkts[i], pkts[j]);
	}
	assert_null(myrio_pkt_alloc(pool));
	assert_int_equal(pool->alloc_failures, 1);
	myrio_pkt_free_bulk(pkts, 64);
	assert_int_equal(myrio_pool_free_count(pool), 64);
	myrio_pool_destroy(pool);
}

static void bulk_alloc_is_all_or_nothing(void **state)
{
	(void)state;
	struct myrio_pool *pool = new_pool(40, 1984);
	struct myrio_pkt *pkts[32];
	assert_int_equal(myrio_pkt_alloc_bulk(pool, pkts, 32), 32);
	assert_int_equal(myrio_pkt_alloc_bulk(pool, pkts, 32), 0);
	assert_int_equal(myrio_pool_free_count(pool), 8);
	myrio_pkt_free_bulk(pkts, 32);
	assert_int_equal(myrio_pool_free_count(pool), 40);
	myrio_pool_destroy(pool);
}

/* The rule a device asks for (the Myri-10G's small receive buffers, §4.4), when asked. */
static void bounded_buffers_are_aligned_and_stay_inside_a_4k_page(void **state)
{
	(void)state;
	struct myrio_pool *pool = NULL;
	assert_int_equal(myrio_pool_create_bounded(NULL, 100, 1600, 4096, &pool), 0);
	assert_int_equal(pool->elem_size, 2048);
	for (int i = 0; i < 100; i++) {
		struct myrio_pkt *p = myrio_pkt_alloc(pool);
		uintptr_t buf = (uintptr_t)p->buf;
		assert_int_equal(buf % 64, 0);
		assert_int_equal((buf + MYRIO_PKT_HEADROOM) / 4096, (buf + p->buf_len - 1) / 4096);
		assert_int_equal(p->data_off, MYRIO_PKT_HEADROOM);
		assert_true(p->buf_len >= 1600);
	}
	myrio_pool_destroy(pool);
}

/* Without a boundary, elements are only rounded to a cache line: no memory for a rule
 * nobody asked for. */
static void plain_pool_rounds_to_a_cache_line_only(void **state)
{
	(void)state;
	struct myrio_pool *pool = new_pool(100, 1600);
	assert_int_equal(pool->elem_size, 64 + 1600);
	assert_int_equal(pool->buf_len, 1600);
	myrio_pool_destroy(pool);
	assert_int_equal(myrio_pool_create(8, 1600, &pool), 0);
	assert_int_equal(pool->elem_size, 64 + 1600);
	myrio_pool_destroy(pool);
	assert_int_equal(myrio_pool_create_bounded(NULL, 8, 1600, 3000, &pool), -EINVAL);
}

static void refcount_keeps_a_buffer_until_the_last_holder(void **state)
{
	(void)state;
	struct myrio_pool *pool = new_pool(4, 512);
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	myrio_pkt_ref(p);
	myrio_pkt_free(p);
	assert_int_equal(myrio_pool_free_count(pool), 3);
	myrio_pkt_free(p);
	assert_int_equal(myrio_pool_free_count(pool), 4);
	myrio_pool_destroy(pool);
}

static void prepend_and_adj_respect_headroom(void **state)
{
	(void)state;
	struct myrio_pool *pool = new_pool(1, 512);
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	p->len = 10;
	assert_non_null(myrio_pkt_prepend(p, 54));
	assert_int_equal(p->len, 64);
	assert_null(myrio_pkt_prepend(p, MYRIO_PKT_HEADROOM));
	assert_non_null(myrio_pkt_adj(p, 14));
	assert_int_equal(p->len, 50);
	assert_null(myrio_pkt_adj(p, 51));
	myrio_pkt_free(p);
	myrio_pool_destroy(pool);
}

static void bad_sizes_are_refused(void **state)
{
	(void)state;
	struct myrio_pool *pool = (void *)1;
	assert_int_equal(myrio_pool_create_in(NULL, 0, 2048, &pool), -EINVAL);
	assert_null(pool);
	assert_int_equal(myrio_pool_create_in(NULL, 8, 16, &pool), -EINVAL);
	assert_int_equal(myrio_pool_create_in(NULL, 8, 1u << 20, &pool), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pool_hands_out_every_buffer_once),
	    cmocka_unit_test(bulk_alloc_is_all_or_nothing),
	    cmocka_unit_test(bounded_buffers_are_aligned_and_stay_inside_a_4k_page),
	    cmocka_unit_test(plain_pool_rounds_to_a_cache_line_only),
	    cmocka_unit_test(refcount_keeps_a_buffer_until_the_last_holder),
	    cmocka_unit_test(prepend_and_adj_respect_headroom),
	    cmocka_unit_test(bad_sizes_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
