/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats' table of per-queue counters: which names are per queue (DIR_qN_NAME), and
 * the table's rows, columns and totals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static void names_per_queue(void **state)
{
	(void)state;
	unsigned q = 99;
	char col[40];
	assert_true(stats_queue_counter("rx_q0_packets", &q, col, sizeof(col)));
	assert_int_equal(q, 0);
	assert_string_equal(col, "rx_packets");
	assert_true(stats_queue_counter("irq_q15_updates", &q, col, sizeof(col)));
	assert_int_equal(q, 15);
	assert_string_equal(col, "irq_updates");
	assert_true(stats_queue_counter("tx_q3_ring_full", &q, col, sizeof(col)));
	assert_string_equal(col, "tx_ring_full");
	const char * not [] = {"rx_packets",
			       "rx_q_packets",
			       "rx_q1",
			       "rx_q1_",
			       "rx_qx_packets",
			       "rx_q64_packets",
			       "dropped_no_small_buffer",
			       "q1_packets"};
	for (unsigned i = 0; i < sizeof(not ) / sizeof(not [0]); i++)
		assert_false(stats_queue_counter(not [i], &q, col, sizeof(col)));
}

static void table_rows_and_totals(void **state)
{
	(void)state;
	const char *names[] = {"rx_packets",	"rx_q0_packets", "rx_q0_bytes",
			       "rx_q1_packets", "rx_q1_bytes",	 "tx_q1_ring_full"};
	const uint64_t v[] = {30, 10, 1000, 20, 2500, 7};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(stats_print_queues(f, 6, names, v, NULL, 0), 5);
	fclose(f);
	unsigned q0p, q0b, q1p, q1b, q1f, tp, tb, tf;
	char *l = strstr(buf, "\n    0 ");
	assert_non_null(l);
	assert_int_equal(sscanf(l, " 0 %u %u %u", &q0p, &q0b, &q1f), 3);
	assert_int_equal(q0p, 10);
	assert_int_equal(q0b, 1000);
	assert_int_equal(q1f, 0);
	l = strstr(buf, "\n    1 ");
	assert_int_equal(sscanf(l, " 1 %u %u %u", &q1p, &q1b, &q1f), 3);
	assert_int_equal(q1p, 20);
	assert_int_equal(q1b, 2500);
	assert_int_equal(q1f, 7);
	l = strstr(buf, "total");
	assert_non_null(l);
	assert_int_equal(sscanf(l, "total %u %u %u", &tp, &tb, &tf), 3);
	assert_int_equal(tp, 30);
	assert_int_equal(tb, 3500);
	assert_int_equal(tf, 7);
	assert_non_null(strstr(buf, "rx_packets"));
	assert_non_null(strstr(buf, "tx_ring_full"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(names_per_queue),
	    cmocka_unit_test(table_rows_and_totals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
