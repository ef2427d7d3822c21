/* SPDX-License-Identifier: BSD-3-Clause */
/* The in-memory pair port: frames cross intact, the sender's buffer stays referenced until
 * the receiver took it, offloads are emulated, faults are seeded and repeatable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mem/dma.h"
#include "port/port_ops.h"
#include "util/byteorder.h"
#include "util/csum.h"

struct ends {
	struct myrio_port *a, *b;
	struct myrio_pool *pool;
};

static void open_ends(struct ends *e, const char *name, const char *opts)
{
	char dev[96];
	snprintf(dev, sizeof(dev), "pair:%s/0%s", name, opts ? opts : "");
	assert_int_equal(myrio_pair_port_open(dev, NULL, &e->a), 0);
	snprintf(dev, sizeof(dev), "pair:%s/1", name);
	assert_int_equal(myrio_pair_port_open(dev, NULL, &e->b), 0);
	assert_int_equal(myrio_pool_create_in(NULL, 256, 1984, &e->pool), 0);
}

static void close_ends(struct ends *e)
{
	e->b->ops->close(e->b);
	e->a->ops->close(e->a);
	assert_int_equal(myrio_pool_free_count(e->pool), e->pool->count);
	myrio_pool_destroy(e->pool);
}

static struct myrio_pkt *frame(struct ends *e, uint32_t tag, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(e->pool);
	memset(myrio_pkt_data(p), 0, len);
	put_be32(myrio_pkt_data(p) + 14, tag);
	p->len = len;
	return p;
}

static unsigned drain(struct myrio_port *b, uint32_t *tags, unsigned max)
{
	struct myrio_pkt *in[64];
	unsigned n = 0;
	uint16_t k;
	while ((k = b->ops->rx_burst(b, in, 64)) > 0) {
		for (uint16_t i = 0; i < k; i++) {
			if (n < max)
				tags[n] = get_be32(myrio_pkt_data(in[i]) + 14);
			n++;
		}
		myrio_pkt_free_bulk(in, k);
	}
	return n;
}

static void frames_cross_and_buffers_come_home(void **state)
{
	struct ends e;
	open_ends(&e, "pp1", NULL);
	struct myrio_pkt *p = frame(&e, 7, 100);
	assert_int_equal(e.a->ops->tx_burst(e.a, &p, 1), 1);
	assert_int_equal(myrio_pool_free_count(e.pool), 255); /* the "NIC" holds it */
	struct myrio_pkt *in;
	assert_int_equal(e.b->ops->rx_burst(e.b, &in, 1), 1);
	assert_int_equal(in->len, 100);
	assert_int_equal(get_be32(myrio_pkt_data(in) + 14), 7);
	assert_ptr_not_equal(in->pool, e.pool); /* copied into b's own pool */
	assert_true(in->ol_flags & MYRIO_PKT_RX_CSUM_PARTIAL);
	assert_int_equal(in->rx_csum, csum_fold(csum_add(0, myrio_pkt_data(in) + 14, 86)));
	myrio_pkt_free(in);
	e.a->ops->tx_burst(e.a, NULL, 0); /* send completion */
	assert_int_equal(myrio_pool_free_count(e.pool), 256);
	struct myrio_port_info info;
	memset(&info, 0, sizeof(info));
	e.a->ops->info(e.a, &info);
	assert_int_equal(info.caps, MYRIO_CAP_TX_CSUM | MYRIO_CAP_RX_CSUM_PARTIAL | MYRIO_CAP_IRQ);
	assert_int_equal(e.a->ops->link(e.a), MYRIO_LINK_UP);
	close_ends(&e);
}

