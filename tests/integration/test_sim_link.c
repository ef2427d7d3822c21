/* SPDX-License-Identifier: BSD-3-Clause */
/* The cable: 10 Gb/s timing (preamble, FCS and gap counted) in stepped virtual time,
 * seeded faults that repeat exactly, corruption seen as bad CRC, link flaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "../unit/sim_harness.h"

/* A pair on a world made from spec, up: a sends, b has 512 small buffers posted. */
static int pair_open(struct hpair *p, const char *spec)
{
	if (h_pair_open(p, spec) || h_bringup(&p->a, 126, 2048, 0) ||
	    h_bringup(&p->b, 126, 2048, 512))
		return -1;
	return 0;
}

/* Receives everything pending on b, reposting one buffer per frame; returns the count
 * and records the first payload word of each frame. */
static unsigned drain(struct hpair *p, uint32_t *seqs, unsigned cap, unsigned have)
{
	unsigned n = 0;
	uint32_t len;
	while ((len = h_completion(&p->b, NULL)) != 0) {
		uint32_t slot = len <= 126 ? p->b.small_prod - 512 : p->b.big_prod - 512;
		const uint8_t *buf = len <= 126 ? h_small_buf(&p->b, slot) : h_big_buf(&p->b, slot);
		if (seqs && have + n < cap)
			seqs[have + n] = get_be32(buf + 2 + 14);
		if (len <= 126)
			h_post_small(&p->b, 1);
		else
			h_post_big(&p->b, 1);
		n++;
	}
	return n;
}

static void send_seq(struct hpair *p, uint32_t len, uint32_t seq)
{
	uint8_t f[1600];
	h_frame(f, p->b.nic->eeprom_mac, h_src_mac, 0x88b5, len, 0);
	put_be32(f + 14, seq);
	h_send(&p->a, f, (uint16_t)len);
}

/* Keeps a's send ring busy with frames of len bytes for `warm` + `window` µs of virtual
 * time; returns the frame rate measured over the window. */
static double blast(struct hpair *p, uint32_t len, unsigned warm, unsigned window)
{
	uint32_t sent = 0, done = 0, got = 0;
	uint64_t t0 = 0;
	for (;;) {
		uint64_t now = sim_world_now(p->w);
		if (!t0 && now >= warm * 1000ull) {
			t0 = now;
			got = 0;
		}
		if (t0 && now >= t0 + window * 1000ull)
			return got / ((now - t0) / 1e9);
		uint32_t v;
		if (h_status(&p->a, &v, NULL))
			done = v;
		while (sent - done < 256)
			send_seq(p, len, sent++);
		myrio_sim_step(p->w, 1);
		got += drain(p, NULL, 0, 0);
	}
}

static void ten_gig_timing(void **state)
{
	(void)state;
	struct hpair p;
	assert_int_equal(pair_open(&p, "link=10g"), 0);
	/* 1514 + FCS = 1518-byte frames: 10e9 / ((1518 + 20) * 8) = 812,744 frames/s */
	double fps = blast(&p, 1514, 10000, 50000); /* 50 ms of virtual time */
	print_message("1518-byte frames: %.0f/s\n", fps);
	assert_true(fps > 812744 * 0.99 && fps < 812744 * 1.01);
	h_pair_close(&p);
	/* 64-byte frames: 14.88 Mpps */
	assert_int_equal(pair_open(&p, "link=10g"), 0);
	fps = blast(&p, 60, 1000, 5000);
	print_message("64-byte frames: %.0f/s\n", fps);
	assert_true(fps > 14880952 * 0.99 && fps < 14880952 * 1.01);
	h_pair_close(&p);
	/* SET_THROTTLE_FACTOR 4096: 256 x 16 Gb/s / 4096 = 1 Gb/s of frame bytes (x8 link) */
	assert_int_equal(pair_open(&p, "link=unlimited"), 0);
	assert_int_equal(h_cmd(&p.a, MCP_CMD_SET_THROTTLE_FACTOR, 8192, 0, 0, NULL), 2); /* "p" firmware: up to 8191 */
	assert_int_equal(h_cmd(&p.a, MCP_CMD_SET_THROTTLE_FACTOR, 4096, 0, 0, NULL), 0);
	fps = blast(&p, 1514, 10000, 20000);
	print_message("throttled 1514-byte frames: %.0f/s\n", fps);
	assert_true(fps > 1e9 / (1514 * 8) * 0.99 && fps < 1e9 / (1514 * 8) * 1.01);
	h_pair_close(&p);
	/* 1 Gb/s */
	assert_int_equal(pair_open(&p, "link=1g"), 0);
	fps = blast(&p, 1514, 10000, 20000);
	assert_true(fps > 81274 * 0.99 && fps < 81274 * 1.01);
	h_pair_close(&p);
}

