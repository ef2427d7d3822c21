/* SPDX-License-Identifier: BSD-3-Clause */
/* Slices and RSS in the model (§6.4, §7): frames spread over the slices as the indirection
 * table says, every frame of a flow on one slice; the port hash; per-slice completion rings,
 * MSI-X vectors and send rings; the firmware's order rules. NIC a sends (one slice), NIC b
 * runs the RSS image. The hash itself: test_toeplitz.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "sim/fw_image.h"
#include "sim_harness.h"
#include "util/toeplitz.h"

#define NSL 4u
#define SL_INTRQ (6u << 20)		     /* slice s's completion ring at + 4 KiB s */
#define SL_SMALL ((6u << 20) + (512u << 10)) /* its small buffers at + 128 KiB s */
#define SL_STATS ((7u << 20) + (512u << 10)) /* its status block at + 64 s */
#define SL_POST 64u

struct ctx {
	struct hpair p;
	uint32_t small_off[NSL], small_prod[NSL], intrq_idx[NSL];
	uint32_t table_off;
	uint8_t img[256 * 1024];
};

static uint32_t cmd(struct ctx *c, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2)
{
	uint32_t d = 0;
	int r = h_cmd(&c->p.b, op, d0, d1, d2, &d);
	assert_int_equal(r, 0);
	return d;
}

static uint64_t at(struct ctx *c, uint32_t off)
{
	return h_iova(&c->p.b, off);
}

/* b: the RSS image, then the order of §7.2 with n slices, MSI-X with a vector each. */
static void bring_up_slices(struct ctx *c, unsigned n, bool multi_tx)
{
	struct hnic *h = &c->p.b;
	size_t len = 0;
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "rss_eth", &len), 0);
	assert_true(h_handoff(h, c->img, len));
	sim_nic_cfg_write(h->nic, 0x90 + 3, 1, 0x80); /* MSI-X enable (the model's capability) */
	cmd(c, MCP_CMD_RESET, 0, 0, 0);
	h->rx_entries = cmd(c, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0) / 8;
	h->tx_entries = cmd(c, MCP_CMD_GET_SEND_RING_SIZE, 0, 0, 0) / 16;
	h->intrq_entries = 2 * h->rx_entries;
	cmd(c, MCP_CMD_SET_INTRQ_SIZE, h->intrq_entries * 4, 0, 0);
	assert_true(cmd(c, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0) >= n);
	cmd(c, MCP_CMD_ENABLE_RSS_QUEUES, n, 1u | (multi_tx ? 2u : 0u), 0);
	for (unsigned s = 0; s < n; s++)
		cmd(c, MCP_CMD_SET_INTRQ_DMA, (uint32_t)at(c, SL_INTRQ + 4096 * s),
		    (uint32_t)(at(c, SL_INTRQ) >> 32), s);
	h->claim_off = cmd(c, MCP_CMD_GET_IRQ_ACK_OFFSET, 0, 0, 0);
	h->deassert_off = cmd(c, MCP_CMD_GET_IRQ_DEASSERT_OFFSET, 0, 0, 0);
	h->coal_off = cmd(c, MCP_CMD_GET_INTR_COAL_DELAY_OFFSET, 0, 0, 0);
	h_w32(h, h->coal_off, 0);
	h->send_off = cmd(c, MCP_CMD_GET_SEND_OFFSET, 0, 0, 0);
	h->big_off = cmd(c, MCP_CMD_GET_BIG_RX_OFFSET, 0, 0, 0);
	for (unsigned s = 0; s < (multi_tx ? n : 1); s++)
		cmd(c, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)at(c, SL_STATS + 64 * s),
		    (uint32_t)(at(c, SL_STATS) >> 32), s << 16 | 64);
	cmd(c, MCP_CMD_SET_MTU, 1518, 0, 0);
	cmd(c, MCP_CMD_SET_SMALL_BUFFER_SIZE, 1600, 0, 0);
	cmd(c, MCP_CMD_SET_BIG_BUFFER_SIZE, 2048, 0, 0);
	for (unsigned s = 0; s < n; s++) {
		c->small_off[s] = cmd(c, MCP_CMD_GET_SMALL_RX_OFFSET, s, 0, 0);
		for (unsigned k = 0; k < s; k++) /* rings of their own */
			assert_int_not_equal(c->small_off[s], c->small_off[k]);
		h_post(h, c->small_off[s], &c->small_prod[s], SL_SMALL + (128u << 10) * s, 256,
		       SL_POST);
	}
	cmd(c, MCP_CMD_SET_RSS_TABLE_SIZE, 128, 0, 0);
	c->table_off = cmd(c, MCP_CMD_GET_RSS_TABLE_OFFSET, 0, 0, 0);
	for (unsigned i = 0; i < 128; i++) /* not the identity: the table is really read */
		h->bar[c->table_off + i] = (uint8_t)((i * 3 + 1) % n);
	cmd(c, MCP_CMD_SET_RSS_ENABLE, 1, 3, 0); /* Toeplitz: TCP by ports, IPv4 by address */
	cmd(c, MCP_CMD_ETHERNET_UP, 0, 0, 0);
	assert_int_equal(h_bringup(&c->p.a, 1600, 2048, 8), 0);
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c || h_pair_open(&c->p, "link=unlimited") < 0)
		return -1;
	*state = c;
	return 0;
}

