/* Explicit byte order for everything shared with the NIC or the wire. */
#ifndef MYRIO_BYTEORDER_H
#define MYRIO_BYTEORDER_H

#include <stdint.h>
#include <string.h>

static inline uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }

/* Unaligned big-endian loads and stores for packet headers. */
static inline uint16_t get_be16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return __builtin_bswap16(v);
}
static inline uint32_t get_be32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}
static inline void put_be16(void *p, uint16_t v)
{
	v = __builtin_bswap16(v);
	memcpy(p, &v, 2);
}
static inline void put_be32(void *p, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

#endif
