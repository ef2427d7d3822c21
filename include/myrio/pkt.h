/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet buffers and fixed-size buffer pools.
 *
 * A pool is one DMA region cut into equal elements; each element is a 64-byte struct
 * myrio_pkt followed by its data buffer. The frame lives at buf + data_off: receive
 * buffers start with MYRIO_PKT_HEADROOM bytes free (the NIC writes at +2),
 * transmit buffers leave the same headroom so the stack can write headers in front of the
 * payload without copying it. Pools are single-threaded; alloc and free are O(1) stack
 * pushes and pops, in bursts.
 */
#ifndef MYRIO_PKT_H
#define MYRIO_PKT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MYRIO_PKT_HEADROOM 128u /* bytes in front of the frame; 64-aligned */
#define MYRIO_PKT_RX_PAD 2u	/* the NIC writes a frame 2 bytes after the buffer address */

/* ol_flags */
#define MYRIO_PKT_RX_CSUM_PARTIAL 0x0001u /* rx_csum holds the NIC's sum from byte 14 (§4.6) */
#define MYRIO_PKT_RX_RSS_HASH 0x0002u	  /* rss_hash holds the flow's RSS hash (port.h) */
#define MYRIO_PKT_TX_CSUM 0x0100u	  /* NIC fills the L4 checksum (§5.5) */
#define MYRIO_PKT_TX_TSO 0x0200u	  /* TCP segmentation offload of a chain (§5.6) */

struct myrio_pool;

struct myrio_pkt {
	uint64_t iova;		 /* bus address of buf[0] */
	struct myrio_pool *pool; /* where free returns it */
	uint32_t data_off;       /* frame start, relative to buf */
	uint32_t len;            /* frame length in bytes */
	uint32_t buf_len;        /* bytes in buf, headroom included: a frame fits in
	                          * buf_len - data_off (myrio_pkt_tailroom adds len) */
	uint16_t ol_flags;
	uint16_t rx_csum;   /* rx: ones'-complement sum of frame bytes [14, len), host order */
	/* tx with MYRIO_PKT_TX_CSUM (ports with MYRIO_CAP_TX_CSUM), the checksum offload
	 * contract: the NIC sums the frame from csum_start (the L4 header's offset in the
	 * frame) to its end, ones' complement, and stores the complement of that sum at
	 * csum_field (the checksum's offset), big-endian; a complement of 0 is stored as
	 * 0xFFFF (equal in ones' complement, and UDP reads 0 as "none"), for every protocol.
	 * So before handing the frame over,
	 * the application stores at csum_field the folded pseudo-header sum (RFC 768 / 793:
	 * addresses, protocol, L4 length), not complemented, as Linux's CHECKSUM_PARTIAL.
	 * csum_start <= csum_field and csum_field + 2 <= len, or the frame is refused
	 * (tx_dropped_bad); offsets beyond the NIC's reach are summed in software. */
	uint16_t csum_start;
	uint16_t csum_field;
	uint16_t refcnt;     /* holders; free() drops one and recycles at zero */
	uint16_t port;       /* receiving port's index, for the application */
	struct myrio_pkt *next; /* for whoever holds the packet: queues and chains */
	uint64_t user;		/* private to the holder (the stack keeps a sequence number) */
	/* tx with MYRIO_PKT_TX_TSO: this packet holds Ethernet + IPv4 + TCP headers (tso_hlen
	 * bytes, the TCP header at csum_start) and the first payload; tso_npkts - 1 further
	 * packets along next hold the rest. The NIC cuts the payload into tso_mss pieces. */
	union {
		struct {
			uint16_t tso_mss;
			uint16_t tso_hlen;
		};
		/* rx with MYRIO_PKT_RX_RSS_HASH: the hash that chose the receive queue */
		uint32_t rss_hash;
	};
	uint16_t tso_npkts;
	uint8_t buf[] __attribute__((aligned(64))); /* 64 bytes into the element */
};
#ifdef __cplusplus
static_assert(sizeof(struct myrio_pkt) == 64, "packet header is one cache line");
#else
_Static_assert(sizeof(struct myrio_pkt) == 64, "packet header is one cache line");
#endif

