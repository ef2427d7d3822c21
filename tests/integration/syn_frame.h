/* SPDX-License-Identifier: BSD-3-Clause */
/* A bare SYN (no options) in a minimum-size Ethernet frame, for the tests that flood a
 * stack with SYNs through a port of their own. */
#ifndef SYN_FRAME_H
#define SYN_FRAME_H

#include <stdint.h>
#include <string.h>

#include "ipv4_frame.h"

#define SYN_FRAME_LEN 60

static inline void syn_frame(uint8_t *f, const uint8_t dst_mac[6], uint32_t src, uint32_t dst,
			     uint16_t sport, uint16_t dport, uint32_t isn, uint16_t ip_id)
{
	static const uint8_t src_mac[6] = {0x02, 0x66, 0x66, 0x00, 0x00, 0x01};
	memset(f, 0, SYN_FRAME_LEN);
	uint8_t *t = ipv4_frame(f, dst_mac, src_mac, 6, 40, src, dst, ip_id);
	const uint8_t *ip = f + 14;
	put_be16(t, sport);
	put_be16(t + 2, dport);
	put_be32(t + 4, isn);
	t[12] = 5 << 4;
	t[13] = 0x02;
	put_be16(t + 14, 65535);
	uint8_t ph[12];
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 6;
	put_be16(ph + 10, 20);
	put_be16(t + 16, csum_finish(csum_add(csum_add(0, ph, 12), t, 20)));
}

#endif
