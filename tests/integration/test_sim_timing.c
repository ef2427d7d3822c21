/* SPDX-License-Identifier: BSD-3-Clause */
/* A NIC's own timing (src/sim/timing.c), through the real driver on the stepped model: a
 * frame posted on an idle send ring is in the receiver's host memory after the profile's
 * sum (doorbell, firmware poll, payload read, the wire, both MACs, receive DMA), to the
 * model's 1 us step; without a profile, after its bits on the wire alone. The profile's
 * PCIe bandwidth caps an unlimited link. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
/* after the headers it needs */
#include <cmocka.h>

#include "myrio/myrio.h"
#include "sim/nic.h"
#include "sim/timing.h"

#define STEP_NS 1000u /* model time of one myrio_sim_step iteration */

struct rig {
	struct myrio_sim *w;
	struct myrio_port *a, *b;
	struct myrio_pool *pool;
	uint8_t dst[6];
};

static void rig_open(struct rig *r, const char *spec)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	assert_int_equal(myrio_sim_conf_parse(&sc, spec), 0);
	assert_int_equal(myrio_sim_create(&r->w, &sc), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = r->w;
	pc.mtu = 9000;
	assert_int_equal(myrio_port_open(&r->a, "sim:sim0", &pc), 0);
	assert_int_equal(myrio_port_open(&r->b, "sim:sim1", &pc), 0);
	assert_int_equal(myrio_port_pool_create(r->a, 4096, MYRIO_PKT_HEADROOM + 9018, &r->pool),
			 0);
	struct myrio_port_info ib;
	myrio_port_info(r->b, &ib);
	memcpy(r->dst, ib.mac, 6);
	myrio_sim_step(r->w, 100); /* link up, every ring idle */
}

static void rig_close(struct rig *r)
{
	struct myrio_pkt *p[32];
	for (int i = 0; i < 1000; i++) { /* everything in flight home */
		myrio_sim_step(r->w, 10);
		myrio_pkt_free_bulk(p, myrio_rx_burst(r->b, p, 32));
		myrio_tx_burst(r->a, NULL, 0);
	}
	myrio_pool_destroy(r->pool);
	myrio_port_close(r->a);
	myrio_port_close(r->b);
	myrio_sim_destroy(r->w);
}

static struct myrio_pkt *frame(struct rig *r, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(r->pool);
	assert_non_null(p);
	uint8_t *f = myrio_pkt_data(p);
	memcpy(f, r->dst, 6);
	memset(f + 6, 2, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	memset(f + 14, 0x5a, len - 14);
	p->len = len;
	return p;
}

/* Model ns from posting one frame of len bytes on an idle ring until the receiver's
 * driver hands it up (polled after every step). */
static uint64_t one_way_ns(struct rig *r, uint32_t len)
{
	struct myrio_pkt *p = frame(r, len);
	uint64_t t0 = sim_world_now(r->w);
	assert_int_equal(myrio_tx_burst(r->a, &p, 1), 1);
	for (unsigned step = 1; step <= 1000; step++) {
		myrio_sim_step(r->w, 1);
		struct myrio_pkt *in;
		if (myrio_rx_burst(r->b, &in, 1) == 1) {
			assert_int_equal(in->len, len);
			myrio_pkt_free(in);
			uint64_t t = sim_world_now(r->w) - t0;
			myrio_sim_step(r->w, 50); /* idle again before the next frame */
			myrio_tx_burst(r->a, NULL, 0);
			return t;
		}
	}
	fail_msg("a %u-byte frame did not arrive in 1 ms of model time", len);
	return 0;
}

/* The profile's sum for one frame on a 10 Gb/s link, in ps. */
static uint64_t profile_ps(const struct sim_timing *t, uint32_t len)
{
	uint64_t wire = (uint64_t)(len + 24) * 8 * 100; /* 10 Gb/s: 100 ps a bit */
	uint64_t pcie = sim_timing_pcie_ps(t, len);
	return sim_timing_tx_start_ps(t) + (wire > pcie ? wire : pcie) +
	       sim_timing_flight_ps(t, t, len);
}

/* The first step boundary at or after ps. */
static uint64_t on_step_ns(uint64_t ps)
{
	uint64_t step_ps = (uint64_t)STEP_NS * 1000;
	return (ps + step_ps - 1) / step_ps * STEP_NS;
}

static void a_frame_takes_the_profiles_sum(void **state)
{
	static const char *names[] = {"none", "myri10ge"};
	static const uint32_t lens[] = {60, 1514, 9014};
	for (unsigned n = 0; n < 2; n++) {
		const struct sim_timing *t = sim_timing_find(names[n]);
		assert_non_null(t);
		char spec[64];
		snprintf(spec, sizeof(spec), "stepped,link=10g,timing=%s", names[n]);
		struct rig r;
		rig_open(&r, spec);
		for (unsigned i = 0; i < 3; i++) {
			uint64_t want = on_step_ns(profile_ps(t, lens[i]));
			uint64_t got = one_way_ns(&r, lens[i]);
			printf("timing %s, %u bytes: %llu ns (profile %.1f ns)\n", names[n],
			       lens[i], (unsigned long long)got, profile_ps(t, lens[i]) / 1000.0);
			assert_int_equal(got, want);
		}
		rig_close(&r);
	}
	/* and the myri10ge sum is what docs/device-model.md says: 2,553 ns for 60 bytes */
	assert_int_equal(profile_ps(sim_timing_find("myri10ge"), 60) / 1000, 2552);
}

/* Frames of len bytes sent as fast as the model takes them: model ns for n of them. */
static uint64_t burst_ns(struct rig *r, uint32_t len, unsigned n)
{
	unsigned sent = 0, got = 0;
	uint64_t t0 = sim_world_now(r->w);
	while (got < n) {
		struct myrio_pkt *p[32];
		unsigned k = 0;
		while (k < 32 && sent + k < n)
			p[k] = frame(r, len), k++;
		unsigned s = myrio_tx_burst(r->a, p, (uint16_t)k);
		myrio_pkt_free_bulk(p + s, k - s);
		sent += s;
		myrio_sim_step(r->w, 1);
		unsigned g = myrio_rx_burst(r->b, p, 32);
		myrio_pkt_free_bulk(p, g);
		got += g;
		assert_true(sim_world_now(r->w) - t0 < 1000000000ull);
	}
	return sim_world_now(r->w) - t0;
}

static void pcie_bandwidth_caps_an_unlimited_link(void **state)
{
	const struct sim_timing *t = sim_timing_find("myri10ge");
	const unsigned n = 20000;
	const uint32_t len = 1514;
	struct rig r;
	rig_open(&r, "stepped,link=unlimited,timing=myri10ge");
	double gbps = (double)n * len * 8 / (double)burst_ns(&r, len, n);
	rig_close(&r);
	rig_open(&r, "stepped,link=unlimited");
	double free_gbps = (double)n * len * 8 / (double)burst_ns(&r, len, n);
	rig_close(&r);
	printf("unlimited link, 1514-byte frames: %.2f Gb/s with timing myri10ge (cap %.2f), "
	       "%.2f without\n",
	       gbps, t->pcie_bps / 1e9, free_gbps);
	assert_true(gbps <= t->pcie_bps / 1e9 * 1.001);
	assert_true(gbps >= t->pcie_bps / 1e9 * 0.97);
	assert_true(free_gbps > 2 * gbps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_frame_takes_the_profiles_sum),
	    cmocka_unit_test(pcie_bandwidth_caps_an_unlimited_link),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
