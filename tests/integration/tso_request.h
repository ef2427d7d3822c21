/* SPDX-License-Identifier: BSD-3-Clause */
/* A TSO request built by hand (§5.6): Ethernet + IPv4 + TCP headers in front of the first
 * payload, one packet per MSS of payload along next, the TCP checksum field seeded with
 * the pseudo-header sum over the whole request. */
#ifndef TSO_REQUEST_H
#define TSO_REQUEST_H

#include <string.h>

#include "ipv4_frame.h"
#include "myrio/pkt.h"

#define TSO_REQ_HDR 54u

/* segs packets from pool into pk, each mss payload bytes of `fill` (0: a pattern of the
 * offset); 0, or -1 when the pool ran dry. */
static inline int tso_request(struct myrio_pool *pool, const uint8_t dst[6], const uint8_t src[6],
			      uint32_t seq, unsigned segs, uint16_t mss, int fill,
			      struct myrio_pkt **pk)
{
	for (unsigned i = 0; i < segs; i++) {
		if (!(pk[i] = myrio_pkt_alloc(pool)))
			return -1;
		pk[i]->len = mss + (i ? 0 : TSO_REQ_HDR);
		uint8_t *d = myrio_pkt_data(pk[i]) + (i ? 0 : TSO_REQ_HDR);
		for (unsigned j = 0; j < mss; j++)
			d[j] = fill ? (uint8_t)fill : (uint8_t)(i * mss + j);
		pk[i]->next = NULL;
		if (i)
			pk[i - 1]->next = pk[i];
	}
	uint8_t *f = myrio_pkt_data(pk[0]), *ip = f + 14;
	memset(f, 0, TSO_REQ_HDR);
	uint32_t tcp_len = 20 + segs * (uint32_t)mss;
	uint8_t *t =
	    ipv4_frame(f, dst, src, 6, (uint16_t)(20 + tcp_len), 0x0a000001, 0x0a000002, 0x100);
	put_be16(t, 4000);
	put_be16(t + 2, 5000);
	put_be32(t + 4, seq);
	t[12] = 5 << 4;
	t[13] = 0x18; /* ACK|PSH */
	put_be16(t + 14, 65535);
	put_be16(t + 16, csum_fold(csum_add(0, ip + 12, 8) + 6 + tcp_len));
	pk[0]->ol_flags = MYRIO_PKT_TX_TSO;
	pk[0]->csum_start = 34;
	pk[0]->tso_hlen = TSO_REQ_HDR;
	pk[0]->tso_mss = mss;
	pk[0]->tso_npkts = (uint16_t)segs;
	return 0;
}

#endif
