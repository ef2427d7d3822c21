/* SPDX-License-Identifier: BSD-3-Clause */
/* Transmit path (§5): chains, ring wrap, flags cleared, send_done once per chain,
 * checksum offload (§5.5), validation of broken chains, tx_boundary per firmware. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim_harness.h"
#include "util/csum.h"

static int setup(void **state)
{
	struct hpair *c = h_pair_new("link=unlimited,tx_ring=16");
	if (!c || h_bringup(&c->a, 126, 2048, 0) || h_bringup(&c->b, 1518, 4096, 256))
		return -1;
	*state = c;
	return 0;
}

/* Sends a frame split into pieces of the given lengths, each its own buffer. */
static void send_chain(struct hpair *c, const uint8_t *f, const uint16_t *pieces, unsigned n,
		       uint8_t extra_flags, uint8_t cko, uint16_t pho)
{
	struct hnic *a = &c->a;
	uint32_t before = 0;
	uint32_t w3_0 = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *b = h_tx_buf(a, a->tx_prod + i) + 100; /* inside a page */
		memcpy(b, f + before, pieces[i]);
		uint8_t fl = (uint8_t)(0x10 | extra_flags | (i == 0 ? 0x02 : 0));
		uint8_t ck = cko > before ? (uint8_t)(cko - before) : 0;
		if ((extra_flags & 0x08) && i > 0 && (before & 1))
			fl |= 0x04;
		uint8_t rd = (uint8_t)(i == 0 ? n : 1);
		if (i == 0)
			w3_0 = (uint32_t)rd << 16 | (uint32_t)ck << 8 | fl;
		h_txd(a, i, h_iova(a, (uint32_t)(b - a->mem)), pieces[i], pho, rd, ck, fl, i != 0);
		before += pieces[i];
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	h_w32(a, a->send_off + (a->tx_prod & (a->tx_entries - 1)) * 16 + 12, w3_0);
	a->tx_prod += n;
}

static void chains_wrap_and_send_done(void **state)
{
	struct hpair *c = *state;
	uint8_t f[1500];
	uint16_t pieces[3] = {14, 500, 486};
	unsigned chains = 0;
	uint32_t done = 0;
	for (unsigned k = 0; k < 20; k++) { /* 60 descriptors through a 16-slot ring */
		h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0800, 1000, (uint8_t)k);
		send_chain(c, f, pieces, 3, 0x01, 0, 0);
		chains++;
		myrio_sim_step(c->w, 2);
		uint16_t cs;
		assert_int_equal(h_completion(&c->b, &cs), 1000);
		assert_int_equal(cs, csum_fold(csum_add(0, f + 14, 986)));
		done = h_send_done(&c->a, chains);
		assert_int_equal(done, chains);
	}
	/* every consumed slot has flags 0 */
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(h_r32(&c->a, c->a.send_off + i * 16 + 12) & 0xFF, 0);
	struct sim_nic_stats st = h_nic_stats(c->a.nic);
	assert_int_equal(st.tx_frames, 20);
	assert_int_equal(st.tx_invalid, 0);
}

static void received_bytes_match(void **state)
{
	struct hpair *c = *state;
	uint8_t f[1500];
	h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0800, 777, 5);
	uint16_t pieces[4] = {1, 13, 300, 463};
	send_chain(c, f, pieces, 4, 0x01, 0, 0);
	myrio_sim_step(c->w, 2);
	assert_int_equal(h_completion(&c->b, NULL), 777);
	assert_memory_equal(h_small_buf(&c->b, 0) + 2, f, 777);
}

/* UDP/IPv4 frame with the pseudo-header sum seeded (§5.5). */
static uint32_t udp_frame(uint8_t *f, const uint8_t *dst, uint32_t payload)
{
	uint32_t len = 14 + 20 + 8 + payload;
	h_frame(f, dst, h_src_mac, 0x0800, len, 7);
	uint8_t *ip = f + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)(20 + 8 + payload));
	ip[8] = 64;
	ip[9] = 17;
	put_be32(ip + 12, 0x0a000001);
	put_be32(ip + 16, 0x0a000002);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
	uint8_t *u = ip + 20;
	put_be16(u, 1234);
	put_be16(u + 2, 5678);
	put_be16(u + 4, (uint16_t)(8 + payload));
	uint64_t ph = csum_add(0, ip + 12, 8) + 17 + 8 + payload;
	put_be16(u + 6, csum_fold(ph)); /* seed: pseudo-header sum, not inverted */
	return len;
}

