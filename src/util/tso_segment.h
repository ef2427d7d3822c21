/* SPDX-License-Identifier: BSD-3-Clause */
/* How the NIC cuts a TSO request into segments (§5.6): the headers of segment k, shared
 * by the device model, which sends them, and by capture, which records them as they
 * leave the NIC. The TCP checksum is left to the caller (each sums its own way). What
 * every segment shares is summed once per request (tso_layout_sums): the IPv4 header
 * without the fields that change and the pseudo-header without its length, to which a
 * segment adds its own (RFC 1624: ones'-complement addition is associative, so the
 * result is the full sum's). */
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
	uint16_t ip_rest; /* IPv4: the header's sum with total length, id and checksum as 0 */
	uint16_t ph_addr; /* the pseudo-header's sum without the TCP length */
};

/* Sets ip_rest and ph_addr from the request's headers at f (l3, l4 and v6 set). */
static inline void tso_layout_sums(const uint8_t *f, struct tso_layout *t)
{
	if (t->v6) {
		t->ip_rest = 0;
		t->ph_addr = csum_fold(csum_add(0, f + t->l3 + 8, 32) + 6);
		return;
	}
	const uint8_t *ip = f + t->l3;
	uint64_t s = csum_add(0, ip, t->l4 - t->l3);
	/* take the three fields out again: s - x is s + ~x in ones' complement */
	s += (uint16_t)~get_be16(ip + 2);
	s += (uint16_t)~get_be16(ip + 4);
	s += (uint16_t)~get_be16(ip + 10);
	t->ip_rest = csum_fold(s);
	t->ph_addr = csum_fold(csum_add(0, ip + 12, 8) + 6);
}

/* Rewrites the headers at seg (a copy of the request's, or of an earlier segment's: every
 * field that differs is written) for segment k of plen payload bytes: IP length, IPv4 id
 * and header checksum, TCP sequence and flags; the TCP checksum field is zeroed. Needs
 * tso_layout_sums. */
static inline void tso_segment_headers(uint8_t *seg, const struct tso_layout *t, uint32_t k,
				       uint32_t plen)
{
	uint32_t seglen = t->hlen + plen;
	if (t->v6) {
		put_be16(seg + t->l3 + 4, (uint16_t)(seglen - t->l3 - 40));
	} else {
		uint16_t tot = (uint16_t)(seglen - t->l3), id = (uint16_t)(t->id0 + k);
		put_be16(seg + t->l3 + 2, tot);
		put_be16(seg + t->l3 + 4, id);
		uint16_t ic = csum_finish((uint64_t)t->ip_rest + tot + id);
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

/* The pseudo-header sum (not folded) of a TCP segment of tcp_len bytes. Needs
 * tso_layout_sums. */
static inline uint64_t tso_pseudo_sum(const struct tso_layout *t, uint32_t tcp_len)
{
	return (uint64_t)t->ph_addr + tcp_len;
}

#endif