/* A 10 Gb/s cable: frames are paced, each slice's ring by itself. */
static int setup_paced(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c || h_pair_open(&c->p, NULL) < 0)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	h_pair_close(&c->p);
	free(c);
	return 0;
}

/* A TCP/IPv4 (proto 6), UDP (17) or other frame from src:sport to dst:dport. */
static uint32_t flow_frame(uint8_t *f, struct ctx *c, uint8_t proto, const uint8_t src[4],
			   const uint8_t dst[4], uint16_t sport, uint16_t dport)
{
	uint32_t len = 80;
	h_frame(f, c->p.b.nic->eeprom_mac, h_src_mac, 0x0800, len, (uint8_t)sport);
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[6] = ip[7] = 0; /* not a fragment */
	ip[9] = proto;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	put_be16(ip + 20, sport);
	put_be16(ip + 22, dport);
	return len;
}

/* The slice whose completion ring got the next frame, or -1. */
static int landed(struct ctx *c)
{
	int got = -1;
	for (unsigned s = 0; s < NSL; s++) {
		uint8_t *e = c->p.b.mem + SL_INTRQ + 4096 * s +
			     (c->intrq_idx[s] & (c->p.b.intrq_entries - 1)) * 4;
		if (!get_be16(e + 2))
			continue;
		assert_int_equal(got, -1); /* one frame, one slice */
		put_be32(e, 0);
		c->intrq_idx[s]++;
		got = (int)s;
		/* the buffer back on its ring, as a driver refills */
		h_post(&c->p.b, c->small_off[s], &c->small_prod[s], SL_SMALL + (128u << 10) * s,
		       256, 1);
	}
	return got;
}

static int send_flow(struct ctx *c, uint8_t proto, const uint8_t src[4], const uint8_t dst[4],
		     uint16_t sport, uint16_t dport)
{
	uint8_t f[128];
	uint32_t len = flow_frame(f, c, proto, src, dst, sport, dport);
	h_send(&c->p.a, f, (uint16_t)len);
	myrio_sim_step(c->p.w, 3);
	return landed(c);
}

static unsigned expected(struct ctx *c, const uint8_t src[4], const uint8_t dst[4], uint16_t sport,
			 uint16_t dport, unsigned n)
{
	uint8_t t[12];
	memcpy(t, src, 4);
	memcpy(t + 4, dst, 4);
	put_be16(t + 8, sport);
	put_be16(t + 10, dport);
	uint32_t h = toeplitz_hash(toeplitz_default_key, t, n);
	return (h % 128 * 3 + 1) % NSL;
}

