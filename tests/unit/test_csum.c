/* The Internet checksum against RFC 1071's worked example and a real IPv4 header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc1071_example),
		cmocka_unit_test(ipv4_header_verifies_to_ffff),
		cmocka_unit_test(odd_length_pads_with_zero),
		cmocka_unit_test(add_and_sub_are_inverse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
