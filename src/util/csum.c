/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdatomic.h>

#include "util/csum.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* A folded partial sum adds like the words it stands for: 2^16 is 1 modulo 0xffff. */
uint64_t csum_add(uint64_t sum, const void *buf, size_t len)
{
	return sum + csum_partial16(buf, len);
}

#if defined(__x86_64__)
/* With AVX2, csum_copy16's rounds of 64 bytes: copied, and summed as native-order 16-bit
 * words. Each word is biased by -0x8000 (its top bit flipped) so that _mm256_madd_epi16,
 * which multiplies signed words, adds pairs of them exactly into 32-bit lanes: a pair
 * counts 0x10000 short, put back at the end (0x10000 is 1 modulo 0xffff, but the total
 * is kept exact). Three operations per 32 bytes where widening takes four. A lane takes
 * one pair per 64 bytes and overflows after 32768 of them (2 MiB): len is at most
 * AVX_CHUNK. Returns the total, not folded, native order. *done: the bytes handled, a
 * multiple of 64. */
#define AVX_CHUNK (1u << 20)
__attribute__((target("avx2"))) static uint64_t
copy_rounds_avx2(uint8_t *restrict d, const uint8_t *restrict s, size_t len, size_t *done)
{
	const __m256i bias = _mm256_set1_epi16((short)0x8000), one = _mm256_set1_epi16(1);
	__m256i a0 = _mm256_setzero_si256(), a1 = a0;
	size_t i = 0;
	/* 128 bytes a turn while they last: the loop's own instructions are paid half as
	 * often over a big frame's payload */
	for (; len - i >= 128; i += 128) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)(s + i));
		__m256i x1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
		__m256i x2 = _mm256_loadu_si256((const __m256i *)(s + i + 64));
		__m256i x3 = _mm256_loadu_si256((const __m256i *)(s + i + 96));
		_mm256_storeu_si256((__m256i *)(d + i), x0);
		_mm256_storeu_si256((__m256i *)(d + i + 32), x1);
		_mm256_storeu_si256((__m256i *)(d + i + 64), x2);
		_mm256_storeu_si256((__m256i *)(d + i + 96), x3);
		a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(x0, bias), one));
		a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_xor_si256(x1, bias), one));
		a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(x2, bias), one));
		a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_xor_si256(x3, bias), one));
	}
	if (len - i >= 64) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)(s + i));
		__m256i x1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
		_mm256_storeu_si256((__m256i *)(d + i), x0);
		_mm256_storeu_si256((__m256i *)(d + i + 32), x1);
		a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(x0, bias), one));
		a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_xor_si256(x1, bias), one));
		i += 64;
	}
	*done = i;
	int32_t l[16];
	_mm256_storeu_si256((__m256i *)l, a0);
	_mm256_storeu_si256((__m256i *)(l + 8), a1);
	int64_t t = (int64_t)(i / 4) * 0x10000; /* i / 4 pairs, each 0x10000 short */
	for (unsigned k = 0; k < 16; k++)
		t += l[k];
	return (uint64_t)t;
}

static bool have_avx2(void)
{
	static _Atomic int known; /* 0: not looked up yet, 1: no, 2: yes */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (__builtin_expect(!k, 0)) {
		__builtin_cpu_init();
		k = __builtin_cpu_supports("avx2") ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 2;
}
#endif

uint16_t csum_copy16(void *restrict dst, const void *restrict src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	uint64_t a = 0; /* native-order words; byte-swapped once at the end, as csum_partial16 */
#if defined(__x86_64__)
	if (len >= 64 && have_avx2()) {
		do {
			size_t done;
			a += copy_rounds_avx2(d, s, len < AVX_CHUNK ? len : AVX_CHUNK, &done);
			d += done, s += done, len -= done;
		} while (len >= 64);
	}
#endif
#ifdef __SSE2__
	if (len >= 16) { /* without AVX2, or what is left of its rounds */
		const __m128i z = _mm_setzero_si128();
		__m128i acc = z;
		do {
			__m128i x = _mm_loadu_si128((const __m128i *)s);
			_mm_storeu_si128((__m128i *)d, x);
			acc = _mm_add_epi64(acc, _mm_unpacklo_epi32(x, z));
			acc = _mm_add_epi64(acc, _mm_unpackhi_epi32(x, z));
			d += 16, s += 16, len -= 16;
		} while (len >= 16);
		uint64_t l[2];
		_mm_storeu_si128((__m128i *)l, acc);
		a += (l[0] & 0xffffffffu) + (l[0] >> 32) + (l[1] & 0xffffffffu) + (l[1] >> 32);
	}
#endif
	for (; len >= 8; d += 8, s += 8, len -= 8) {
		uint64_t x;
		memcpy(&x, s, 8);
		memcpy(d, &x, 8);
		a += (x & 0xffffffffu) + (x >> 32);
	}
	/* the last 1 to 7 bytes in fixed-size moves (a variable-length copy costs more than
	 * the rest of a short piece), as csum_partial16 sums them: the odd byte is the low
	 * byte of its native word, the high byte once swapped */
	if (len >= 4) {
		uint32_t x;
		memcpy(&x, s, 4);
		memcpy(d, &x, 4);
		a += x;
		d += 4, s += 4, len -= 4;
	}
	if (len >= 2) {
		uint16_t x;
		memcpy(&x, s, 2);
		memcpy(d, &x, 2);
		a += x;
		d += 2, s += 2, len -= 2;
	}
	if (len) {
		*d = *s;
		a += *s;
	}
	uint16_t sum = csum_fold(a);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap16(sum);
#else
	return sum;
#endif
}
