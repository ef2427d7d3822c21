/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal driver for model tests: drives a model NIC only through BAR0 stores and DMA
 * memory, as the myri10ge driver would (spec §10.1), on a stepped world. Header-only so
 * each test executable carries its own copy. */
#ifndef SIM_HARNESS_H
#define SIM_HARNESS_H

#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/mcp_abi.h" /* the opcodes the harness names, as the driver does */
#include "sim/model.h"
#include "sim/nic.h"
#include "util/byteorder.h"

#define H_MEM_LEN (8u << 20)
#define H_RESP 0u
#define H_STATS 64u
#define H_DMATEST 4096u
#define H_INTRQ 8192u	 /* up to 32 KiB */
#define H_SMALL 65536u	 /* small buffers, 2048 bytes apart */
#define H_BIG (2u << 20) /* big buffers, 4096 bytes apart */
#define H_TX (4u << 20)	 /* tx buffers, 4096 bytes apart */
#define H_SMALL_STRIDE 2048u
#define H_BIG_STRIDE 4096u
#define H_TX_STRIDE 4096u

struct hnic {
	struct myrio_sim *w;
	struct sim_nic *nic;
	volatile uint8_t *bar;
	uint8_t *mem;
	uint64_t iova;
	uint32_t send_off, small_off, big_off, claim_off, deassert_off, coal_off;
	uint32_t rx_entries, tx_entries, intrq_entries;
	uint32_t small_prod, big_prod, tx_prod, intrq_idx;
	uint32_t small_size, big_size;
};

/* Lets the model run a little: one step on a stepped world, a yield on a threaded one. */
static inline void h_tick(struct myrio_sim *w, unsigned n)
{
	if (sim_world_is_stepped(w))
		myrio_sim_step(w, n);
	else
		for (unsigned i = 0; i < n; i++)
			sched_yield();
}

static inline uint64_t h_iova(const struct hnic *h, uint32_t off)
{
	return h->iova + off;
}

static inline void h_w32(struct hnic *h, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(h->bar + off) = be32(v);
}

static inline uint32_t h_r32(struct hnic *h, uint32_t off)
{
	return be32(*(volatile uint32_t *)(h->bar + off));
}

static inline int h_init(struct hnic *h, struct myrio_sim *w, unsigned index)
{
	memset(h, 0, sizeof(*h));
	h->w = w;
	h->nic = sim_world_nic(w, index);
	if (!h->nic || sim_nic_attach(h->nic) < 0)
		return -1;
	h->bar = sim_nic_bar0(h->nic);
	sim_nic_cfg_write(h->nic, 4, 2, 0x0006); /* memory space, bus master (§1.8) */
	h->mem = aligned_alloc(4096, H_MEM_LEN);
	if (!h->mem)
		return -1;
	memset(h->mem, 0, H_MEM_LEN);
	h->iova = 0x200000000ull + (uint64_t)index * 0x10000000ull;
	return sim_nic_dma_map(h->nic, h->iova, h->mem, H_MEM_LEN);
}

static inline void h_fini(struct hnic *h)
{
	if (h->nic)
		sim_nic_detach(h->nic);
	free(h->mem);
	h->mem = NULL;
}

/* Issues a command (§3.1): 32-bit stores, word 15 last; steps until answered. Returns
 * the result, or -1 on timeout. */
static inline int h_cmd(struct hnic *h, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2,
			uint32_t *data)
{
	uint8_t *resp = h->mem + H_RESP;
	put_be32(resp, 0);
	put_be32(resp + 4, 0xFFFFFFFFu);
	uint64_t a = h_iova(h, H_RESP);
	uint32_t w[16] = {op, d0, d1, d2, (uint32_t)(a >> 32), (uint32_t)a};
	for (unsigned i = 0; i < 15; i++)
		h_w32(h, 0xF80000 + 4 * i, w[i]);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	h_w32(h, 0xF80000 + 60, 0);
	/* stepped: 20 ms of virtual time; threaded: 10 s of wall time (a loaded machine may
	 * not run the model thread for a while) */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0;; i++) {
		uint32_t r = __atomic_load_n((uint32_t *)(resp + 4), __ATOMIC_ACQUIRE);
		if (r != 0xFFFFFFFFu) {
			if (data)
				*data = get_be32(resp);
			return (int)be32(r);
		}
		h_tick(h->w, 1);
		if (sim_world_is_stepped(h->w)) {
			if (i > 20000)
				break;
		} else if ((i & 255) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 10)
				break;
		}
	}
	return -1;
}