static unsigned run_faults(const char *spec, uint32_t *seqs, unsigned cap, struct sim_counters *k)
{
	struct hpair p;
	if (pair_open(&p, spec))
		return 0;
	unsigned have = 0;
	for (uint32_t i = 0; i < 2000; i++) {
		send_seq(&p, 100, i);
		if ((i & 7) == 7) {
			myrio_sim_step(p.w, 2);
			h_send_done(&p.a, i + 1);
			have += drain(&p, seqs, cap, have);
		}
	}
	myrio_sim_step(p.w, 2000); /* a held-back frame is released after 1 ms */
	have += drain(&p, seqs, cap, have);
	sim_nic_get_counters(p.b.nic, k);
	h_pair_close(&p);
	return have;
}

static void faults_repeat_with_a_seed(void **state)
{
	(void)state;
	static uint32_t s1[4000], s2[4000], s3[4000];
	struct sim_counters k1, k2, k3;
	const char *spec = "link=unlimited,seed=42,loss=0.05,reorder=0.05,dup=0.05,corrupt=0.05";
	unsigned n1 = run_faults(spec, s1, 4000, &k1);
	unsigned n2 = run_faults(spec, s2, 4000, &k2);
	unsigned n3 = run_faults("link=unlimited,seed=43,loss=0.05,reorder=0.05,dup=0.05,"
				 "corrupt=0.05",
				 s3, 4000, &k3);
	assert_int_equal(n1, n2);
	assert_memory_equal(s1, s2, n1 * sizeof(uint32_t));
	assert_int_equal(k1.dropped_bad_crc32, k2.dropped_bad_crc32);
	assert_true(n1 != n3 || memcmp(s1, s3, n1 * sizeof(uint32_t)) != 0);
	/* each fault really happened, at about its rate */
	assert_true(k1.dropped_bad_crc32 > 40 && k1.dropped_bad_crc32 < 180);
	unsigned dups = 0, inversions = 0;
	static uint8_t seen[2000];
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < n1; i++) {
		assert_true(s1[i] < 2000);
		if (seen[s1[i]]++)
			dups++;
		if (i && s1[i] < s1[i - 1])
			inversions++;
	}
	unsigned distinct = 0;
	for (unsigned i = 0; i < 2000; i++)
		distinct += seen[i] != 0;
	assert_true(dups > 40 && dups < 180);
	assert_true(inversions > 40);
	assert_true(distinct > 2000 * 0.85 && distinct < 2000 * 0.95); /* loss + corrupt */
}

static void flaps(void **state)
{
	(void)state;
	struct hpair p;
	assert_int_equal(pair_open(&p, "link=10g,flap=2/1"), 0);
	unsigned downs = 0, ups = 0;
	uint32_t last = 1;
	for (unsigned s = 0; s < 10000; s++) {
		uint32_t link;
		myrio_sim_step(p.w, 1);
		if (h_status(&p.b, NULL, &link) && link != last) {
			if (link == 0)
				downs++;
			else
				ups++;
			last = link;
		}
	}
	assert_true(downs >= 4 && downs <= 5);
	assert_true(ups >= 4 && ups <= 5);
	h_pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ten_gig_timing),
	    cmocka_unit_test(faults_repeat_with_a_seed),
	    cmocka_unit_test(flaps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