static void flows_spread_as_the_table_says(void **state)
{
	struct ctx *c = *state;
	bring_up_slices(c, NSL, false);
	uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};
	unsigned per_slice[NSL] = {0};
	for (uint16_t flow = 0; flow < 64; flow++) {
		uint16_t sport = (uint16_t)(40000 + flow * 13), dport = 5001;
		unsigned want = expected(c, src, dst, sport, dport, 12);
		for (int k = 0; k < 4; k++) /* every frame of the flow on one slice */
			assert_int_equal(send_flow(c, 6, src, dst, sport, dport), (int)want);
		per_slice[want]++;
	}
	for (unsigned s = 0; s < NSL; s++)
		assert_true(per_slice[s] > 0); /* 64 flows reach all 4 slices */
	/* UDP under type 3: by the addresses only, so every port lands on one slice */
	unsigned ip_only = expected(c, src, dst, 0, 0, 8);
	for (uint16_t sport = 1000; sport < 1016; sport++)
		assert_int_equal(send_flow(c, 17, src, dst, sport, 53), (int)ip_only);
	/* a new key, taken at RSS_KEY_UPDATED */
	uint32_t key_off = cmd(c, MCP_CMD_GET_RSS_KEY_OFFSET, 0, 0, 0);
	uint8_t key[TOEPLITZ_KEY_LEN];
	for (unsigned i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 37 + 11);
	for (unsigned i = 0; i < sizeof(key); i++)
		c->p.b.bar[key_off + i] = key[i];
	cmd(c, MCP_CMD_RSS_KEY_UPDATED, 0, 0, 0);
	for (uint16_t flow = 0; flow < 16; flow++) {
		uint8_t t[12];
		memcpy(t, src, 4);
		memcpy(t + 4, dst, 4);
		put_be16(t + 8, (uint16_t)(30000 + flow));
		put_be16(t + 10, 80);
		unsigned want = (toeplitz_hash(key, t, 12) % 128 * 3 + 1) % NSL;
		assert_int_equal(send_flow(c, 6, src, dst, (uint16_t)(30000 + flow), 80),
				 (int)want);
	}
	/* a non-IP frame: table entry 0 */
	uint8_t f[80];
	h_frame(f, c->p.b.nic->eeprom_mac, h_src_mac, 0x88B5, 80, 1);
	h_send(&c->p.a, f, 80);
	myrio_sim_step(c->p.w, 3);
	assert_int_equal(landed(c), 1 % NSL);
}

/* Type 5, the firmware's port hash as the model defines it: the ports XORed. */
static void port_hash_spreads_by_ports(void **state)
{
	struct ctx *c = *state;
	bring_up_slices(c, NSL, false);
	cmd(c, MCP_CMD_SET_RSS_ENABLE, 1, 5, 0);
	uint8_t src[4] = {192, 168, 1, 1}, dst[4] = {192, 168, 1, 2};
	for (uint16_t sport = 2000; sport < 2040; sport++) {
		unsigned want = ((uint32_t)(sport ^ 80) % 128 * 3 + 1) % NSL;
		assert_int_equal(send_flow(c, 6, src, dst, sport, 80), (int)want);
		assert_int_equal(send_flow(c, 17, src, dst, sport, 80), (int)want);
	}
	/* ICMP carries no ports: table entry 0 */
	assert_int_equal(send_flow(c, 1, src, dst, 1, 2), 1);
}

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1;
}

