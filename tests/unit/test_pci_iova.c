/* IOVA allocator: alignment, first fit, holes the IOMMU reports, reuse, exhaustion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>

#include "pci/iova.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(allocates_aligned_above_the_floor),
	    cmocka_unit_test(reuses_freed_space),
	    cmocka_unit_test(skips_holes_between_reported_ranges),
	    cmocka_unit_test(reports_exhaustion_and_bad_arguments),
	    cmocka_unit_test(survives_the_top_of_the_address_space),
	    cmocka_unit_test(random_allocations_never_overlap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
