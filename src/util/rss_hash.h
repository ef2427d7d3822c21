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

enum {
	RSS_HASH_IPV4 = 1,
	RSS_HASH_TCP_IPV4,
	RSS_HASH_BOTH,
	RSS_HASH_SRC_PORT,
	RSS_HASH_SRC_DST_PORT
};

/* Toeplitz over n bytes of input, with whatever key (and table) ctx holds. */
typedef uint32_t (*rss_toeplitz_fn)(const void *ctx, const uint8_t *in, unsigned n);

/* The hash of frame bytes fr[0, len) (Ethernet first) under type. */
uint32_t rss_frame_hash(unsigned type, const uint8_t *fr, uint32_t len, rss_toeplitz_fn toeplitz,
			const void *ctx);
/* The same for a flow given as its 12 bytes (addresses and ports, wire order) and proto. */
uint32_t rss_tuple_hash(unsigned type, const uint8_t tuple[12], uint8_t proto, int ports,
			rss_toeplitz_fn toeplitz, const void *ctx);

#endif
