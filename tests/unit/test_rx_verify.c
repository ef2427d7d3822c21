/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio_rx_verify: a frame whose bytes sum to the checksum its NIC reported is "damaged
 * before the NIC" (1), one that does not is "not what the NIC wrote" (-EIO, and the port's
 * back-end is told once per such frame), one without a NIC checksum cannot be judged (0). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "port/port_ops.h"
#include "util/csum.h"

static unsigned mismatches;

static void count_mismatch(struct myrio_port *port)
{
	(void)port;
	mismatches++;
}

static const struct myrio_port_ops ops = {.rx_mismatch = count_mismatch};

/* A received frame of len bytes, with the NIC's sum of bytes [14, len) (§4.6). */
static struct myrio_pkt *frame(uint32_t len)
{
	struct myrio_pkt *p = aligned_alloc(64, sizeof(*p) + 2048);
	assert_non_null(p);
	memset(p, 0, sizeof(*p) + 2048);
	for (uint32_t i = 0; i < len; i++)
		p->buf[i] = (uint8_t)(i * 7 + 3);
	p->len = len;
	p->ol_flags = MYRIO_PKT_RX_CSUM_PARTIAL;
	p->rx_csum = csum_fold(csum_add(0, p->buf + 14, len - 14));
	return p;
}

static void bytes_as_reported(void **state)
{
	(void)state;
	struct myrio_port port = {.ops = &ops};
	mismatches = 0;
	struct myrio_pkt *p = frame(1514);
	assert_int_equal(myrio_rx_verify(&port, p), 1);
	p->buf[0] ^= 0xff; /* the Ethernet header is outside the NIC's sum */
	assert_int_equal(myrio_rx_verify(&port, p), 1);
	assert_int_equal(mismatches, 0);
	free(p);
}

static void bytes_not_as_reported(void **state)
{
	(void)state;
	struct myrio_port port = {.ops = &ops};
	mismatches = 0;
	struct myrio_pkt *p = frame(1514);
	p->buf[700] ^= 0x01;
	assert_int_equal(myrio_rx_verify(&port, p), -EIO);
	assert_int_equal(mismatches, 1);
	p->buf[700] ^= 0x01;
	p->len = 1000; /* cut short: the sum covered the whole frame */
	assert_int_equal(myrio_rx_verify(&port, p), -EIO);
	assert_int_equal(mismatches, 2);
	free(p);
}

/* 0x0000 and 0xffff are the same ones'-complement zero. */
static void both_zeros_agree(void **state)
{
	(void)state;
	struct myrio_port port = {.ops = &ops};
	mismatches = 0;
	struct myrio_pkt *p = frame(60);
	memset(p->buf + 14, 0, 46);
	p->rx_csum = 0xffff;
	assert_int_equal(myrio_rx_verify(&port, p), 1);
	p->rx_csum = 0;
	assert_int_equal(myrio_rx_verify(&port, p), 1);
	assert_int_equal(mismatches, 0);
	free(p);
}

static void nothing_to_compare(void **state)
{
	(void)state;
	struct myrio_port port = {.ops = &ops};
	mismatches = 0;
	struct myrio_pkt *p = frame(100);
	p->ol_flags = 0;
	p->buf[50] ^= 0x10;
	assert_int_equal(myrio_rx_verify(&port, p), 0);
	p->ol_flags = MYRIO_PKT_RX_CSUM_PARTIAL;
	p->len = 10; /* shorter than an Ethernet header */
	assert_int_equal(myrio_rx_verify(&port, p), 0);
	/* a back-end that cannot reset still gets the answer */
	struct myrio_port_ops none = {0};
	struct myrio_port bare = {.ops = &none};
	p->len = 100;
	assert_int_equal(myrio_rx_verify(&bare, p), -EIO);
	assert_int_equal(mismatches, 0);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bytes_as_reported),
		cmocka_unit_test(bytes_not_as_reported),
		cmocka_unit_test(both_zeros_agree),
		cmocka_unit_test(nothing_to_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