/* Posts n receive buffers (§4.3) on the ring at BAR0 offset ring_off; buffers are in host
 * memory at buf_off, stride bytes apart, one per slot. */
static inline void h_post(struct hnic *h, uint32_t ring_off, uint32_t *prod, uint32_t buf_off,
			  uint32_t stride, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = *prod & (h->rx_entries - 1);
		uint64_t a = h_iova(h, buf_off + slot * stride);
		h_w32(h, ring_off + slot * 8, (uint32_t)(a >> 32));
		__atomic_thread_fence(__ATOMIC_RELEASE);
		h_w32(h, ring_off + slot * 8 + 4, (uint32_t)a);
		(*prod)++;
	}
}

static inline void h_post_small(struct hnic *h, uint32_t n)
{
	h_post(h, h->small_off, &h->small_prod, H_SMALL, H_SMALL_STRIDE, n);
}

static inline void h_post_big(struct hnic *h, uint32_t n)
{
	h_post(h, h->big_off, &h->big_prod, H_BIG, H_BIG_STRIDE, n);
}

static inline uint8_t *h_small_buf(struct hnic *h, uint32_t slot)
{
	return h->mem + H_SMALL + (slot & (h->rx_entries - 1)) * H_SMALL_STRIDE;
}
static inline uint8_t *h_big_buf(struct hnic *h, uint32_t slot)
{
	return h->mem + H_BIG + (slot & (h->rx_entries - 1)) * H_BIG_STRIDE;
}

/* §8.2/§8.3 bring-up; returns 0 or the failing step's result. post: buffers per ring. */
static inline int h_bringup(struct hnic *h, uint32_t small, uint32_t big, uint32_t post)
{
	uint32_t d;
	int r;
	if ((r = h_cmd(h, MCP_CMD_RESET, 0, 0, 0, &d)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, &d)) != 0)
		return r;
	h->rx_entries = d / 8;
	h->intrq_entries = 2 * h->rx_entries;
	if ((r = h_cmd(h, MCP_CMD_GET_SEND_RING_SIZE, 0, 0, 0, &d)) != 0)
		return r;
	h->tx_entries = d / 16;
	memset(h->mem + H_INTRQ, 0, h->intrq_entries * 4);
	if ((r = h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, h->intrq_entries * 4, 0, 0, NULL)) != 0)
		return r;
	uint64_t q = h_iova(h, H_INTRQ);
	if ((r = h_cmd(h, MCP_CMD_SET_INTRQ_DMA, (uint32_t)q, (uint32_t)(q >> 32), 0, NULL)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_GET_IRQ_ACK_OFFSET, 0, 0, 0, &h->claim_off)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_GET_IRQ_DEASSERT_OFFSET, 0, 0, 0, &h->deassert_off)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_GET_INTR_COAL_DELAY_OFFSET, 0, 0, 0, &h->coal_off)) != 0)
		return r;
	h_w32(h, h->coal_off, 0);
	if ((r = h_cmd(h, MCP_CMD_GET_SEND_OFFSET, 0, 0, 0, &h->send_off)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_GET_SMALL_RX_OFFSET, 0, 0, 0, &h->small_off)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_GET_BIG_RX_OFFSET, 0, 0, 0, &h->big_off)) != 0)
		return r;
	uint64_t s = h_iova(h, H_STATS);
	memset(h->mem + H_STATS, 0, 64);
	if ((r = h_cmd(h, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)s, (uint32_t)(s >> 32), 64, NULL)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_SET_MTU, 9400, 0, 0, NULL)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_SET_SMALL_BUFFER_SIZE, small, 0, 0, NULL)) != 0)
		return r;
	if ((r = h_cmd(h, MCP_CMD_SET_BIG_BUFFER_SIZE, big, 0, 0, NULL)) != 0)
		return r;
	h->small_size = small;
	h->big_size = big;
	h->small_prod = h->big_prod = h->tx_prod = h->intrq_idx = 0;
	h_post_small(h, post);
	h_post_big(h, post);
	return h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL);
}