static void tx_checksum_is_filled_in_the_copy_only(void **state)
{
	struct ends e;
	open_ends(&e, "pp2", NULL);
	struct myrio_pkt *p = frame(&e, 1, 80);
	uint8_t *f = myrio_pkt_data(p);
	for (int i = 34; i < 80; i++)
		f[i] = (uint8_t)(i * 7);
	put_be16(f + 50, 0x1234); /* the seed a stack would leave */
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 34;
	p->csum_field = 50;
	uint8_t before[80];
	memcpy(before, f, 80);
	e.a->ops->tx_burst(e.a, &p, 1);
	struct myrio_pkt *in;
	assert_int_equal(e.b->ops->rx_burst(e.b, &in, 1), 1);
	const uint8_t *g = myrio_pkt_data(in);
	/* the receiver's check: the sum over [34, 80) plus the seed (the pseudo-header a
	 * stack would have put there) is all ones */
	assert_int_equal(csum16_add(csum_fold(csum_add(0, g + 34, 46)), 0x1234), 0xffff);
	/* the stored value is the inverted sum over [34, 80) with the seed in place */
	uint8_t tmp[46];
	memcpy(tmp, before + 34, 46);
	assert_int_equal(get_be16(g + 50), csum_finish(csum_add(0, tmp, 46)));
	assert_memory_equal(f, before, 80); /* the sender's buffer is untouched */
	myrio_pkt_free(in);
	close_ends(&e);
}

/* A sum that complements to 0 goes out as 0xFFFF, as the NIC stores it, whatever the
 * protocol: here a TCP header's field (16 bytes into the L4 header). */
static void tx_checksum_zero_goes_out_as_ffff(void **state)
{
	(void)state;
	struct ends e;
	open_ends(&e, "pp_zero", NULL);
	struct myrio_pkt *p = frame(&e, 0, 80);
	put_be16(myrio_pkt_data(p) + 50, 0xFFFF); /* the only non-zero word from 34 on */
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 34;
	p->csum_field = 50;
	e.a->ops->tx_burst(e.a, &p, 1);
	struct myrio_pkt *in;
	assert_int_equal(e.b->ops->rx_burst(e.b, &in, 1), 1);
	assert_int_equal(get_be16(myrio_pkt_data(in) + 50), 0xFFFF);
	myrio_pkt_free(in);
	close_ends(&e);
}

static void nocsum_offers_no_offloads(void **state)
{
	struct ends e;
	open_ends(&e, "pp3", "?nocsum");
	struct myrio_port_info info;
	memset(&info, 0, sizeof(info));
	e.a->ops->info(e.a, &info);
	assert_int_equal(info.caps, MYRIO_CAP_IRQ); /* nocsum: no offloads */
	close_ends(&e);
}

static unsigned run_faults(const char *name, const char *opts, uint32_t *tags, unsigned max)
{
	struct ends e;
	open_ends(&e, name, opts);
	unsigned got = 0;
	for (uint32_t i = 0; i < 2000; i++) {
		struct myrio_pkt *p = frame(&e, i, 64);
		assert_int_equal(e.a->ops->tx_burst(e.a, &p, 1), 1);
		if (i % 16 == 15)
			got +=
			    drain(e.b, tags + (got < max ? got : max), got < max ? max - got : 0);
	}
	got += drain(e.b, tags + (got < max ? got : max), got < max ? max - got : 0);
	close_ends(&e);
	return got;
}

static void faults_are_seeded_and_repeatable(void **state)
{
	static uint32_t t1[4000], t2[4000], t3[4000];
	unsigned n1 = run_faults("pp4", "?loss=0.05,dup=0.05,reorder=0.05,seed=9", t1, 4000);
	unsigned n2 = run_faults("pp5", "?loss=0.05,dup=0.05,reorder=0.05,seed=9", t2, 4000);
	unsigned n3 = run_faults("pp6", "?loss=0.05,dup=0.05,reorder=0.05,seed=10", t3, 4000);
	assert_int_equal(n1, n2);
	assert_memory_equal(t1, t2, n1 * sizeof(uint32_t));
	assert_true(n1 != n3 || memcmp(t1, t3, n1 * sizeof(uint32_t)) != 0);
	/* about 5% lost, 5% duplicated: the count stays near 2000 */
	assert_true(n1 > 1850 && n1 < 2150);
	unsigned dups = 0, inversions = 0, seen_missing = 0;
	for (unsigned i = 1; i < n1; i++) {
		if (t1[i] == t1[i - 1])
			dups++;
		else if (t1[i] < t1[i - 1])
			inversions++;
	}
	for (uint32_t v = 0; v < 2000; v++) {
		bool found = false;
		for (unsigned i = 0; i < n1 && !found; i++)
			found = t1[i] == v;
		seen_missing += !found;
	}
	assert_true(dups > 50 && dups < 160);
	assert_true(inversions > 50 && inversions < 160);
	assert_true(seen_missing > 50 && seen_missing < 160);
}

