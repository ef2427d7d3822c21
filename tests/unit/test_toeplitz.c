/* SPDX-License-Identifier: BSD-3-Clause */
/* The Toeplitz hash (util/toeplitz.h): the bit-by-bit form is the reference, checked against
 * Microsoft's RSS verification suite; the lookup table the model and the driver hash with
 * must agree with it on the suite and on random keys and inputs of every length it takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/byteorder.h"
#include "util/toeplitz.h"

/* Microsoft's RSS verification suite (IPv4 and TCP/IPv4 with the default key). */
static const struct {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t ip, tcp;
} vectors[] = {
    {"66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178},
    {"199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea},
    {"24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a},
    {"38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f},
    {"153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2},
};

static void ip4(uint8_t *p, const char *s)
{
	unsigned a, b, c, d;
	assert_int_equal(sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
	p[0] = (uint8_t)a, p[1] = (uint8_t)b, p[2] = (uint8_t)c, p[3] = (uint8_t)d;
}

static void both_forms_match_the_verification_suite(void **state)
{
	(void)state;
	static struct toeplitz_table tt;
	toeplitz_table_init(&tt, toeplitz_default_key);
	for (unsigned i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint8_t t[12];
		ip4(t, vectors[i].src);
		ip4(t + 4, vectors[i].dst);
		put_be16(t + 8, vectors[i].sport);
		put_be16(t + 10, vectors[i].dport);
		assert_int_equal(toeplitz_hash(toeplitz_default_key, t, 8), vectors[i].ip);
		assert_int_equal(toeplitz_hash(toeplitz_default_key, t, 12), vectors[i].tcp);
		assert_int_equal(toeplitz_table_hash(&tt, t, 8), vectors[i].ip);
		assert_int_equal(toeplitz_table_hash(&tt, t, 12), vectors[i].tcp);
	}
}

/* xorshift64: reproducible, and every bit of key and input gets both values */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void table_agrees_with_the_reference_on_random_keys_and_inputs(void **state)
{
	(void)state;
	static struct toeplitz_table tt;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned checked = 0;
	for (unsigned k = 0; k < 64; k++) {
		uint8_t key[TOEPLITZ_KEY_LEN];
		for (unsigned i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)next(&x);
		if (k == 0) /* the edges: every key bit set, then (k == 1) none */
			memset(key, 0xff, sizeof(key));
		else if (k == 1)
			memset(key, 0, sizeof(key));
		toeplitz_table_init(&tt, key);
		for (unsigned j = 0; j < 64; j++) {
			uint8_t in[TOEPLITZ_TABLE_BYTES];
			for (unsigned i = 0; i < sizeof(in); i++)
				in[i] = (uint8_t)next(&x);
			if (j == 0)
				memset(in, 0xff, sizeof(in));
			for (unsigned n = 0; n <= TOEPLITZ_TABLE_BYTES; n++, checked++)
				if (toeplitz_table_hash(&tt, in, n) != toeplitz_hash(key, in, n))
					fail_msg(
					    "key %u input %u, %u bytes: table 0x%08x, reference "
					    "0x%08x",
					    k, j, n, toeplitz_table_hash(&tt, in, n),
					    toeplitz_hash(key, in, n));
		}
	}
	assert_true(checked > 50000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(both_forms_match_the_verification_suite),
	    cmocka_unit_test(table_agrees_with_the_reference_on_random_keys_and_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
