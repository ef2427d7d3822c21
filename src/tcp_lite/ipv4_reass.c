/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 reassembly (RFC 791 §3.2, RFC 815): fragments are copied into one buffer per
 * datagram from a small pool of 64 KiB buffers, so the datagram reaches the transport as
 * one packet, like any other (fragments are the slow path; the copy is what keeps the
 * zero-copy API of whole buffers). Memory is bounded by conf.reass_slots datagrams in
 * progress; the oldest is given up when a new one needs a slot, and each lives at most
 * conf.reass_timeout_ms. Fragments that overlap what arrived before, other than exact
 * repeats, drop the datagram (as Linux and RFC 5722 do: overlaps are how filters are
 * evaded); so do a length beyond 65535 and non-final fragments not a multiple of 8. The
 * reassembled packet has no NIC checksum: the transport sums it in software. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define REASS_MAX 65535u		/* IP total length */
#define REASS_HDR_ROOM (ETH_HLEN + 60u) /* Ethernet + the longest IP header, before the payload */
#define BLOCKS (REASS_MAX / 8 + 1)

struct ip_reass {
	bool used;
	bool have_first; /* offset 0 arrived: its headers head the datagram */
	uint8_t proto, ihl;
	uint16_t id;
	uint32_t src, dst;
	uint32_t total; /* payload bytes, known once the last fragment arrived; else 0 */
	uint32_t have;	/* payload bytes received */
	uint32_t end;	/* the furthest payload byte received + 1 */
	uint64_t deadline_ms;
	struct myrio_pkt *buf;
	uint8_t hdr[REASS_HDR_ROOM];
	uint64_t map[(BLOCKS + 63) / 64]; /* 8-byte blocks received */
};

int ipv4_reass_init(struct myrio_stack *s)
{
	if (!s->conf.reass_slots)
		return 0;
	s->reass = calloc(s->conf.reass_slots, sizeof(*s->reass));
	if (!s->reass)
		return -ENOMEM;
	return myrio_pool_create(s->conf.reass_slots,
				 MYRIO_PKT_HEADROOM + REASS_HDR_ROOM + REASS_MAX, &s->reass_pool);
}

static void slot_free(struct ip_reass *r)
{
	if (r->buf)
		myrio_pkt_free(r->buf);
	r->buf = NULL;
	r->used = false;
}

void ipv4_reass_fini(struct myrio_stack *s)
{
	for (uint32_t i = 0; s->reass && i < s->conf.reass_slots; i++)
		slot_free(&s->reass[i]);
	free(s->reass);
	s->reass = NULL;
	/* A datagram the application still holds would point into freed memory: the pool
	 * is left allocated then (a leak the log names, rather than a use after free). */
	struct myrio_pool *pool = s->reass_pool;
	if (pool && myrio_pool_free_count(pool) != pool->count)
		log_warn("tcp_lite: %u reassembled datagrams not freed before the stack was "
			 "destroyed: their memory stays allocated",
			 pool->count - myrio_pool_free_count(pool));
	else if (pool)
		myrio_pool_destroy(pool);
	s->reass_pool = NULL;
}

/* The datagram's slot: found, or a free one, or the oldest given up for it; expired ones
 * are given up on the way. */
static struct ip_reass *slot_for(struct myrio_stack *s, uint32_t src, uint32_t dst, uint16_t id,
				 uint8_t proto)
{
	struct ip_reass *found = NULL, *free_slot = NULL, *oldest = NULL;
	for (uint32_t i = 0; i < s->conf.reass_slots; i++) {
		struct ip_reass *r = &s->reass[i];
		if (r->used && s->now_ms >= r->deadline_ms) {
			slot_free(r);
			s->st.ip_reass_drops++;
		}
		if (!r->used) {
			if (!free_slot)
				free_slot = r;
			continue;
		}
		if (r->src == src && r->dst == dst && r->id == id && r->proto == proto)
			found = r;
		else if (!oldest || r->deadline_ms < oldest->deadline_ms)
			oldest = r;
	}
	if (found)
		return found;
	struct ip_reass *r = free_slot;
	if (!r) {
		slot_free(oldest);
		s->st.ip_reass_drops++;
		r = oldest;
	}
	r->buf = myrio_pkt_alloc(s->reass_pool);
	if (!r->buf)
		return NULL; /* the application holds every reassembly buffer */
	memset(r->map, 0, sizeof(r->map));
	r->used = true;
	r->have_first = false;
	r->src = src;
	r->dst = dst;
	r->id = id;
	r->proto = proto;
	r->total = r->have = r->end = 0;
	r->deadline_ms = s->now_ms + s->conf.reass_timeout_ms;
	return r;
}

