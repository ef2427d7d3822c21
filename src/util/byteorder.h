/* SPDX-License-Identifier: BSD-3-Clause */
/* Explicit byte order for everything shared with the NIC or the wire. */
#ifndef MYRIO_BYTEORDER_H
#define MYRIO_BYTEORDER_H

#include <stdint.h>
#include <string.h>

/* Host order <-> big-endian (each is its own inverse). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static inline uint16_t be16(uint16_t v) { return v; }
static inline uint32_t be32(uint32_t v) { return v; }
static inline uint64_t be64(uint64_t v) { return v; }
#else
#error "libmyrio: unknown host byte order"
#endif

/* Unaligned big-endian loads and stores for packet headers. */
static inline uint16_t get_be16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return be16(v);
}
static inline uint32_t get_be32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return be32(v);
}
static inline void put_be16(void *p, uint16_t v)
{
	v = be16(v);
	memcpy(p, &v, 2);
}
static inline void put_be32(void *p, uint32_t v)
{
	v = be32(v);
	memcpy(p, &v, 4);
}

#endif
