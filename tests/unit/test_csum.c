/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum against RFC 1071's worked example and a real IPv4 header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/csum.h"

static void rfc1071_example(void **state)
{
	(void)state;
	const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	assert_int_equal(csum_fold(csum_add(0, b, sizeof(b))), 0xddf2);
}

static void ipv4_header_verifies_to_ffff(void **state)
{
	(void)state;
	const uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			     0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	assert_int_equal(csum_fold(csum_add(0, h, sizeof(h))), 0xffff);
	uint8_t z[sizeof(h)];
	for (size_t i = 0; i < sizeof(h); i++)
		z[i] = h[i];
	z[10] = z[11] = 0;
	assert_int_equal(csum_finish(csum_add(0, z, sizeof(z))), 0xb861);
}

static void odd_length_pads_with_zero(void **state)
{
	(void)state;
	const uint8_t a[] = {0x12, 0x34, 0x56};
	const uint8_t b[] = {0x12, 0x34, 0x56, 0x00};
	assert_int_equal(csum_fold(csum_add(0, a, 3)), csum_fold(csum_add(0, b, 4)));
}

static void add_and_sub_are_inverse(void **state)
{
	(void)state;
	assert_int_equal(csum16_sub(csum16_add(0x1234, 0xfedc), 0xfedc), 0x1234);
}

/* RFC 1071's definition word by word, against the one implementation at every length and
 * alignment up to 300 bytes, on bytes that carry often. */
static uint16_t by_definition(const uint8_t *p, size_t len)
{
	uint32_t s = 0;
	for (size_t i = 0; i < len; i += 2) {
		s += (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);
		s = (s & 0xffffu) + (s >> 16);
	}
	return (uint16_t)s;
}

static void every_length_and_alignment_matches_the_definition(void **state)
{
	(void)state;
	uint8_t buf[320];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 24) | 0xf0; /* mostly high bytes: many carries */
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= 300; len++) {
			uint16_t want = by_definition(buf + off, len);
			assert_int_equal(csum_fold(csum_add(0, buf + off, len)), want);
			assert_int_equal(csum_partial16(buf + off, len), want);
		}
}

/* Jumbo frames and TSO requests take the long loop many times: lengths around its
 * multiples, at every alignment, on all-ones bytes (the most carries) and on random ones. */
static void long_buffers_match_the_definition(void **state)
{
	(void)state;
	static uint8_t buf[9100];
	static const size_t lens[] = {63, 64, 65, 127, 128, 1460, 1514, 4095, 4096, 8999, 9018, 9090};
	uint32_t x = 777;
	for (int fill = 0; fill < 2; fill++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = fill ? (uint8_t)(x >> 24) : 0xff;
		}
		for (size_t off = 0; off < 8; off++)
			for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
				assert_int_equal(csum_partial16(buf + off, lens[k]),
						 by_definition(buf + off, lens[k]));
	}
}

/* The copy that sums: the same sum as the definition, every byte copied and none beyond,
 * at every length up to 300 and the long ones, every source and destination alignment, on
 * all-ones bytes (the most carries) and random ones. */
static void copy_and_sum_copies_and_sums_like_the_definition(void **state)
{
	(void)state;
	static uint8_t src[9100], dst[9100 + 16];
	static const size_t lens[] = {1460, 1514, 4095, 4096, 8999, 9018, 9090};
	uint32_t x = 4242;
	for (int fill = 0; fill < 2; fill++) {
		for (size_t i = 0; i < sizeof(src); i++) {
			x = x * 1103515245u + 12345u;
			src[i] = fill ? (uint8_t)(x >> 24) : 0xff;
		}
		for (size_t len = 0; len <= 300 + sizeof(lens) / sizeof(lens[0]); len++) {
			size_t n = len <= 300 ? len : lens[len - 301];
			for (size_t so = 0; so < 4; so++)
				for (size_t dof = 0; dof < 4; dof++) {
					memset(dst, 0x5a, sizeof(dst));
					assert_int_equal(csum_copy16(dst + dof, src + so, n),
							 by_definition(src + so, n));
					assert_memory_equal(dst + dof, src + so, n);
					for (size_t i = 0; i < dof; i++)
						assert_int_equal(dst[i], 0x5a);
					assert_int_equal(dst[dof + n], 0x5a);
				}
		}
	}
}

/* Buffers longer than the vector rounds take at once (their 32-bit lanes are emptied
 * every MiB): all-ones bytes, the largest words, and random ones. */
static void copy_and_sum_past_a_mebibyte(void **state)
{
	(void)state;
	static uint8_t src[(3u << 20) + 77], dst[sizeof(src)];
	uint32_t x = 99;
	for (int fill = 0; fill < 2; fill++) {
		for (size_t i = 0; i < sizeof(src); i++) {
			x = x * 1103515245u + 12345u;
			src[i] = fill ? (uint8_t)(x >> 24) : 0xff;
		}
		static const size_t lens[] = {1u << 20, (1u << 20) + 64, sizeof(src) - 1};
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			memset(dst, 0, sizeof(dst));
			assert_int_equal(csum_copy16(dst, src + 1, lens[k]),
					 by_definition(src + 1, lens[k]));
			assert_memory_equal(dst, src + 1, lens[k]);
		}
	}
}

/* The NIC's transmit offload rule (§5.5): offsets with the field inside the summed range
 * and the frame, a zero complement stored as 0xFFFF. */
static void tx_offload_rule(void **state)
{
	(void)state;
	uint8_t f[64] = {0};
	assert_true(csum_tx_offsets_ok(64, 34, 34));
	assert_true(csum_tx_offsets_ok(64, 34, 62));
	assert_false(csum_tx_offsets_ok(64, 34, 63));		/* past the end */
	assert_false(csum_tx_offsets_ok(64, 40, 34));		/* before csum_start */
	assert_false(csum_tx_offsets_ok(1, 0, UINT32_MAX - 1)); /* field + 2 would wrap */
	memset(f, 0xA5, sizeof(f));
	assert_false(csum_tx_fill(f, 64, 40, 34));
	assert_int_equal(get_be16(f + 34), 0xA5A5); /* refused: nothing written */
	memset(f, 0, sizeof(f));
	put_be16(f + 50, 0xFFFF); /* sums to all ones: the complement is 0 */
	assert_true(csum_tx_fill(f, 64, 34, 50));
	assert_int_equal(get_be16(f + 50), 0xFFFF);
	assert_int_equal(csum_tx_value(0x1234), (uint16_t)~0x1234);
	assert_int_equal(csum_tx_value(0xFFFF), 0xFFFF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc1071_example),
		cmocka_unit_test(ipv4_header_verifies_to_ffff),
		cmocka_unit_test(odd_length_pads_with_zero),
		cmocka_unit_test(add_and_sub_are_inverse),
		cmocka_unit_test(every_length_and_alignment_matches_the_definition),
		cmocka_unit_test(long_buffers_match_the_definition),
		cmocka_unit_test(copy_and_sum_copies_and_sums_like_the_definition),
		cmocka_unit_test(copy_and_sum_past_a_mebibyte),
		cmocka_unit_test(tx_offload_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
