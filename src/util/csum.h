/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum (RFC 1071), shared by the stack, the driver's offload set-up and the
 * device model's receive sum (spec §4.6) and transmit offload (§5.5). */
#ifndef MYRIO_CSUM_H
#define MYRIO_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/byteorder.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The folded ones'-complement sum of buf read as big-endian 16-bit words (an odd length
 * pads with a zero byte): native-order 32-bit words added into 64-bit accumulators and one
 * byte swap at the end, since the sum does not depend on byte order (RFC 1071 §2(B)). With
 * SSE2 (every x86-64) 64 bytes a round go into four 64-bit lanes, words zero-extended by
 * unpacking: 2.5 times fewer instructions than the scalar loop, which the model pays on
 * every byte it receives (a 64-bit lane overflows after 2^32 words: 16 GiB). Inline: the
 * model sums every frame it moves. The one implementation of the tree. */
static inline uint16_t csum_partial16(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0;
#ifdef __SSE2__
	if (len >= 64) {
		const __m128i z = _mm_setzero_si128();
		__m128i s0 = z, s1 = z;
		do {
			__m128i x0 = _mm_loadu_si128((const __m128i *)p);
			__m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
			__m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
			__m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
			s0 = _mm_add_epi64(s0, _mm_unpacklo_epi32(x0, z));
			s1 = _mm_add_epi64(s1, _mm_unpackhi_epi32(x0, z));
			s0 = _mm_add_epi64(s0, _mm_unpacklo_epi32(x1, z));
			s1 = _mm_add_epi64(s1, _mm_unpackhi_epi32(x1, z));
			s0 = _mm_add_epi64(s0, _mm_unpacklo_epi32(x2, z));
			s1 = _mm_add_epi64(s1, _mm_unpackhi_epi32(x2, z));
			s0 = _mm_add_epi64(s0, _mm_unpacklo_epi32(x3, z));
			s1 = _mm_add_epi64(s1, _mm_unpackhi_epi32(x3, z));
			p += 64;
			len -= 64;
		} while (len >= 64);
		uint64_t l[4];
		_mm_storeu_si128((__m128i *)l, s0);
		_mm_storeu_si128((__m128i *)(l + 2), s1);
		/* 2^32 is 1 modulo 0xffff: a lane's halves add like the lane */
		a = (l[0] & 0xffffffffu) + (l[0] >> 32) + (l[1] & 0xffffffffu) + (l[1] >> 32);
		b = (l[2] & 0xffffffffu) + (l[2] >> 32) + (l[3] & 0xffffffffu) + (l[3] >> 32);
	}
#endif
	while (len >= 16) {
		uint64_t x, y;
		memcpy(&x, p, 8);
		memcpy(&y, p + 8, 8);
		a += (x & 0xffffffffu) + (x >> 32);
		b += (y & 0xffffffffu) + (y >> 32);
		p += 16;
		len -= 16;
	}
	a += b;
	if (len >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		a += (x & 0xffffffffu) + (x >> 32);
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		uint32_t x;
		memcpy(&x, p, 4);
		a += x;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t x;
		memcpy(&x, p, 2);
		a += x;
		p += 2;
		len -= 2;
	}
	if (len)
		a += *p; /* little-endian: the odd byte is the high byte once swapped */
	a = (a & 0xffffffffu) + (a >> 32);
	a = (a & 0xffffffffu) + (a >> 32);
	a = (a & 0xffffu) + (a >> 16);
	a = (a & 0xffffu) + (a >> 16);
	a = (a & 0xffffu) + (a >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint16_t)__builtin_bswap16((uint16_t)a);
#else
	return (uint16_t)a;
#endif
}

/* Adds the bytes of buf, read as big-endian 16-bit words, to sum (not folded). An odd
 * length pads with a zero byte. */
uint64_t csum_add(uint64_t sum, const void *buf, size_t len);

/* Copies len bytes from src to dst (not overlapping) and returns csum_partial16(src, len):
 * one pass over the bytes where a memcpy and a sum would read them twice. The device
 * model's receive DMA takes its sums this way. With AVX2 (looked up once) 128 bytes a
 * round in four 32-byte registers. */
uint16_t csum_copy16(void *restrict dst, const void *restrict src, size_t len);

/* Folds to 16 bits; the ones'-complement sum, not inverted. */
static inline uint16_t csum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

/* The value that goes into a header's checksum field. */
static inline uint16_t csum_finish(uint64_t sum)
{
	return (uint16_t)~csum_fold(sum);
}

/* The NIC's transmit checksum offload (spec §5.5, myrio_pkt's csum_start and csum_field),
 * wherever it is carried out other than by the NIC: the device model, the driver's fallback
 * for offsets past the NIC's reach, the pair port and capture. The offsets it takes. */
static inline bool csum_tx_offsets_ok(uint32_t len, uint32_t start, uint32_t field)
{
	return start <= field && field <= len && len - field >= 2;
}

/* What it stores for the folded sum from csum_start to the end: the complement, and
 * 0xFFFF for 0 (the same in ones' complement) whatever the protocol, since UDP reads a
 * 0 as "no checksum". */
static inline uint16_t csum_tx_value(uint16_t sum)
{
	uint16_t v = (uint16_t)~sum;
	return v ? v : 0xFFFF;
}

/* Carries it out on the frame f of len bytes; false, and nothing written, for offsets
 * csum_tx_offsets_ok refuses. */
static inline bool csum_tx_fill(uint8_t *f, uint32_t len, uint32_t start, uint32_t field)
{
	if (!csum_tx_offsets_ok(len, start, field))
		return false;
	put_be16(f + field, csum_tx_value(csum_fold(csum_add(0, f + start, len - start))));
	return true;
}

/* Ones'-complement 16-bit add and subtract, for adjusting sums (VLAN tags, RFC 1624). */
static inline uint16_t csum16_add(uint16_t a, uint16_t b)
{
	uint32_t s = (uint32_t)a + b;
	return (uint16_t)((s & 0xffffu) + (s >> 16));
}
static inline uint16_t csum16_sub(uint16_t a, uint16_t b)
{
	return csum16_add(a, (uint16_t)~b);
}

#endif
