/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP option parsing and sequence arithmetic: well-formed options, options that run past
 * the header, SYN-only options on other segments, clamps; comparisons across the 2^32 wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "tcp_lite/stack.h"

static void parses_a_linux_syn(void **state)
{
	const uint8_t o[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
	struct tcp_opts t;
	tcp_opts_parse(o, sizeof(o), true, &t);
	assert_true(t.mss_ok);
	assert_int_equal(t.mss, 1460);
	assert_true(t.sack_ok);
	assert_true(t.ts_ok);
	assert_int_equal(t.tsval, 1);
	assert_int_equal(t.tsecr, 0);
	assert_true(t.ws_ok);
	assert_int_equal(t.wscale, 7);
	assert_false(t.malformed);
}

static void syn_options_ignored_on_other_segments(void **state)
{
	const uint8_t o[12] = {2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 0, 0};
	struct tcp_opts t;
	tcp_opts_parse(o, sizeof(o), false, &t);
	assert_false(t.mss_ok);
	assert_false(t.ws_ok);
	assert_false(t.sack_ok);
}

static void window_scale_is_clamped_to_14(void **state)
{
	const uint8_t o[4] = {1, 3, 3, 20};
	struct tcp_opts t;
	tcp_opts_parse(o, sizeof(o), true, &t);
	assert_true(t.ws_ok);
	assert_int_equal(t.wscale, 14);
}

static void option_running_past_the_header_stops_parsing(void **state)
{
	/* Timestamp claims 10 bytes, only 6 remain. */
	const uint8_t o[8] = {1, 1, 8, 10, 0, 0, 0, 5};
	struct tcp_opts t;
	tcp_opts_parse(o, sizeof(o), false, &t);
	assert_false(t.ts_ok);
	assert_true(t.malformed);
	/* Kind with no length byte at the very end. */
	const uint8_t o2[4] = {1, 1, 1, 8};
	tcp_opts_parse(o2, sizeof(o2), false, &t);
	assert_true(t.malformed);
	/* Length below 2 would loop forever. */
	const uint8_t o3[4] = {8, 0, 0, 0};
	tcp_opts_parse(o3, sizeof(o3), false, &t);
	assert_true(t.malformed);
	const uint8_t o4[4] = {8, 1, 0, 0};
	tcp_opts_parse(o4, sizeof(o4), false, &t);
	assert_true(t.malformed);
}

static void wrong_lengths_are_ignored(void **state)
{
	/* MSS with length 3 and a timestamp of length 8: both skipped by their length. */
	const uint8_t o[12] = {2, 3, 5, 8, 8, 0, 0, 0, 0, 0, 0, 0};
	struct tcp_opts t;
	tcp_opts_parse(o, sizeof(o), true, &t);
	assert_false(t.mss_ok);
	assert_false(t.ts_ok);
	assert_false(t.malformed);
}

static void end_of_list_stops(void **state)
{
	const uint8_t o[8] = {0, 0, 2, 4, 5, 0xb4, 0, 0};
	struct tcp_opts t;
	tcp_opts_parse(o, sizeof(o), true, &t);
	assert_false(t.mss_ok);
}

static void sack_blocks_parse_up_to_four(void **state)
{
	uint8_t o[40] = {1, 1, 5, 34};
	for (int i = 0; i < 4; i++) {
		uint32_t l = 0xfffffff0u + (uint32_t)i * 100, r = l + 50;
		o[4 + 8 * i] = (uint8_t)(l >> 24);
		o[5 + 8 * i] = (uint8_t)(l >> 16);
		o[6 + 8 * i] = (uint8_t)(l >> 8);
		o[7 + 8 * i] = (uint8_t)l;
		o[8 + 8 * i] = (uint8_t)(r >> 24);
		o[9 + 8 * i] = (uint8_t)(r >> 16);
		o[10 + 8 * i] = (uint8_t)(r >> 8);
		o[11 + 8 * i] = (uint8_t)r;
	}
	struct tcp_opts t;
	tcp_opts_parse(o, 36, false, &t);
	assert_int_equal(t.nsack, 4);
	assert_int_equal(t.sack[0][0], 0xfffffff0u);
	assert_int_equal(t.sack[1][0], 0xfffffff0u + 100);
	assert_int_equal(t.sack[3][1], 0xfffffff0u + 350);
	/* A SACK length that is not 2 + 8n is ignored. */
	o[3] = 12;
	tcp_opts_parse(o, 36, false, &t);
	assert_int_equal(t.nsack, 0);
}

static void sequence_comparisons_wrap(void **state)
{
	assert_true(seq_lt(0xfffffff0u, 0x10));
	assert_true(seq_gt(0x10, 0xfffffff0u));
	assert_true(seq_le(5, 5));
	assert_true(seq_ge(0, 0xffffffffu));
	assert_false(seq_lt(0x7fffffffu, 1)); /* less than half the space ahead */
	assert_int_equal(seq_max(0xfffffff0u, 0x10), 0x10);
	/* Distances across the wrap. */
	uint32_t una = 0xffffff00u, nxt = 0x100;
	assert_int_equal(nxt - una, 0x200);
}

static void segment_metadata_round_trips(void **state)
{
	struct myrio_pkt p;
	memset(&p, 0, sizeof(p));
	seg_set(&p, 0xfffffffeu, 1448, 66, SEG_FIN);
	assert_int_equal(seg_seq(&p), 0xfffffffeu);
	assert_int_equal(seg_len(&p), 1448);
	assert_int_equal(seg_hlen(&p), 66);
	assert_int_equal(seg_flags(&p), SEG_FIN);
	assert_int_equal(seg_space(&p), 1449);
	seg_set_flags(&p, SEG_SACKED | SEG_LOST);
	seg_set_hlen(&p, 78);
	assert_int_equal(seg_seq(&p), 0xfffffffeu);
	assert_int_equal(seg_len(&p), 1448);
	assert_int_equal(seg_hlen(&p), 78);
	assert_int_equal(seg_flags(&p), SEG_SACKED | SEG_LOST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_a_linux_syn),
	    cmocka_unit_test(syn_options_ignored_on_other_segments),
	    cmocka_unit_test(window_scale_is_clamped_to_14),
	    cmocka_unit_test(option_running_past_the_header_stops_parsing),
	    cmocka_unit_test(wrong_lengths_are_ignored),
	    cmocka_unit_test(end_of_list_stops),
	    cmocka_unit_test(sack_blocks_parse_up_to_four),
	    cmocka_unit_test(sequence_comparisons_wrap),
	    cmocka_unit_test(segment_metadata_round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