static void drain(int fd)
{
	uint64_t v;
	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/* Each slice raises its own vector; a receive-only slice is re-armed by claim0 alone. */
static void each_slice_raises_its_vector(void **state)
{
	struct ctx *c = *state;
	bring_up_slices(c, NSL, false);
	int fd[NSL];
	for (unsigned s = 0; s < NSL; s++) {
		fd[s] = sim_nic_vector_fd(c->p.b.nic, s);
		assert_true(fd[s] >= 0);
	}
	myrio_sim_step(c->p.w, 5);
	drain(fd[0]); /* ETHERNET_UP's stats update */
	c->p.b.mem[SL_STATS + 63] = 0;
	h_w32(&c->p.b, c->p.b.claim_off + 4, 3);
	uint8_t src[4] = {10, 1, 0, 1}, dst[4] = {10, 1, 0, 2};
	for (unsigned round = 0; round < 2; round++) {
		for (uint16_t sport = 100; sport < 140; sport++) {
			unsigned want = expected(c, src, dst, sport, 7, 12);
			assert_int_equal(send_flow(c, 6, src, dst, sport, 7), (int)want);
			for (unsigned s = 0; s < NSL; s++)
				assert_int_equal(readable(fd[s]), s == want);
			drain(fd[want]);
			if (want == 0) { /* slice 0 has a status block: the §6.5 handshake */
				assert_int_equal(c->p.b.mem[SL_STATS + 63] & 1, 1);
				c->p.b.mem[SL_STATS + 63] = 0;
				h_w32(&c->p.b, c->p.b.claim_off + 4, 3);
			}
			h_w32(&c->p.b, c->p.b.claim_off + 8 * want, 3); /* the token back */
			myrio_sim_step(c->p.w, 2);
		}
	}
}

/* Multi-TX (§5.9): slice 2 sends from its own ring between its GO and STOP, and its
 * send_done_count is in its own status block. */
static void slices_send_from_their_rings(void **state)
{
	struct ctx *c = *state;
	bring_up_slices(c, NSL, true);
	struct hnic *h = &c->p.b;
	uint32_t ring2 = cmd(c, MCP_CMD_GET_SEND_OFFSET, 2, 0, 0);
	assert_int_not_equal(ring2, h->send_off);
	h->send_off = ring2;   /* h_send posts on slice 2's ring */
	h_w32(h, 0x380000, 1); /* slice 0 started, and empty */
	uint8_t f[64];
	h_frame(f, c->p.a.nic->eeprom_mac, h_src_mac, 0x0800, 64, 1);
	h_send(h, f, 64);
	myrio_sim_step(c->p.w, 5);
	assert_int_equal(h_nic_stats(h->nic).tx_frames, 0); /* slice 2 not started */
	h_w32(h, 0x380000 + 64 * 2, 1);			    /* SEND_GO, slice 2 */
	myrio_sim_step(c->p.w, 5);
	assert_int_equal(h_nic_stats(h->nic).tx_frames, 1);
	assert_int_equal(get_be32(h->mem + SL_STATS + 64 * 2 + 24), 1);
	assert_int_equal(h->mem[SL_STATS + 64 * 2 + 63] & 2, 2);
	assert_int_equal(get_be32(h->mem + SL_STATS + 24), 0); /* slice 0 sent nothing */
	assert_int_equal(h_completion(&c->p.a, NULL), 64);
}

static void order_rules(void **state)
{
	struct ctx *c = *state;
	struct hnic *h = &c->p.b;
	size_t len = 0;
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "rss_eth", &len), 0);
	assert_true(h_handoff(h, c->img, len));
	cmd(c, MCP_CMD_RESET, 0, 0, 0);
	uint32_t d;
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, &d), 2);
	cmd(c, MCP_CMD_SET_INTRQ_SIZE, 4096, 0, 0);
	/* slice 1's queue before ENABLE_RSS_QUEUES */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_DMA, 0, 2, 1, NULL), 2);
	assert_int_equal(cmd(c, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0), 16);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 17, 1, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 4, 0, 0, NULL), 2); /* shared irq */
	cmd(c, MCP_CMD_ENABLE_RSS_QUEUES, 4, 1, 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_DMA, 0, 2, 4, NULL), 2); /* slice 4 */
	assert_int_equal(h_cmd(h, MCP_CMD_GET_SMALL_RX_OFFSET, 4, 0, 0, NULL), 2);
	/* a receive-only slice has no status block */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_STATS_DMA_V2, 0, 2, 1u << 16 | 64, NULL), 2);
	/* the table before its size, hashing before the table */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_RSS_ENABLE, 1, 3, 0, NULL), 2);
	/* ETHERNET_UP with slice 3's completion ring missing */
	uint32_t hi = (uint32_t)(at(c, 0) >> 32);
	for (unsigned s = 0; s < 3; s++)
		cmd(c, MCP_CMD_SET_INTRQ_DMA, (uint32_t)at(c, SL_INTRQ + 4096 * s), hi, s);
	cmd(c, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)at(c, SL_STATS), hi, 64);
	cmd(c, MCP_CMD_SET_SMALL_BUFFER_SIZE, 1600, 0, 0);
	cmd(c, MCP_CMD_SET_BIG_BUFFER_SIZE, 2048, 0, 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 2);
	cmd(c, MCP_CMD_SET_INTRQ_DMA, (uint32_t)at(c, SL_INTRQ + 4096 * 3), hi, 3);
	assert_int_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 0);
	/* the count cannot change while up; the same count again (L at open) is fine */
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 2, 1, 0, NULL), 3);
	cmd(c, MCP_CMD_ENABLE_RSS_QUEUES, 4, 1, 0);
	/* the single-slice firmware has no RSS commands at all */
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth", &len), 0);
	assert_true(h_handoff(h, c->img, len));
	cmd(c, MCP_CMD_RESET, 0, 0, 0);
	cmd(c, MCP_CMD_SET_INTRQ_SIZE, 4096, 0, 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, &d), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(flows_spread_as_the_table_says, setup, teardown),
	    cmocka_unit_test_setup_teardown(port_hash_spreads_by_ports, setup, teardown),
	    cmocka_unit_test_setup_teardown(each_slice_raises_its_vector, setup, teardown),
	    cmocka_unit_test_setup_teardown(slices_send_from_their_rings, setup, teardown),
	    /* slice 0's empty ring must not hold slice 2's frame back from a paced wire */
	    cmocka_unit_test_setup_teardown(slices_send_from_their_rings, setup_paced, teardown),
	    cmocka_unit_test_setup_teardown(order_rules, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
