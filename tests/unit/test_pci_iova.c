/* SPDX-License-Identifier: BSD-3-Clause */
/* IOVA allocator: alignment, first fit, holes the IOMMU reports, reuse, exhaustion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <linux/vfio.h>

#include "pci/iova.h"
#include "pci/vfio_dev.h"

#define MB (1ull << 20)

static void allocates_aligned_above_the_floor(void **state)
{
	(void)state;
	struct myrio_iova_space s;
	uint64_t a, b, c;
	myrio_iova_init(&s, NULL, 0);
	assert_int_equal(myrio_iova_alloc(&s, 4096, 4096, &a), 0);
	assert_int_equal(a, MYRIO_IOVA_FLOOR);
	assert_int_equal(myrio_iova_alloc(&s, 2 * MB, 2 * MB, &b), 0);
	assert_int_equal(b % (2 * MB), 0);
	assert_true(b >= a + 4096);
	assert_int_equal(myrio_iova_alloc(&s, 100, 4096, &c), 0);
	assert_int_equal(c, a + 4096); /* first fit: the gap below b */
	myrio_iova_fini(&s);
}

static void reuses_freed_space(void **state)
{
	(void)state;
	struct myrio_iova_space s;
	uint64_t a, b, c;
	myrio_iova_init(&s, NULL, 0);
	assert_int_equal(myrio_iova_alloc(&s, MB, 4096, &a), 0);
	assert_int_equal(myrio_iova_alloc(&s, MB, 4096, &b), 0);
	assert_int_equal(myrio_iova_free(&s, a), 0);
	assert_int_equal(myrio_iova_free(&s, a), -ENOENT);
	assert_int_equal(myrio_iova_free(&s, b + 4096), -ENOENT);
	assert_int_equal(myrio_iova_alloc(&s, MB, 4096, &c), 0);
	assert_int_equal(c, a);
	myrio_iova_fini(&s);
}

static void skips_holes_between_reported_ranges(void **state)
{
	(void)state;
	/* As VT-d reports it: everything but the interrupt window at 0xfee00000. */
	const struct myrio_iova_range r[] = {
	    {0, 0xfedfffffull},
	    {0xfef00000ull, (1ull << 39) - 1},
	};
	struct myrio_iova_space s;
	uint64_t a, b;
	myrio_iova_init(&s, r, 2);
	/* Fill the low range up to just below the hole. */
	assert_int_equal(myrio_iova_alloc(&s, 0xfee00000ull - MYRIO_IOVA_FLOOR - MB, 4096, &a), 0);
	assert_int_equal(a, MYRIO_IOVA_FLOOR);
	/* 2 MiB no longer fits below the hole: it must land above it, not across it. */
	assert_int_equal(myrio_iova_alloc(&s, 2 * MB, 4096, &b), 0);
	assert_true(b >= 0xfef00000ull);
	myrio_iova_fini(&s);
}

static void reports_exhaustion_and_bad_arguments(void **state)
{
	(void)state;
	const struct myrio_iova_range r[] = {{0, 4 * MB - 1}};
	struct myrio_iova_space s;
	uint64_t a;
	myrio_iova_init(&s, r, 1);
	assert_int_equal(myrio_iova_alloc(&s, 3 * MB, 4096, &a), 0);
	assert_int_equal(myrio_iova_alloc(&s, 4096, 4096, &a), -ENOMEM);
	assert_int_equal(myrio_iova_alloc(&s, 0, 4096, &a), -EINVAL);
	assert_int_equal(myrio_iova_alloc(&s, 4096, 3000, &a), -EINVAL);
	assert_int_equal(myrio_iova_alloc(&s, 4096, 0, &a), -EINVAL);
	myrio_iova_fini(&s);
}

static void survives_the_top_of_the_address_space(void **state)
{
	(void)state;
	const struct myrio_iova_range r[] = {{UINT64_MAX - 8 * MB + 1, UINT64_MAX}};
	struct myrio_iova_space s;
	uint64_t a, b;
	myrio_iova_init(&s, r, 1);
	assert_int_equal(myrio_iova_alloc(&s, 8 * MB, MB, &a), 0);
	assert_int_equal(a, UINT64_MAX - 8 * MB + 1);
	assert_int_equal(myrio_iova_alloc(&s, 4096, 4096, &b), -ENOMEM);
	assert_int_equal(myrio_iova_alloc(&s, 4096, 1ull << 63, &b), -ENOMEM);
	myrio_iova_fini(&s);
}

static void random_allocations_never_overlap(void **state)
{
	(void)state;
	struct myrio_iova_space s;
	uint64_t start[64] = {0}, len[64] = {0};
	myrio_iova_init(&s, NULL, 0);
	srand(7);
	for (int round = 0; round < 2000; round++) {
		int i = rand() % 64;
		if (len[i]) {
			assert_int_equal(myrio_iova_free(&s, start[i]), 0);
			len[i] = 0;
			continue;
		}
		uint64_t align = 4096ull << (rand() % 10);
		uint64_t l = 1 + (uint64_t)(rand() % (4 * (int)MB));
		assert_int_equal(myrio_iova_alloc(&s, l, align, &start[i]), 0);
		assert_int_equal(start[i] % align, 0);
		len[i] = l;
		for (int j = 0; j < 64; j++)
			if (j != i && len[j])
				assert_true(start[i] + len[i] <= start[j] ||
					    start[j] + len[j] <= start[i]);
	}
	myrio_iova_fini(&s);
}

