/* The Internet checksum on the model's data path: native-order 32-bit loads into a 64-bit
 * accumulator, one byte swap at the end (the ones'-complement sum does not depend on byte
 * order, RFC 1071 §2(B)). Same result as csum_fold(csum_add(0, p, len)). */
#ifndef MYRIO_SIM_CSUM_FAST_H
#define MYRIO_SIM_CSUM_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t sim_csum16(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0;
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

#endif