/* The next completion entry, or 0 if none; clears it (§4.6). */
static inline uint32_t h_completion(struct hnic *h, uint16_t *csum)
{
	uint8_t *e = h->mem + H_INTRQ + (h->intrq_idx & (h->intrq_entries - 1)) * 4;
	uint16_t len = get_be16(e + 2);
	if (!len)
		return 0;
	if (csum)
		*csum = get_be16(e);
	put_be32(e, 0);
	h->intrq_idx++;
	return len;
}

/* Writes a send descriptor (§5.2) into the ring at slot prod+i, flags last of all. */
static inline void h_txd(struct hnic *h, uint32_t i, uint64_t a, uint16_t len, uint16_t pho,
			 uint8_t rdma, uint8_t cko, uint8_t flags, int commit)
{
	uint32_t off = h->send_off + ((h->tx_prod + i) & (h->tx_entries - 1)) * 16;
	h_w32(h, off, (uint32_t)(a >> 32));
	h_w32(h, off + 4, (uint32_t)a);
	h_w32(h, off + 8, (uint32_t)pho << 16 | len);
	uint32_t w3 = (uint32_t)rdma << 16 | (uint32_t)cko << 8 | flags;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (commit)
		h_w32(h, off + 12, w3);
	else
		h_w32(h, off + 12, w3 & ~0xFFu);
}

/* Sends one frame from tx buffer slot (single descriptor, NO_TSO|FIRST[|SMALL]). */
static inline uint8_t *h_tx_buf(struct hnic *h, uint32_t slot)
{
	return h->mem + H_TX + (slot & 511) * H_TX_STRIDE;
}
static inline void h_send(struct hnic *h, const void *frame, uint16_t len)
{
	/* 4 KiB-aligned buffer, cut at 2 KiB (the "p" firmware's tx_boundary, §5.4);
	 * descriptors 1.. first, descriptor 0's commit word last (§5.7). */
	uint8_t *b = h_tx_buf(h, h->tx_prod);
	memcpy(b, frame, len);
	uint64_t a = h_iova(h, (uint32_t)(b - h->mem));
	uint32_t n = (len + 2047u) / 2048u;
	uint8_t small = len <= 1520 ? 0x01 : 0;
	for (uint32_t i = n; i-- > 0;) {
		uint32_t l = len - i * 2048u < 2048u ? len - i * 2048u : 2048u;
		uint8_t fl = (uint8_t)(0x10 | small | (i == 0 ? 0x02 : 0));
		h_txd(h, i, a + i * 2048u, (uint16_t)l, 0, (uint8_t)(i == 0 ? n : 1), 0, fl,
		      i != 0);
	}
	uint32_t off0 = h->send_off + (h->tx_prod & (h->tx_entries - 1)) * 16;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	h_w32(h, off0 + 12, (uint32_t)n << 16 | (uint32_t)(0x12 | small));
	h->tx_prod += n;
}

/* Runs the handshake until the NIC reports send_done == want (or gives up); returns the
 * last send_done seen. */
static inline uint32_t h_send_done(struct hnic *h, uint32_t want);

/* The status-block handshake of a polled driver (§6.5): returns valid (0 = nothing). */
static inline uint8_t h_status(struct hnic *h, uint32_t *send_done, uint32_t *link)
{
	volatile uint8_t *s = h->mem + H_STATS;
	uint8_t v = s[63];
	if (!v)
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (send_done)
		*send_done = get_be32((const void *)(s + 24));
	if (link)
		*link = get_be32((const void *)(s + 28));
	h_w32(h, h->deassert_off, 0);
	if (v & 1)
		h_w32(h, h->claim_off, 3);
	for (unsigned i = 0; i < 100000 && s[63]; i++)
		h_tick(h->w, 1);
	h_w32(h, h->claim_off + 4, 3);
	return v;
}

static inline uint32_t h_send_done(struct hnic *h, uint32_t want)
{
	uint32_t sd = 0;
	for (unsigned i = 0; i < 2000; i++) {
		uint32_t v;
		if (h_status(h, &v, NULL))
			sd = v;
		if (sd == want)
			break;
		h_tick(h->w, 1);
	}
	return sd;
}

