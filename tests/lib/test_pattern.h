/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one byte pattern: the byte at stream offset i. Not periodic over any
 * segment or buffer size a test uses, so a byte delivered at the wrong offset (a resend
 * placed wrong, a lost or doubled segment) shows as a mismatch. Inline: tests fill and
 * check hundreds of MiB with it, a call per byte would be most of their time. */
#ifndef MYRIO_TEST_PATTERN_H
#define MYRIO_TEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint8_t test_pattern(uint64_t i)
{
	uint64_t x = (i >> 3) * 0x9E3779B97F4A7C15ULL; /* a new pseudo-random byte every 8 */
	return (uint8_t)((x >> 56) + i);
}

/* buf[k] = the pattern at stream offset off + k. */
static inline void test_pattern_fill(uint8_t *buf, size_t n, uint64_t off)
{
	for (size_t k = 0; k < n; k++)
		buf[k] = test_pattern(off + k);
}

/* How many of d[0..n) differ from the pattern at stream offset off; *first (if not NULL)
 * is set to the index of the first that does, when one does. */
static inline size_t test_pattern_check(const uint8_t *d, size_t n, uint64_t off, size_t *first)
{
	size_t bad = 0;
	for (size_t k = 0; k < n; k++)
		if (d[k] != test_pattern(off + k) && bad++ == 0 && first)
			*first = k;
	return bad;
}

#endif
