/* SPDX-License-Identifier: BSD-3-Clause */
/* The NIC-neutral port API on a Myri-10G of the model: generic counters first in the
 * extended list and equal to myrio_port_stats, the driver's own after them, attributes,
 * short buffers never overrun, and driver arguments (accepted, and refused by name). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrio/myrio.h"
#include "port/port_ops.h"

static char logged[4096];

static void capture(enum myrio_log_level level, const char *msg, void *arg)
{
	size_t n = strlen(logged);
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static struct myrio_sim *world(void)
{
	struct myrio_sim *w = NULL;
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	myrio_sim_conf_parse(&sc, "stepped");
	return myrio_sim_create(&w, &sc) == 0 ? w : NULL;
}

static int open_port(struct myrio_sim *w, const char *args, struct myrio_port **p)
{
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = w;
	conf.driver_args = args;
	logged[0] = '\0';
	return myrio_port_open(p, "sim:sim0", &conf);
}

static int find(const struct myrio_xstat_name *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i].name, name) == 0)
			return i;
	return -1;
}

static void generic_counters_lead_the_driver_ones(void **state)
{
	struct myrio_sim *w = world();
	struct myrio_port *p;
	assert_non_null(w);
	assert_int_equal(open_port(w, NULL, &p), 0);
	int n = myrio_port_xstats_names(p, NULL, 0);
	assert_true(n > 20);
	struct myrio_xstat_name names[64];
	uint64_t values[64];
	assert_true(n <= 64);
	assert_int_equal(myrio_port_xstats_names(p, names, 64), n);
	assert_int_equal(myrio_port_xstats(p, values, 64), n);
	assert_string_equal(names[0].name, "rx_packets");
	int gen = find(names, n, "link_up"), drv = find(names, n, "dropped_pause");
	assert_true(gen > 0 && drv > gen); /* the driver's after the generic ones */
	assert_true(find(names, n, "rdma_tags_lost") > drv);
	struct myrio_port_stats st;
	assert_int_equal(myrio_port_stats(p, &st), 0);
	assert_int_equal(values[find(names, n, "link_changes")], st.link_changes);
	assert_int_equal(values[find(names, n, "rdma_tags_available")], 15);
	uint64_t v = 0;
	assert_int_equal(myrio_port_xstat(p, "rdma_tags_available", &v), 0);
	assert_int_equal(v, 15);
	assert_int_equal(myrio_port_xstat(p, "no_such_counter", &v), -ENOENT);
	/* A short buffer takes what fits and says how many there are. */
	uint64_t few[3] = {0, 0, 0xfeedu};
	assert_int_equal(myrio_port_xstats(p, few, 2), n);
	assert_int_equal(few[2], 0xfeedu);
	struct myrio_xstat_name two[3];
	strcpy(two[2].name, "canary");
	assert_int_equal(myrio_port_xstats_names(p, two, 2), n);
	assert_string_equal(two[2].name, "canary");
	myrio_port_close(p);
	myrio_sim_destroy(w);
}

static void attributes_carry_what_info_no_longer_does(void **state)
{
	struct myrio_sim *w = world();
	struct myrio_port *p;
	assert_int_equal(open_port(w, NULL, &p), 0);
	struct myrio_port_info in;
	assert_int_equal(myrio_port_info(p, &in), 0);
	assert_string_equal(in.driver, "myri10ge");
	assert_string_equal(in.bus, "sim");
	struct myrio_port_attr a[8];
	int n = myrio_port_attrs(p, a, 8);
	assert_int_equal(n, 6);
	assert_string_equal(a[0].name, "fw_version");
	assert_non_null(strstr(a[0].value, "libmyrio model"));
	assert_string_equal(a[3].name, "small_buf_size");
	assert_true(strtoul(a[3].value, NULL, 10) > 0);
	struct myrio_port_attr one[2];
	strcpy(one[1].name, "canary");
	assert_int_equal(myrio_port_attrs(p, one, 1), 6);
	assert_string_equal(one[1].name, "canary");
	myrio_port_close(p);
	myrio_sim_destroy(w);
}

static void driver_arguments_are_applied_or_refused_by_name(void **state)
{
	struct myrio_sim *w = world();
	struct myrio_port *p = NULL;
	myrio_log_set(capture, NULL, MYRIO_LOG_WARN);
	assert_int_equal(open_port(w, "bogus=1", &p), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(logged, "'bogus=1' not understood"));
	assert_non_null(strstr(logged, "firmware, adopt_firmware, watchdog_ms, intr_coal_us"));
	assert_int_equal(open_port(w, "adopt_firmware=2", &p), -EINVAL);
	assert_non_null(strstr(logged, "expected 0 or 1"));
	assert_int_equal(open_port(w, "watchdog_ms=-1", &p), -EINVAL);
	assert_int_equal(open_port(w, "watchdog_ms", &p), -EINVAL);
	/* firmware= is really used: a missing image without adoption fails the open. */
	assert_int_equal(open_port(w, "firmware=/nonexistent/fw.dat,adopt_firmware=0", &p),
			 -ENOENT);
	/* the sim: device is free again after every refusal, and good arguments open it */
	assert_int_equal(open_port(w, "watchdog_ms=250,intr_coal_us=0", &p), 0);
	myrio_port_close(p);
	/* a driver without arguments refuses any */
	assert_int_equal(
	    myrio_port_open(&p, "pair:xs/0", &(struct myrio_port_conf){.driver_args = "ring=8"}),
	    -EINVAL);
	assert_non_null(strstr(logged, "this driver takes none"));
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
	myrio_sim_destroy(w);
}

static void the_parser_checks_every_value(void **state)
{
	uint32_t u = 7;
	bool f = false;
	char str[8];
	str[0] = '\0';
	const struct myrio_driver_arg keys[] = {{.key = "n", .u32 = &u},
						{.key = "on", .flag = &f},
						{.key = "s", .str = str, .str_len = 8},
						{0}};
	myrio_log_set(capture, NULL, MYRIO_LOG_WARN);
	assert_int_equal(myrio_driver_args_parse("t", NULL, keys), 0);
	assert_int_equal(myrio_driver_args_parse("t", "", keys), 0);
	assert_int_equal(myrio_driver_args_parse("t", "n=0x10,on=1,s=abc", keys), 0);
	assert_int_equal(u, 16);
	assert_true(f);
	assert_string_equal(str, "abc");
	assert_int_equal(myrio_driver_args_parse("t", "n=4294967296", keys), -EINVAL);
	assert_int_equal(myrio_driver_args_parse("t", "n=12x", keys), -EINVAL);
	assert_int_equal(myrio_driver_args_parse("t", "n=", keys), -EINVAL);
	assert_int_equal(myrio_driver_args_parse("t", "s=12345678", keys), -EINVAL);
	assert_string_equal(str, "abc"); /* not cut short, not overrun */
	assert_int_equal(myrio_driver_args_parse("t", "nn=1", keys), -EINVAL);
	assert_int_equal(myrio_driver_args_parse("t", "=1", keys), -EINVAL);
	assert_int_equal(myrio_driver_args_parse("t", "n=1,", keys), 0);
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(generic_counters_lead_the_driver_ones),
	    cmocka_unit_test(attributes_carry_what_info_no_longer_does),
	    cmocka_unit_test(driver_arguments_are_applied_or_refused_by_name),
	    cmocka_unit_test(the_parser_checks_every_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