/* Stages an image and hands it off (§2.4); true if the confirm word arrived within 10 ms. */
static inline bool h_handoff(struct hnic *h, const uint8_t *img, size_t len)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t v = 0;
		memcpy(&v, img + off, len - off >= 8 ? 8 : len - off);
		*(volatile uint64_t *)(h->bar + 0x100000 + off) = v;
	}
	put_be32(h->mem + H_RESP, 0);
	uint64_t a = h_iova(h, H_RESP);
	uint32_t w[16] = {
	    (uint32_t)(a >> 32), (uint32_t)a, 0xFFFFFFFFu, 0x100008, (uint32_t)len - 8, 8, 0};
	for (unsigned i = 0; i < 15; i++)
		h_w32(h, 0xFC0000 + 4 * i, w[i]);
	h_w32(h, 0xFC0000 + 60, 0);
	for (unsigned i = 0; i < 10000; i++) {
		if (get_be32(h->mem + H_RESP) == 0xFFFFFFFFu)
			return true;
		h_tick(h->w, 1);
	}
	return false;
}

/* The model's own counters, for the test to compare with what the host saw. */
static inline struct sim_nic_stats h_nic_stats(const struct sim_nic *nic)
{
	struct sim_nic_stats st;
	sim_nic_get_stats(nic, &st);
	return st;
}

static inline struct sim_counters h_nic_counters(const struct sim_nic *nic)
{
	struct sim_counters k;
	sim_nic_get_counters(nic, &k);
	return k;
}

static inline void h_frame(uint8_t *f, const uint8_t dst[6], const uint8_t src[6], uint16_t type,
			   uint32_t len, uint8_t seed)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put_be16(f + 12, type);
	for (uint32_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seed + i * 7);
}

static inline struct myrio_sim *h_world(const char *spec)
{
	struct myrio_sim_conf c;
	myrio_sim_conf_init(&c);
	c.stepped = true;
	if (spec && myrio_sim_conf_parse(&c, spec) < 0)
		return NULL;
	c.stepped = true;
	struct myrio_sim *w = NULL;
	if (myrio_sim_create(&w, &c) < 0)
		return NULL;
	return w;
}

/* ---- fixtures: each test gets a world of its own ---- */

/* The source address of the frames tests send. */
static const uint8_t h_src_mac[6] = {0x00, 0x60, 0xdd, 0x11, 0x22, 0x33};

/* A new stepped world (spec as for h_world) with its NIC 0 attached to h; 0 or -1.
 * The world is h->w: h_close destroys it. */
static inline int h_open(struct hnic *h, const char *spec)
{
	struct myrio_sim *w = h_world(spec);
	if (!w)
		return -1;
	return h_init(h, w, 0);
}

static inline void h_close(struct hnic *h)
{
	struct myrio_sim *w = h->w;
	h_fini(h);
	myrio_sim_destroy(w);
}

/* cmocka set-up and teardown of a test whose state is one NIC: NIC 0 of a default world. */
static inline int h_setup(void **state)
{
	struct hnic *h = malloc(sizeof(*h));
	if (!h || h_open(h, NULL) < 0)
		return -1;
	*state = h;
	return 0;
}

static inline int h_teardown(void **state)
{
	h_close(*state);
	free(*state);
	return 0;
}

/* Two NICs of one world joined by its cable: in most tests a sends and b receives. */
struct hpair {
	struct myrio_sim *w;
	struct hnic a, b;
};

static inline int h_pair_open(struct hpair *p, const char *spec)
{
	memset(p, 0, sizeof(*p));
	p->w = h_world(spec);
	if (!p->w || h_init(&p->a, p->w, 0) || h_init(&p->b, p->w, 1))
		return -1;
	return 0;
}

static inline void h_pair_close(struct hpair *p)
{
	h_fini(&p->a);
	h_fini(&p->b);
	myrio_sim_destroy(p->w);
}

/* For cmocka set-ups: a pair on the heap, or NULL. */
static inline struct hpair *h_pair_new(const char *spec)
{
	struct hpair *p = malloc(sizeof(*p));
	if (p && h_pair_open(p, spec) < 0)
		return NULL;
	return p;
}

/* cmocka teardown of a test whose state is from h_pair_new. */
static inline int h_pair_teardown(void **state)
{
	h_pair_close(*state);
	free(*state);
	return 0;
}

#endif
