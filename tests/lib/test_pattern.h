/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one byte pattern: the byte at stream offset i. Not periodic over any
 * segment or buffer size a test uses, so a byte delivered at the wrong offset (a resend
 * placed wrong, a lost or doubled segment) shows as a mismatch. Inline: tests fill and
 * check hundreds of MiB with it, a call per byte would be most of their time. */
#ifndef MYRIO_TEST_PATTERN_H
#define MYRIO_TEST_PATTERN_H

#include <stdint.h>

static inline uint8_t test_pattern(uint64_t i)
{
	uint64_t x = (i >> 3) * 0x9E3779B97F4A7C15ULL; /* a new pseudo-random byte every 8 */
	return (uint8_t)((x >> 56) + i);
}

#endif
