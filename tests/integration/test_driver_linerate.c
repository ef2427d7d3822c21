/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver keeps a 10 Gb/s model link busy: stepped model, one step (1 µs of model time,
 * the model bus's delay_us unit) per round of tx_burst + rx_burst with bursts of 32.
 * Counted in model time, so the result does not depend on the host's load: at least 99%
 * of the line rate for 60-byte (64 with FCS) and 1514-byte (1518) frames. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "driver_env.h"

#define MODEL_US 50000u

static void line_rate(uint32_t size)
{
	struct env e;
	assert_int_equal(env_world(&e, "stepped,link=10g"), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	struct myrio_pkt *out[32], *in[32];
	unsigned pending = 0;
	uint64_t rx = 0;
	for (uint32_t t = 0; t < MODEL_US; t++) {
		while (pending < 32) {
			struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a);
			if (!p)
				break;
			env_fill(myrio_pkt_data(p), 14, 0, e.ib.mac, e.ia.mac);
			p->len = size;
			out[pending++] = p;
		}
		uint16_t n = myrio_tx_burst(e.a, out, (uint16_t)pending);
		memmove(out, out + n, (pending - n) * sizeof(out[0]));
		pending -= n;
		uint16_t got = myrio_rx_burst(e.b, in, 32);
		for (uint16_t i = 0; i < got; i++)
			assert_int_equal(in[i]->len, size);
		rx += got;
		myrio_pkt_free_bulk(in, got);
		myrio_sim_step(e.sim, 1);
	}
	myrio_pkt_free_bulk(out, pending);
	double line = 10e9 / ((size + 4 + 8 + 12) * 8.0) * (MODEL_US * 1e-6);
	print_message("%u-byte frames: %llu in %u us of model time, %.2f%% of line rate\n", size,
		      (unsigned long long)rx, MODEL_US, 100.0 * rx / line);
	assert_true(rx >= 0.99 * line);
	struct myrio_port_stats s;
	myrio_port_stats(e.b, &s);
	assert_int_equal(env_xstat(e.b, "dropped_no_small_buffer"), 0);
	assert_int_equal(env_xstat(e.b, "dropped_no_big_buffer"), 0);
	assert_int_equal(s.rx_missed, 0);
	env_destroy(&e);
}

static void minimum_frames(void **state)
{
	(void)state;
	line_rate(60);
}

static void full_frames(void **state)
{
	(void)state;
	line_rate(1514);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(minimum_frames),
		cmocka_unit_test(full_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