static bool udp_ok(const uint8_t *f)
{
	const uint8_t *ip = f + 14;
	uint16_t ulen = get_be16(ip + 20 + 4);
	uint64_t s = csum_add(0, ip + 12, 8) + 17 + ulen;
	s = csum_add(s, ip + 20, ulen);
	return csum_fold(s) == 0xFFFF && get_be16(ip + 26) != 0;
}

static void checksum_offload(void **state)
{
	struct hpair *c = *state;
	uint8_t f[1500];
	uint32_t len = udp_frame(f, c->b.nic->eeprom_mac, 101);
	uint16_t one[1] = {(uint16_t)len};
	send_chain(c, f, one, 1, 0x01 | 0x08, 34, 40);
	myrio_sim_step(c->w, 2);
	assert_int_equal(h_completion(&c->b, NULL), len);
	uint8_t *rx = h_small_buf(&c->b, 0) + 2;
	assert_true(udp_ok(rx));
	/* sender's buffer untouched: the NIC only reads it */
	assert_int_equal(get_be16(h_tx_buf(&c->a, 0) + 100 + 40), get_be16(f + 40));
	/* split at odd offsets: 35 | 20 | rest, with ALIGN_ODD on the third */
	uint16_t three[3] = {35, 20, (uint16_t)(len - 55)};
	send_chain(c, f, three, 3, 0x01 | 0x08, 34, 40);
	myrio_sim_step(c->w, 2);
	uint16_t cs = 0;
	assert_int_equal(h_completion(&c->b, &cs), len);
	assert_true(udp_ok(h_small_buf(&c->b, 1) + 2));
	/* the receiver's sum covers the inserted checksum */
	assert_int_equal(cs, csum_fold(csum_add(0, h_small_buf(&c->b, 1) + 2 + 14, len - 14)));
	/* a checksum field at an odd offset, over a fragment boundary */
	uint16_t odd[2] = {42, (uint16_t)(len - 42)};
	f[41] = f[42] = 0; /* a zero seed: the result then sums to 0xFFFF */
	send_chain(c, f, odd, 2, 0x01 | 0x08, 35, 41);
	myrio_sim_step(c->w, 2);
	assert_int_equal(h_completion(&c->b, &cs), len);
	const uint8_t *rx2 = h_small_buf(&c->b, 2) + 2;
	assert_int_equal(csum_fold(csum_add(0, rx2 + 35, len - 35)), 0xFFFF);
	assert_int_equal(cs, csum_fold(csum_add(0, rx2 + 14, len - 14)));
}

/* The inserted checksum is taken as the receiving NIC copies (struct sim_frame): a long
 * frame in pieces of odd lengths, its checksum start and field at odd offsets, the field
 * across the receiver's first two big buffers (62 bytes, then 64 each). */
static void checksum_offload_over_small_big_buffers(void **state)
{
	struct hpair *c = *state;
	enum { LEN = 1400, START = 41, FIELD = 61 };
	uint8_t f[LEN];
	h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0800, LEN, 9);
	for (unsigned i = 14; i < LEN; i++)
		f[i] = (uint8_t)(i * 7 + 0xf0); /* high bytes: many carries */
	put_be16(f + FIELD, 0x1234);		/* a seed, summed with the rest */
	uint16_t pieces[5] = {35, 20, 333, 1001, LEN - 35 - 20 - 333 - 1001};
	send_chain(c, f, pieces, 5, 0x01 | 0x08, START, FIELD);
	myrio_sim_step(c->w, 2);
	uint16_t cs = 0;
	assert_int_equal(h_completion(&c->b, &cs), LEN);
	uint8_t rx[LEN];
	uint32_t got = 0;
	for (uint32_t b = 0; got < LEN; b++) {
		uint32_t pad = b == 0 ? 2 : 0, n = 64 - pad;
		n = n < LEN - got ? n : LEN - got;
		memcpy(rx + got, h_big_buf(&c->b, b) + pad, n);
		got += n;
	}
	assert_memory_equal(rx, f, FIELD);
	assert_memory_equal(rx + FIELD + 2, f + FIELD + 2, LEN - FIELD - 2);
	/* the field holds ~(sum with the seed in it): the sum with it, plus the seed, is all
	 * ones (the field is an even distance from the start) */
	assert_int_equal(csum16_add(csum_fold(csum_add(0, rx + START, LEN - START)), 0x1234),
			 0xFFFF);
	assert_int_equal(cs, csum_fold(csum_add(0, rx + 14, LEN - 14)));
	assert_int_equal(h_nic_stats(c->a.nic).tx_invalid, 0);
}

