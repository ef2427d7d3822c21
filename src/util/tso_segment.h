/* SPDX-License-Identifier: BSD-3-Clause */
/* How the NIC cuts a TSO request into segments (§5.6): the headers of segment k, shared
 * by the device model, which sends them, and by capture, which records them as they
 * leave the NIC. The TCP checksum is left to the caller (each sums its own way). */
#ifndef MYRIO_TSO_SEGMENT_H
#define MYRIO_TSO_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/byteorder.h"
#include "util/csum.h"

struct tso_layout {
	uint32_t l3, l4, hlen; /* offsets of the IP and TCP headers, header length */
	uint32_t mss, segs;    /* segs: the request's segment count */
	uint32_t seq0;	       /* the request's first sequence number, IP id, TCP flags */
	uint16_t id0;
	uint8_t flags0;
	bool v6;
};

/* Rewrites the headers at seg (a copy of the request's) for segment k of plen payload
 * bytes: IP length, IPv4 id and header checksum, TCP sequence and flags; the TCP checksum
 * field is zeroed. */
static inline void tso_segment_headers(uint8_t *seg, const struct tso_layout *t, uint32_t k,
				       uint32_t plen)
{
	uint32_t seglen = t->hlen + plen;
	if (t->v6) {
		put_be16(seg + t->l3 + 4, (uint16_t)(seglen - t->l3 - 40));
	} else {
		put_be16(seg + t->l3 + 2, (uint16_t)(seglen - t->l3));
		put_be16(seg + t->l3 + 4, (uint16_t)(t->id0 + k));
		put_be16(seg + t->l3 + 10, 0);
		uint16_t ic = csum_finish(csum_add(0, seg + t->l3, t->l4 - t->l3));
		put_be16(seg + t->l3 + 10, ic); /* never -0 (fw 1.4.11): ~sum of non-0 */
	}
	uint8_t *tcp = seg + t->l4;
	put_be32(tcp + 4, t->seq0 + k * t->mss);
	uint8_t fl = t->flags0;
	if (k + 1 < t->segs)
		fl &= (uint8_t)~0x09; /* FIN, PSH only on the last segment */
	if (k > 0)
		fl &= (uint8_t)~0x80; /* CWR only on the first */
	tcp[13] = fl;
	put_be16(tcp + 16, 0);
}

/* The pseudo-header sum (not folded) of a TCP segment of tcp_len bytes. */
static inline uint64_t tso_pseudo_sum(const uint8_t *f, const struct tso_layout *t,
				      uint32_t tcp_len)
{
	if (t->v6)
		return csum_add(0, f + t->l3 + 8, 32) + 6 + tcp_len;
	return csum_add(0, f + t->l3 + 12, 8) + 6 + tcp_len;
}

#endif
