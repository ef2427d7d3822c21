/* SPDX-License-Identifier: BSD-3-Clause */
#include "util/rss_hash.h"

#include <string.h>

#include "util/byteorder.h"

uint32_t rss_tuple_hash(unsigned type, const uint8_t tuple[12], uint8_t proto, int ports,
			rss_toeplitz_fn toeplitz, const void *ctx)
{
	switch (type) {
	case RSS_HASH_IPV4:
		return toeplitz(ctx, tuple, 8);
	case RSS_HASH_TCP_IPV4:
		return ports && proto == 6 ? toeplitz(ctx, tuple, 12) : 0;
	case RSS_HASH_BOTH:
		return toeplitz(ctx, tuple, ports && proto == 6 ? 12 : 8);
	case RSS_HASH_SRC_PORT:
		return ports ? get_be16(tuple + 8) : 0;
	case RSS_HASH_SRC_DST_PORT:
		return ports ? (uint32_t)(get_be16(tuple + 8) ^ get_be16(tuple + 10)) : 0;
	default:
		return 0;
	}
}

uint32_t rss_frame_hash(unsigned type, const uint8_t *fr, uint32_t len, rss_toeplitz_fn toeplitz,
			const void *ctx)
{
	if (len < 34 || get_be16(fr + 12) != 0x0800)
		return 0;
	const uint8_t *ip = fr + 14;
	uint32_t ihl = (ip[0] & 0x0Fu) * 4;
	if (ip[0] >> 4 != 4 || ihl < 20)
		return 0;
	uint8_t proto = ip[9];
	int frag = (get_be16(ip + 6) & 0x3FFF) != 0;
	int ports = !frag && (proto == 6 || proto == 17) && 14 + ihl + 4 <= len;
	uint8_t tuple[12];
	memcpy(tuple, ip + 12, 8);
	if (ports)
		memcpy(tuple + 8, ip + ihl, 4);
	return rss_tuple_hash(type, tuple, proto, ports, toeplitz, ctx);
}