static void broken_chains_dropped(void **state)
{
	struct hpair *c = *state;
	struct sim_nic_stats st0 = h_nic_stats(c->a.nic);
	uint8_t f[1500];
	h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0800, 1300, 1);
	uint16_t p13[13];
	for (unsigned i = 0; i < 13; i++)
		p13[i] = 100;
	send_chain(c, f, p13, 13, 0x01, 0, 0); /* > 12 descriptors */
	myrio_sim_step(c->w, 2);
	/* a descriptor crossing the 2 KiB boundary of the "p" firmware */
	uint8_t *b = h_tx_buf(&c->a, c->a.tx_prod) + 2000;
	memcpy(b, f, 100);
	h_txd(&c->a, 0, h_iova(&c->a, (uint32_t)(b - c->a.mem)), 100, 0, 1, 0, 0x13, 1);
	c->a.tx_prod++;
	myrio_sim_step(c->w, 2);
	/* CKSUM on one descriptor only */
	uint16_t two[2] = {50, 50};
	send_chain(c, f, two, 2, 0x01, 0, 0);
	h_w32(&c->a, c->a.send_off + ((c->a.tx_prod - 1) & 15) * 16 + 12, 1u << 16 | 0x19);
	myrio_sim_step(c->w, 2);
	struct sim_nic_stats st = h_nic_stats(c->a.nic);
	assert_int_equal(st.tx_invalid - st0.tx_invalid, 3);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	/* still counted as done: the host gets its buffers back */
	assert_int_equal(h_send_done(&c->a, 3), 3);
}

static void runt_sent_as_given(void **state)
{
	struct hpair *c = *state;
	uint8_t f[64];
	h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0806, 42, 1);
	uint16_t one[1] = {42};
	send_chain(c, f, one, 1, 0x01, 0, 0);
	myrio_sim_step(c->w, 2);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_counters k = h_nic_counters(c->b.nic);
	assert_int_equal(k.dropped_runt, 1);
}

/* Posts the TSO request in req (§5.6): its hl header bytes in one buffer, the payload from
 * a 2 KiB-aligned one, cut at 2 KiB; descriptor 0's flags last (§5.7). cko is the header
 * descriptor's checksum offset; the payload descriptors carry it too for IPv6, 0 for IPv4
 * (the offset counts down past the header there). */
static void tso_post(struct hnic *a, const uint8_t *req, uint32_t hl, uint32_t payload,
		     uint16_t mss, uint8_t cko, bool ipv6)
{
	uint8_t *hb = h_tx_buf(a, 0), *pb = h_tx_buf(a, 1);
	memcpy(hb, req, hl);
	memcpy(pb, req + hl, payload);
	unsigned n = 1;
	h_txd(a, 0, h_iova(a, (uint32_t)(hb - a->mem)), (uint16_t)hl, mss, 1, cko, 0x03, 0);
	for (uint32_t off = 0; off < payload; off += 2048, n++) {
		uint32_t l = payload - off < 2048 ? payload - off : 2048;
		uint8_t fl = 0x20 | (off == 0 ? 0x02 : 0);
		h_txd(a, n, h_iova(a, (uint32_t)(pb + off - a->mem)), (uint16_t)l, mss, 1,
		      ipv6 ? cko : 0, fl, 1);
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	h_w32(a, a->send_off + (a->tx_prod & (a->tx_entries - 1)) * 16 + 12,
	      1u << 16 | (uint32_t)cko << 8 | 0x03);
	a->tx_prod += n;
}

/* A TCP/IPv4 request of `payload` bytes: header descriptor, then payload descriptors cut
 * at 2 KiB (§5.6). seed_ok = false puts a wrong checksum seed. */
static uint32_t tso_send(struct hpair *c, uint32_t payload, uint16_t mss, bool seed_ok,
			 uint8_t *req)
{
	uint32_t hl = 14 + 20 + 20, total = hl + payload;
	h_frame(req, c->b.nic->eeprom_mac, h_src_mac, 0x0800, total, 3);
	uint8_t *ip = req + 14, *t = ip + 20;
	memset(ip, 0, 40);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)(total - 14 > 0xFFFF ? 0 : total - 14));
	put_be16(ip + 4, 100);
	ip[8] = 64;
	ip[9] = 6;
	put_be32(ip + 12, 0x0a000001);
	put_be32(ip + 16, 0x0a000002);
	put_be16(t, 80);
	put_be16(t + 2, 8080);
	put_be32(t + 4, 1000000);
	t[12] = 5 << 4;
	t[13] = 0x18; /* PSH|ACK */
	uint64_t ph = csum_add(0, ip + 12, 8) + 6 + (total - 34);
	put_be16(t + 16, (uint16_t)(csum_fold(ph) + (seed_ok ? 0 : 1)));
	tso_post(&c->a, req, hl, payload, mss, 34, false);
	return total;
}

