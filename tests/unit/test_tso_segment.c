/* SPDX-License-Identifier: BSD-3-Clause */
/* The segment headers of a TSO request (util/tso_segment.h), whose IPv4 header checksum
 * and pseudo-header sum start from sums taken once per request: each segment's must equal
 * the sum over its own bytes, for IPv4 headers with and without options, ids that wrap,
 * odd payloads, a short last segment, MSS 1 and MSS 9000, and IPv6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/byteorder.h"
#include "util/csum.h"
#include "util/tso_segment.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_rand(void) /* xorshift64 */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* A request's headers: Ethernet, IPv4 with opt_words of options (or IPv6), TCP with 12
 * option bytes; every other byte random. Returns the header length. */
static uint32_t make_request(uint8_t *f, bool v6, unsigned opt_words, struct tso_layout *l)
{
	for (unsigned i = 0; i < 128; i++)
		f[i] = (uint8_t)next_rand();
	put_be16(f + 12, v6 ? 0x86DD : 0x0800);
	l->l3 = 14;
	if (v6) {
		f[14] = 0x60;
		f[14 + 6] = 6;
		l->l4 = 14 + 40;
	} else {
		f[14] = (uint8_t)(0x40 | (5 + opt_words));
		f[14 + 9] = 6;
		l->l4 = 14 + 20 + 4 * opt_words;
	}
	f[l->l4 + 12] = 8 << 4; /* data offset: 32 bytes */
	l->hlen = l->l4 + 32;
	l->v6 = v6;
	return l->hlen;
}

/* The sums over the segment's own bytes, as a receiver checks them. */
static uint16_t ip_header_sum(const uint8_t *seg, const struct tso_layout *l)
{
	return csum_fold(csum_add(0, seg + l->l3, l->l4 - l->l3));
}
static uint16_t full_pseudo(const uint8_t *seg, const struct tso_layout *l, uint32_t tcp_len)
{
	if (l->v6)
		return csum_fold(csum_add(0, seg + l->l3 + 8, 32) + 6 + tcp_len);
	return csum_fold(csum_add(0, seg + l->l3 + 12, 8) + 6 + tcp_len);
}

/* Cuts a request of `payload` bytes at mss, segment after segment into one buffer as the
 * model does (the headers copied once), and checks every segment's sums. */
static void cut_and_check(bool v6, unsigned opt_words, uint32_t payload, uint32_t mss,
			  uint16_t id0)
{
	uint8_t req[128], seg[128];
	struct tso_layout l = {0};
	make_request(req, v6, opt_words, &l);
	if (!v6)
		put_be16(req + l.l3 + 4, id0);
	l.mss = mss;
	l.segs = payload ? (payload + mss - 1) / mss : 1;
	l.seq0 = get_be32(req + l.l4 + 4);
	l.id0 = v6 ? 0 : id0;
	l.flags0 = req[l.l4 + 13];
	tso_layout_sums(req, &l);
	memcpy(seg, req, l.hlen);
	for (uint32_t k = 0; k < l.segs; k++) {
		uint32_t plen = payload - k * mss < mss ? payload - k * mss : mss;
		tso_segment_headers(seg, &l, k, plen);
		uint32_t tcp_len = l.hlen - l.l4 + plen;
		assert_int_equal(csum_fold(tso_pseudo_sum(&l, tcp_len)),
				 full_pseudo(seg, &l, tcp_len));
		if (v6) {
			assert_int_equal(get_be16(seg + l.l3 + 4), tcp_len);
			continue;
		}
		assert_int_equal(ip_header_sum(seg, &l), 0xffff); /* the header verifies */
		assert_int_equal(get_be16(seg + l.l3 + 2), l.hlen - l.l3 + plen);
		assert_int_equal(get_be16(seg + l.l3 + 4), (uint16_t)(id0 + k));
		assert_int_not_equal(get_be16(seg + l.l3 + 10), 0xffff); /* never -0 */
		/* and it is what a full sum over the header with the field zeroed gives */
		uint8_t z[60];
		memcpy(z, seg + l.l3, l.l4 - l.l3);
		z[10] = z[11] = 0;
		assert_int_equal(get_be16(seg + l.l3 + 10), csum_finish(csum_add(0, z, l.l4 - l.l3)));
		/* the addresses and options are the request's */
		assert_int_equal(memcmp(seg + l.l3 + 12, req + l.l3 + 12, l.l4 - l.l3 - 12), 0);
	}
}

static void ipv4_every_segment(void **state)
{
	(void)state;
	static const uint32_t mss[] = {1, 7, 536, 1448, 1449, 8948, 9000};
	static const uint32_t payload[] = {1, 2, 1447, 1448, 1449, 2897, 65535, 65536 + 1023};
	for (unsigned m = 0; m < sizeof(mss) / sizeof(mss[0]); m++)
		for (unsigned p = 0; p < sizeof(payload) / sizeof(payload[0]); p++) {
			if (payload[p] / mss[m] > 4096)
				continue; /* MSS 1 over the largest requests: covered below */
			for (unsigned opt = 0; opt <= 10; opt += 5)
				cut_and_check(false, opt, payload[p], mss[m],
					      (uint16_t)next_rand());
		}
}

static void ipv4_options_and_wrapping_ids(void **state)
{
	(void)state;
	for (unsigned opt = 0; opt <= 10; opt++) {
		cut_and_check(false, opt, 3001, 1, 0xfff0); /* ids wrap past 0xffff */
		cut_and_check(false, opt, 9001, 1448, 0xffff);
		cut_and_check(false, opt, 65535, 9000, 0);
	}
}

static void random_headers(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 2000; i++) {
		uint32_t mss = 1 + next_rand() % 9000, payload = 1 + next_rand() % 66559;
		if (payload / mss > 512)
			mss = payload / 512 + 1;
		cut_and_check(false, next_rand() % 11, payload, mss, (uint16_t)next_rand());
	}
}

static void ipv6_pseudo_header(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 200; i++)
		cut_and_check(true, 0, 1 + next_rand() % 66559, 1448, 0);
	cut_and_check(true, 0, 4001, 1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ipv4_every_segment),
	    cmocka_unit_test(ipv4_options_and_wrapping_ids),
	    cmocka_unit_test(random_headers),
	    cmocka_unit_test(ipv6_pseudo_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
