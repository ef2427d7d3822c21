/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethernet + IPv4 headers (no options) in front of a test frame built by hand. */
#ifndef IPV4_FRAME_H
#define IPV4_FRAME_H

#include <stdint.h>
#include <string.h>

#include "util/byteorder.h"
#include "util/csum.h"

/* Writes the 34 bytes of headers at f, the IPv4 checksum included; returns the L4 header. */
static inline uint8_t *ipv4_frame(uint8_t *f, const uint8_t dst_mac[6], const uint8_t src_mac[6],
				  uint8_t proto, uint16_t ip_len, uint32_t src, uint32_t dst,
				  uint16_t ip_id)
{
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	put_be16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put_be16(ip + 2, ip_len);
	put_be16(ip + 4, ip_id);
	ip[8] = 64;
	ip[9] = proto;
	put_be32(ip + 12, src);
	put_be32(ip + 16, dst);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
	return ip + 20;
}

#endif