static void tso_segments(void **state)
{
	struct hpair *c = *state;
	static uint8_t req[8192];
	uint32_t payload = 5000;
	tso_send(c, payload, 1448, true, req);
	myrio_sim_step(c->w, 3);
	uint32_t seq = 1000000, got = 0;
	for (unsigned k = 0; k < 4; k++) {
		uint16_t cs;
		uint32_t len = h_completion(&c->b, &cs);
		uint32_t plen = k < 3 ? 1448 : payload - 3 * 1448;
		assert_int_equal(len, 54 + plen);
		const uint8_t *f = h_small_buf(&c->b, k) + 2;
		/* the receiver's sum (§4.6) covers the segment as it arrived */
		assert_int_equal(cs, csum_fold(csum_add(0, f + 14, len - 14)));
		const uint8_t *ip = f + 14, *t = ip + 20;
		assert_int_equal(get_be16(ip + 2), 40 + plen);
		assert_int_equal(get_be16(ip + 4), 100 + k);
		assert_int_equal(csum_fold(csum_add(0, ip, 20)), 0xFFFF);
		assert_int_equal(get_be32(t + 4), seq);
		assert_int_equal(t[13], k < 3 ? 0x10 : 0x18); /* PSH on the last only */
		uint64_t s = csum_add(0, ip + 12, 8) + 6 + 20 + plen;
		assert_int_equal(csum_fold(csum_add(s, t, 20 + plen)), 0xFFFF);
		assert_memory_equal(t + 20, req + 54 + k * 1448, plen);
		seq += plen;
		got++;
	}
	assert_int_equal(h_completion(&c->b, NULL), 0);
	assert_int_equal(h_send_done(&c->a, 1), 1); /* one TSO request, one send_done */
	/* a wrong seed is diagnosed and the request dropped */
	struct sim_nic_stats st0 = h_nic_stats(c->a.nic);
	tso_send(c, 3000, 1448, false, req);
	myrio_sim_step(c->w, 3);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_nic_stats st = h_nic_stats(c->a.nic);
	assert_int_equal(st.tx_invalid - st0.tx_invalid, 1);
	assert_int_equal(st.tx_tso_segments, 4);
}

/* IPv6 behind a VLAN tag (§5.6): cksum_offset is the TCP header length there. */
static void tso_ipv6_vlan(void **state)
{
	struct hpair *c = *state;
	static uint8_t req[8192];
	uint32_t l3 = 18, hl = l3 + 40 + 20, payload = 3000, total = hl + payload;
	uint16_t mss = 1400;
	h_frame(req, c->b.nic->eeprom_mac, h_src_mac, 0x8100, total, 9);
	put_be16(req + 14, 5);	    /* TCI */
	put_be16(req + 16, 0x86DD); /* inner type */
	uint8_t *ip = req + l3, *t = ip + 40;
	memset(ip, 0, 60);
	ip[0] = 0x60;
	put_be16(ip + 4, (uint16_t)(20 + payload));
	ip[6] = 6;
	ip[7] = 64;
	for (unsigned i = 0; i < 16; i++) {
		ip[8 + i] = (uint8_t)(0x20 + i);
		ip[24 + i] = (uint8_t)(0x40 + i);
	}
	put_be16(t, 443);
	put_be16(t + 2, 5555);
	put_be32(t + 4, 77);
	t[12] = 5 << 4;
	t[13] = 0x19; /* FIN|PSH|ACK */
	uint64_t ph = csum_add(0, ip + 8, 32) + 6 + (20 + payload);
	put_be16(t + 16, csum_fold(ph));
	tso_post(&c->a, req, hl, payload, mss, 20, true);
	myrio_sim_step(c->w, 3);
	uint32_t seq = 77;
	for (unsigned k = 0; k < 3; k++) {
		uint32_t plen = k < 2 ? mss : payload - 2 * mss;
		uint16_t cs;
		assert_int_equal(h_completion(&c->b, &cs), hl + plen);
		const uint8_t *f = h_small_buf(&c->b, k) + 2;
		assert_int_equal(cs, csum_fold(csum_add(0, f + 14, hl + plen - 14)));
		const uint8_t *i6 = f + l3, *tt = i6 + 40;
		assert_int_equal(get_be16(f + 12), 0x8100); /* the tag is kept */
		assert_int_equal(get_be16(i6 + 4), 20 + plen);
		assert_int_equal(get_be32(tt + 4), seq);
		assert_int_equal(tt[13], k < 2 ? 0x10 : 0x19);
		uint64_t s = csum_add(0, i6 + 8, 32) + 6 + 20 + plen;
		assert_int_equal(csum_fold(csum_add(s, tt, 20 + plen)), 0xFFFF);
		seq += plen;
	}
	assert_int_equal(h_completion(&c->b, NULL), 0);
}