struct myrio_pool {
	struct myrio_pkt **free_stack; /* free_top entries are free */
	uint32_t free_top;
	uint32_t count;
	uint32_t elem_size; /* sizeof(struct myrio_pkt) + buffer, a multiple of 64 */
	uint32_t buf_len;
	uint8_t *base;	    /* element 0 */
	uint64_t base_iova; /* IOVA of element 0 */
	void *region;	    /* the DMA region that backs the pool (internal) */
	uint64_t alloc_failures;
};

/* A pool in ordinary memory that no device reaches (reassembly, staging, tests); a port's
 * transmit pools come from myrio_port_pool_create. buf_len includes MYRIO_PKT_HEADROOM. */
int myrio_pool_create(uint32_t count, uint32_t buf_len, struct myrio_pool **out);

/* Releases a pool and its memory. If buffers are still out (a NIC still holds frames), the
 * pool is only marked: it is released when its port closes and the driver has handed every
 * buffer back, so destroying it early never frees memory a device may still read. */
void myrio_pool_destroy(struct myrio_pool *pool);

static inline uint8_t *myrio_pkt_data(const struct myrio_pkt *p)
{
	return (uint8_t *)p->buf + p->data_off;
}

static inline uint64_t myrio_pkt_data_iova(const struct myrio_pkt *p)
{
	return p->iova + p->data_off;
}

/* Makes room for n bytes of header in front of the frame; NULL if the headroom is short. */
static inline uint8_t *myrio_pkt_prepend(struct myrio_pkt *p, uint32_t n)
{
	if (n > p->data_off)
		return NULL;
	p->data_off -= n;
	p->len += n;
	return (uint8_t *)p->buf + p->data_off;
}

/* Drops n bytes from the front of the frame (a header that was parsed). */
static inline uint8_t *myrio_pkt_adj(struct myrio_pkt *p, uint32_t n)
{
	if (n > p->len)
		return NULL;
	p->data_off += n;
	p->len -= n;
	return (uint8_t *)p->buf + p->data_off;
}

/* Bytes that can still be appended behind the frame. */
static inline uint32_t myrio_pkt_tailroom(const struct myrio_pkt *p)
{
	return p->buf_len - p->data_off - p->len;
}

static inline void myrio_pkt_reset(struct myrio_pkt *p)
{
	p->data_off = MYRIO_PKT_HEADROOM;
	p->len = 0;
	p->ol_flags = 0;
	p->refcnt = 1;
	p->next = NULL;
}

static inline struct myrio_pkt *myrio_pkt_alloc(struct myrio_pool *pool)
{
	if (pool->free_top == 0) {
		pool->alloc_failures++;
		return NULL;
	}
	struct myrio_pkt *p = pool->free_stack[--pool->free_top];
	myrio_pkt_reset(p);
	return p;
}

/* All n or nothing: returns n, or 0 when fewer than n are free. */
static inline unsigned myrio_pkt_alloc_bulk(struct myrio_pool *pool, struct myrio_pkt **pkts,
					    unsigned n)
{
	if (pool->free_top < n) {
		pool->alloc_failures++;
		return 0;
	}
	struct myrio_pkt **src = pool->free_stack + pool->free_top - n;
	for (unsigned i = 0; i < n; i++) {
		pkts[i] = src[i];
		myrio_pkt_reset(pkts[i]);
	}
	pool->free_top -= n;
	return n;
}

/* An extra holder (TCP keeps a sent segment until it is acknowledged). */
static inline void myrio_pkt_ref(struct myrio_pkt *p)
{
	p->refcnt++;
}

static inline void myrio_pkt_free(struct myrio_pkt *p)
{
	if (--p->refcnt == 0) {
		struct myrio_pool *pool = p->pool;
		pool->free_stack[pool->free_top++] = p;
	}
}

/* Frees a transmit request the NIC did not take: the packet, and for a TSO request the
 * other packets of its chain. */
static inline void myrio_pkt_free_req(struct myrio_pkt *p)
{
	unsigned n = (p->ol_flags & MYRIO_PKT_TX_TSO) && p->tso_npkts ? p->tso_npkts : 1u;
	while (n-- && p) {
		struct myrio_pkt *next = p->next;
		myrio_pkt_free(p);
		p = next;
	}
}

static inline void myrio_pkt_free_bulk(struct myrio_pkt **pkts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		myrio_pkt_free(pkts[i]);
}

static inline unsigned myrio_pool_free_count(const struct myrio_pool *pool)
{
	return pool->free_top;
}

#ifdef __cplusplus
}
#endif
#endif