/* A VFIO_IOMMU_GET_INFO answer built by hand: fixed part, then capabilities. */
struct info_buf {
	union {
		struct vfio_iommu_type1_info info;
		uint64_t words[64];
	};
};

static void put_cap(struct info_buf *b, uint32_t off, uint16_t id, uint32_t next)
{
	struct vfio_info_cap_header *h = (void *)((uint8_t *)b + off);
	h->id = id;
	h->version = 1;
	h->next = next;
}

static void put_ranges(struct info_buf *b, uint32_t off, uint32_t next, unsigned n)
{
	put_cap(b, off, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, next);
	struct vfio_iommu_type1_info_cap_iova_range *c = (void *)((uint8_t *)b + off);
	c->nr_iovas = n;
	for (unsigned i = 0; i < n; i++) {
		c->iova_ranges[i].start = 0x100000000ull * i;
		c->iova_ranges[i].end = 0x100000000ull * i + 0xfedfffff;
	}
}

static void parses_the_iova_range_capability(void **state)
{
	(void)state;
	struct info_buf b = {0};
	struct myrio_iova_range r[4];
	const uint32_t first = sizeof(struct vfio_iommu_type1_info);
	b.info.flags = VFIO_IOMMU_INFO_CAPS;
	b.info.cap_offset = first;
	/* Another capability first, then the ranges. */
	put_cap(&b, first, 99, first + 8);
	put_ranges(&b, first + 8, 0, 3);
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, sizeof(b), r, 4), 3);
	assert_int_equal(r[0].start, 0);
	assert_int_equal(r[0].last, 0xfedfffff);
	assert_int_equal(r[2].start, 0x200000000ull);
	/* max is respected */
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, sizeof(b), r, 2), 2);

	/* As Linux 6.1 answers: a 12-byte capability puts the ranges at an unaligned offset. */
	struct info_buf u = {0};
	uint8_t *raw = (uint8_t *)&u;
	struct vfio_info_cap_header h = {.id = 99, .version = 1, .next = first + 12};
	struct vfio_iommu_type1_info_cap_iova_range c = {
	    .header = {.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, .version = 1}, .nr_iovas = 1};
	struct vfio_iova_range one = {.start = 0x1000, .end = 0xfedfffff};
	u.info.flags = VFIO_IOMMU_INFO_CAPS;
	u.info.cap_offset = first;
	memcpy(raw + first, &h, sizeof(h));
	memcpy(raw + first + 12, &c, sizeof(c));
	memcpy(raw + first + 12 + sizeof(c), &one, sizeof(one));
	assert_int_equal(myrio_vfio_parse_iova_ranges(&u.info, sizeof(u), r, 4), 1);
	assert_int_equal(r[0].start, 0x1000);
	assert_int_equal(r[0].last, 0xfedfffff);
}

static void distrusts_malformed_answers(void **state)
{
	(void)state;
	struct info_buf b = {0};
	struct myrio_iova_range r[4];
	const uint32_t first = sizeof(struct vfio_iommu_type1_info);
	const size_t cap_len = sizeof(struct vfio_iommu_type1_info_cap_iova_range);
	b.info.cap_offset = first;
	put_ranges(&b, first, 0, 3);
	/* No capability flag: nothing. */
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, sizeof(b), r, 4), 0);
	b.info.flags = VFIO_IOMMU_INFO_CAPS;
	/* Truncated answer: only the ranges that fit. */
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, first + cap_len + 16, r, 4), 1);
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, first + 4, r, 4), 0);
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, 8, r, 4), 0);
	/* Offsets inside the fixed part or past the end. */
	b.info.cap_offset = 8;
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, sizeof(b), r, 4), 0);
	b.info.cap_offset = 0xfffffff8u;
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, sizeof(b), r, 4), 0);
	/* A chain that loops on itself ends. */
	b.info.cap_offset = first;
	put_cap(&b, first, 99, first);
	assert_int_equal(myrio_vfio_parse_iova_ranges(&b.info, sizeof(b), r, 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(allocates_aligned_above_the_floor),
	    cmocka_unit_test(reuses_freed_space),
	    cmocka_unit_test(skips_holes_between_reported_ranges),
	    cmocka_unit_test(reports_exhaustion_and_bad_arguments),
	    cmocka_unit_test(survives_the_top_of_the_address_space),
	    cmocka_unit_test(random_allocations_never_overlap),
	    cmocka_unit_test(parses_the_iova_range_capability),
	    cmocka_unit_test(distrusts_malformed_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