/* The host unmaps a TSO request's payload while the request waits for the wire: what is
 * left of it is not sent (the model must not read memory no longer registered; in the
 * daemon that memory may be gone, or another client's), and the failed read costs an RDMA
 * tag, as for a plain frame (the driver's watchdog resets on it). */
static void tso_payload_unmapped_mid_request(void **state)
{
	struct hpair *c = *state;
	static uint8_t req[8192];
	uint32_t tags = c->a.nic->rdma_tags;
	tso_send(c, 5000, 1448, true, req);
	uint32_t first = 0;
	for (unsigned i = 0; i < 100000 && !first; i++) {
		myrio_sim_step(c->w, 1);
		first = h_completion(&c->b, NULL);
	}
	assert_int_equal(first, 54 + 1448);
	assert_int_equal(sim_nic_dma_unmap(c->a.nic, c->a.iova, H_MEM_LEN), 0);
	myrio_sim_step(c->w, 20000);
	unsigned more = 0;
	while (h_completion(&c->b, NULL))
		more++;
	assert_true(more < 3); /* at most the segment already on its way */
	struct sim_nic_stats st = h_nic_stats(c->a.nic);
	assert_true(st.dma_faults > 0);
	assert_int_equal(st.tx_read_faults, 1);
	assert_int_equal(c->a.nic->rdma_tags, tags - 1);
	assert_int_equal(sim_nic_dma_map(c->a.nic, c->a.iova, c->a.mem, H_MEM_LEN), 0);
}

/* A TSO request whose header sits at an unmapped IOVA (a driver's bad address, refused by
 * the IOMMU): nothing is sent, and the read costs an RDMA tag as for a plain frame. */
static void tso_header_unmapped(void **state)
{
	struct hpair *c = *state;
	static uint8_t req[8192];
	uint32_t tags = c->a.nic->rdma_tags;
	assert_int_equal(sim_nic_dma_unmap(c->a.nic, c->a.iova, H_MEM_LEN), 0);
	tso_send(c, 5000, 1448, true, req);
	myrio_sim_step(c->w, 20000);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_nic_stats st = h_nic_stats(c->a.nic);
	assert_int_equal(st.tx_read_faults, 1);
	assert_int_equal(c->a.nic->rdma_tags, tags - 1);
	assert_int_equal(sim_nic_dma_map(c->a.nic, c->a.iova, c->a.mem, H_MEM_LEN), 0);
}

static int setup_tiny_big(void **state)
{
	struct hpair *c = h_pair_new("link=unlimited,tx_ring=16");
	if (!c || h_bringup(&c->a, 126, 2048, 0) || h_bringup(&c->b, 60, 64, 256))
		return -1;
	*state = c;
	return 0;
}

static int setup_slow(void **state)
{
	struct hpair *c = h_pair_new("link=1g,tx_ring=16");
	if (!c || h_bringup(&c->a, 126, 2048, 0) || h_bringup(&c->b, 1518, 4096, 256))
		return -1;
	*state = c;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(chains_wrap_and_send_done, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(received_bytes_match, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(checksum_offload, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(checksum_offload_over_small_big_buffers, setup_tiny_big,
					    h_pair_teardown),
	    cmocka_unit_test_setup_teardown(broken_chains_dropped, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(runt_sent_as_given, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(tso_segments, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(tso_ipv6_vlan, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(tso_payload_unmapped_mid_request, setup_slow,
					    h_pair_teardown),
	    cmocka_unit_test_setup_teardown(tso_header_unmapped, setup, h_pair_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
