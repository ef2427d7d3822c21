/* SPDX-License-Identifier: BSD-3-Clause */
/* The RSS hash of a received frame, by the hash types of SET_RSS_ENABLE (§7.3). Where
 * nothing public defines a type, this is the definition the model and the driver share:
 *   1  IPv4: Toeplitz over source and destination address
 *   2  TCP/IPv4: Toeplitz over addresses and ports of TCP; other frames hash to 0
 *   3  both (Microsoft's RSS): TCP by the 4-tuple, other IPv4 by the addresses
 *   4  source port: the TCP/UDP source port as a number
 *   5  source and destination port: the two ports XORed (the same both ways)
 * Non-IPv4 frames hash to 0; so do fragments and frames without TCP/UDP ports for the port
 * types, which use the addresses' hash under type 3. */
#ifndef MYRIO_UTIL_RSS_HASH_H
#define MYRIO_UTIL_RSS_HASH_H

#include <stdint.h>
#include <string.h>

#include "util/byteorder.h"
#include "util/toeplitz.h"

enum {
	RSS_HASH_IPV4 = 1,
	RSS_HASH_TCP_IPV4,
	RSS_HASH_BOTH,
	RSS_HASH_SRC_PORT,
	RSS_HASH_SRC_DST_PORT
};

/* Toeplitz over n bytes of input, with whatever key (and table) ctx holds. */
typedef uint32_t (*rss_toeplitz_fn)(const void *ctx, const uint8_t *in, unsigned n);

/* The toeplitz of a key's table (ctx: a struct toeplitz_table), the model's and the
 * driver's. The functions below are inline so that it is inlined into them: the driver
 * hashes every packet a port of several queues receives, the model every frame it steers. */
static inline uint32_t rss_table_toeplitz(const void *tt, const uint8_t *in, unsigned n)
{
	return toeplitz_table_hash(tt, in, n);
}

/* The same for a flow given as its 12 bytes (addresses and ports, wire order) and proto. */
static inline uint32_t rss_tuple_hash(unsigned type, const uint8_t tuple[12], uint8_t proto,
				      int ports, rss_toeplitz_fn toeplitz, const void *ctx)
{
	switch (type) {
	case RSS_HASH_IPV4:
		return toeplitz(ctx, tuple, 8);
	case RSS_HASH_TCP_IPV4:
		return ports && proto == 6 ? toeplitz(ctx, tuple, 12) : 0;
	case RSS_HASH_BOTH: /* a constant length each: the lookups unroll */
		return ports && proto == 6 ? toeplitz(ctx, tuple, 12) : toeplitz(ctx, tuple, 8);
	case RSS_HASH_SRC_PORT:
		return ports ? get_be16(tuple + 8) : 0;
	case RSS_HASH_SRC_DST_PORT:
		return ports ? (uint32_t)(get_be16(tuple + 8) ^ get_be16(tuple + 10)) : 0;
	default:
		return 0;
	}
}

/* The hash of frame bytes fr[0, len) (Ethernet first) under type. */
static inline uint32_t rss_frame_hash(unsigned type, const uint8_t *fr, uint32_t len,
				      rss_toeplitz_fn toeplitz, const void *ctx)
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

#endif
