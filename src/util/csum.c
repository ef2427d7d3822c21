#include "util/csum.h"

#include <string.h>

#include "util/byteorder.h"

uint64_t csum_add(uint64_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	/* 32-bit big-endian words into a 64-bit accumulator: carries are folded at the end. */
	while (len >= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		sum += be32(w);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}