/* Marks blocks [b0, b1): 1 when all were new, 0 when all were there (a repeat), -1 when
 * some were (an overlap). Nothing is marked unless all are new. */
static int mark(struct ip_reass *r, uint32_t b0, uint32_t b1)
{
	uint32_t seen = 0;
	for (uint32_t b = b0; b < b1; b++)
		seen += (r->map[b / 64] >> (b % 64)) & 1;
	if (seen)
		return seen == b1 - b0 ? 0 : -1;
	for (uint32_t b = b0; b < b1; b++)
		r->map[b / 64] |= 1ull << (b % 64);
	return 1;
}

/* The whole datagram as one frame: the first fragment's Ethernet and IP headers in front
 * of the payload, total length set, fragment fields cleared, header checksum redone. */
static struct myrio_pkt *finish(struct myrio_stack *s, struct ip_reass *r)
{
	if (r->ihl + r->total > REASS_MAX) { /* later fragments had shorter headers */
		slot_free(r);
		s->st.ip_reass_drops++;
		return NULL;
	}
	struct myrio_pkt *b = r->buf;
	uint8_t *payload = myrio_pkt_data(b) + REASS_HDR_ROOM;
	uint8_t *frame = payload - r->ihl - ETH_HLEN;
	memcpy(frame, r->hdr, ETH_HLEN + r->ihl);
	uint8_t *ip = frame + ETH_HLEN;
	put_be16(ip + 2, (uint16_t)(r->ihl + r->total));
	put_be16(ip + 6, 0);
	put_be16(ip + 10, 0);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, r->ihl)));
	b->data_off = (uint16_t)(frame - b->buf);
	b->len = ETH_HLEN + r->ihl + r->total;
	b->ol_flags = 0; /* no NIC sum over this frame */
	r->buf = NULL;
	r->used = false;
	s->st.ip_reassembled++;
	return b;
}

struct myrio_pkt *ipv4_reass(struct myrio_stack *s, struct myrio_pkt *p, const uint8_t *ip,
			     unsigned ihl, unsigned tot)
{
	uint16_t frag = get_be16(ip + 6);
	uint32_t off = (uint32_t)(frag & 0x1fff) * 8, len = tot - ihl;
	bool more = frag & 0x2000;
	if (!s->reass || len == 0 || (more && len % 8) || off + len > REASS_MAX - ihl) {
		s->st.drop_ip_frag++;
		myrio_pkt_free(p);
		return NULL;
	}
	struct ip_reass *r =
	    slot_for(s, get_be32(ip + 12), get_be32(ip + 16), get_be16(ip + 4), ip[9]);
	if (!r) {
		s->st.drop_ip_frag++;
		myrio_pkt_free(p);
		return NULL;
	}
	s->st.ip_frags_rx++;
	/* A fragment past the end, or a last fragment that is not where the end is. */
	bool bad_end = r->total ? off + len > r->total || (!more && off + len != r->total)
				: !more && r->end > off + len;
	int fresh = bad_end ? -1 : mark(r, off / 8, (off + len + 7) / 8);
	if (fresh < 0) { /* or an overlap */
		slot_free(r);
		s->st.ip_reass_drops++;
		myrio_pkt_free(p);
		return NULL;
	}
	if (fresh) {
		memcpy(myrio_pkt_data(r->buf) + REASS_HDR_ROOM + off, ip + ihl, len);
		r->have += len;
		if (off + len > r->end)
			r->end = off + len;
		if (!more)
			r->total = off + len;
		if (off == 0) {
			r->have_first = true;
			r->ihl = (uint8_t)ihl;
			memcpy(r->hdr, ip - ETH_HLEN, ETH_HLEN + ihl);
		}
	}
	myrio_pkt_free(p);
	if (r->total && r->have == r->total && r->have_first)
		return finish(s, r);
	return NULL;
}