static void bad_names_are_refused(void **state)
{
	struct myrio_port *p;
	assert_int_equal(myrio_pair_port_open("pair:x", NULL, &p), -EINVAL);
	assert_int_equal(myrio_pair_port_open("pair:x/2", NULL, &p), -EINVAL);
	assert_int_equal(myrio_pair_port_open("pair:x/0?bogus=1", NULL, &p), -EINVAL);
	assert_int_equal(myrio_pair_port_open("pair:x/0?ring=3", NULL, &p), -EINVAL);
	assert_int_equal(myrio_pair_port_open("pair:y/0", NULL, &p), 0);
	struct myrio_port *q;
	assert_int_equal(myrio_pair_port_open("pair:y/0", NULL, &q), -EBUSY);
	p->ops->close(p);
}

/* myrio_port_tx_drain waits for the buffers the peer has not taken yet, and returns once
 * it took them. The interrupt eventfd is raised by a frame after an arm, or at once when
 * one already waits. */
static void tx_drain_and_interrupts(void **state)
{
	(void)state;
	struct ends e;
	open_ends(&e, "drain", NULL);
	int fd = myrio_port_irq_fd(e.b);
	assert_true(fd >= 0);
	uint64_t v;
	assert_int_equal(myrio_port_irq_arm(e.b), 0);
	assert_int_equal(read(fd, &v, sizeof(v)), -1); /* nothing yet */
	struct myrio_pkt *p[4];
	for (uint32_t i = 0; i < 4; i++)
		p[i] = frame(&e, i, 64);
	assert_int_equal(e.a->ops->tx_burst(e.a, p, 4), 4);
	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v)); /* raised by the frames */
	assert_int_equal(myrio_port_tx_drain(e.a, e.pool, 5), -ETIMEDOUT);
	assert_int_equal(myrio_port_irq_arm(e.b), 0); /* frames wait: raised at once */
	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	uint32_t tags[4];
	assert_int_equal(drain(e.b, tags, 4), 4);
	assert_int_equal(myrio_port_tx_drain(e.a, e.pool, 1000), 0);
	assert_int_equal(myrio_pool_free_count(e.pool), e.pool->count);
	close_ends(&e);
}

/* A pool destroyed while the peer has not read its frames yet stays until they are back:
 * the peer reads them intact, and the pool goes when the end closes. */
static void pool_destroyed_with_frames_in_flight(void **state)
{
	(void)state;
	struct ends e;
	open_ends(&e, "early", NULL);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(e.a, 64, 1984, &pool), 0);
	struct myrio_pkt *p[4];
	for (uint32_t i = 0; i < 4; i++) {
		p[i] = myrio_pkt_alloc(pool);
		memset(myrio_pkt_data(p[i]), 0, 64);
		put_be32(myrio_pkt_data(p[i]) + 14, 100 + i);
		p[i]->len = 64;
	}
	assert_int_equal(e.a->ops->tx_burst(e.a, p, 4), 4);
	myrio_pool_destroy(pool); /* the frames are still on the link */
	uint32_t tags[4];
	assert_int_equal(drain(e.b, tags, 4), 4);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(tags[i], 100 + i);
	close_ends(&e); /* a's close takes the frames back and releases the pool */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(frames_cross_and_buffers_come_home),
	    cmocka_unit_test(tx_checksum_is_filled_in_the_copy_only),
	    cmocka_unit_test(tx_checksum_zero_goes_out_as_ffff),
	    cmocka_unit_test(nocsum_offers_no_offloads),
	    cmocka_unit_test(faults_are_seeded_and_repeatable),
	    cmocka_unit_test(bad_names_are_refused),
	    cmocka_unit_test(tx_drain_and_interrupts),
	    cmocka_unit_test(pool_destroyed_with_frames_in_flight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
