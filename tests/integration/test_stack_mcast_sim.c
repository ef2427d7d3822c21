/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast through the device model's filter: two receivers on two NICs join a group and
 * get its datagrams, one leaves and its NIC drops them (counted by the firmware, nothing
 * reaches the host); a receiver joining more groups than the filter holds falls back to
 * ALLMULTI and still gets exactly its groups, then filters again once they fit. Four NICs
 * of a stepped model: sim0 (sender A) - sim1 (receiver B), sim2 (sender C) - sim3
 * (receiver D). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_clock.h"
#include "myrio/sim.h"
#include "myrio/tcp_lite.h"
#include "sim/model.h" /* a firmware reboot injected */

#define GROUP(k) (0xef010000u + (k)) /* 239.1.0.k */
#define PORT 5000
#define FILTER_SLOTS 16 /* the filter the overflow test gives the model's NIC */
/* Rounds of 4 us: the firmware's counters reach the host with its next statistics update,
 * one every millisecond (the model's default STATS_INTERVAL). */
#define STATS_ROUNDS 300

struct world {
	struct myrio_sim *sim;
	struct myrio_port *port[4];
	struct myrio_stack *st[4];
	uint64_t now_ns;
};

static const uint32_t ips[4] = {0x0a000001u, 0x0a000002u, 0x0a000101u, 0x0a000102u};

static void w_open(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->now_ns = 1000000000ull;
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	assert_int_equal(myrio_sim_conf_parse(&sc, "stepped,nics=4"), 0);
	assert_int_equal(myrio_sim_create(&w->sim, &sc), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w->sim;
	pc.watchdog_ms = 10; /* a rebooted NIC is noticed within 10 ms of model time */
	for (int i = 0; i < 4; i++) {
		char dev[16];
		snprintf(dev, sizeof(dev), "sim:sim%d", i);
		assert_int_equal(myrio_port_open(&w->port[i], dev, &pc), 0);
		struct myrio_stack_conf conf;
		myrio_stack_conf_init(&conf);
		conf.ip = ips[i];
		conf.netmask = 0xffffff00u;
		conf.clock = fake_clock_read;
		conf.clock_arg = &w->now_ns;
		conf.seed = 7 + (uint64_t)i;
		assert_int_equal(myrio_stack_create(&w->st[i], w->port[i], &conf), 0);
	}
}

static void w_rounds(struct world *w, unsigned n)
{
	while (n--) {
		for (int i = 0; i < 4; i++)
			if (w->st[i])
				myrio_stack_poll(w->st[i]);
		myrio_sim_step(w->sim, 4);
		w->now_ns += 4000;
	}
}

static void w_close(struct world *w)
{
	w_rounds(w, 8);
	for (int i = 0; i < 4; i++)
		myrio_stack_destroy(w->st[i]);
	for (int i = 0; i < 4; i++)
		myrio_port_close(w->port[i]);
	myrio_sim_destroy(w->sim);
}

static uint64_t xstat(struct world *w, int i, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(myrio_port_xstat(w->port[i], name, &v), 0);
	return v;
}

/* Datagrams waiting on u, each checked to carry text; returns how many. */
static unsigned drain(struct myrio_udp_sock *u, const char *text)
{
	unsigned n = 0;
	struct myrio_pkt *p;
	while ((p = myrio_udp_recv(u, NULL, NULL)) != NULL) {
		assert_int_equal(p->len, strlen(text));
		assert_memory_equal(myrio_pkt_data(p), text, p->len);
		myrio_pkt_free(p);
		n++;
	}
	return n;
}

static void send_n(struct world *w, struct myrio_udp_sock *u, uint32_t group, const char *text,
		   unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(myrio_udp_sendto_copy(u, text, strlen(text), group, PORT), 0);
	w_rounds(w, STATS_ROUNDS);
}

static void two_receivers_then_one_leaves(void **state)
{
	struct world w;
	w_open(&w);
	struct myrio_udp_sock *a, *c, *b, *d;
	assert_int_equal(myrio_udp_open(w.st[0], 0, NULL, &a), 0);
	assert_int_equal(myrio_udp_open(w.st[2], 0, NULL, &c), 0);
	assert_int_equal(myrio_udp_open(w.st[1], PORT, NULL, &b), 0);
	assert_int_equal(myrio_udp_open(w.st[3], PORT, NULL, &d), 0);
	/* nothing joined yet: the filter, set up at open, drops every group */
	uint64_t filtered = xstat(&w, 1, "dropped_multicast_filtered");
	send_n(&w, a, GROUP(1), "before the join", 10);
	assert_int_equal(xstat(&w, 1, "dropped_multicast_filtered"), filtered + 10);
	assert_int_equal(xstat(&w, 1, "rx_packets"), 0);

	assert_int_equal(myrio_udp_join(b, GROUP(1)), 0);
	assert_int_equal(myrio_udp_join(d, GROUP(1)), 0);
	w_rounds(&w, 100);
	assert_int_equal(xstat(&w, 1, "mc_groups"), 2); /* the group and all-hosts */
	assert_int_equal(xstat(&w, 1, "mc_filter_overflow"), 0);

	send_n(&w, a, GROUP(1), "from A", 20);
	send_n(&w, c, GROUP(1), "from C", 20);
	assert_int_equal(drain(b, "from A"), 20);
	assert_int_equal(drain(d, "from C"), 20);

	/* D leaves: its NIC drops the group's frames, its stack sees none of them */
	assert_int_equal(myrio_udp_leave(d, GROUP(1)), 0);
	w_rounds(&w, 100);
	assert_int_equal(xstat(&w, 3, "mc_groups"), 0);
	filtered = xstat(&w, 3, "dropped_multicast_filtered");
	uint64_t rx = xstat(&w, 3, "rx_packets");
	send_n(&w, c, GROUP(1), "after D left", 30);
	send_n(&w, a, GROUP(1), "B still in", 5);
	assert_int_equal(drain(d, "none"), 0);
	assert_int_equal(xstat(&w, 3, "dropped_multicast_filtered"), filtered + 30);
	assert_int_equal(xstat(&w, 3, "rx_packets"), rx);
	assert_int_equal(drain(b, "B still in"), 5);

	myrio_udp_close(a);
	myrio_udp_close(b);
	myrio_udp_close(c);
	myrio_udp_close(d);
	w_close(&w);
}

static void more_groups_than_the_filter_holds(void **state)
{
	struct world w;
	w_open(&w);
	sim_nic_set_mcast_capacity(sim_nic_find(w.sim, "sim1"), FILTER_SLOTS);
	struct myrio_udp_sock *a, *b;
	assert_int_equal(myrio_udp_open(w.st[0], 0, NULL, &a), 0);
	assert_int_equal(myrio_udp_open(w.st[1], PORT, NULL, &b), 0);
	const unsigned many = FILTER_SLOTS + 2; /* with all-hosts, 3 beyond the filter */
	for (unsigned k = 1; k <= many; k++)
		assert_int_equal(myrio_udp_join(b, GROUP(k)), 0);
	w_rounds(&w, 100);
	assert_int_equal(xstat(&w, 1, "mc_groups"), many + 1);
	assert_int_equal(xstat(&w, 1, "mc_filter_overflow"), 1);

	/* every group joined arrives; one not joined passes the NIC but not the stack */
	for (unsigned k = 1; k <= many; k++)
		send_n(&w, a, GROUP(k), "joined", 2);
	assert_int_equal(drain(b, "joined"), 2 * many);
	struct myrio_stack_stats st;
	myrio_stack_stats(w.st[1], &st);
	uint64_t not_ours = st.drop_ip_not_for_us;
	uint64_t filtered = xstat(&w, 1, "dropped_multicast_filtered");
	send_n(&w, a, GROUP(200), "not joined", 3);
	assert_int_equal(drain(b, "none"), 0);
	myrio_stack_stats(w.st[1], &st);
	assert_int_equal(st.drop_ip_not_for_us, not_ours + 3);
	assert_int_equal(xstat(&w, 1, "dropped_multicast_filtered"), filtered);

	/* down to 15 groups (16 addresses with all-hosts): filtering again */
	for (unsigned k = FILTER_SLOTS; k <= many; k++)
		assert_int_equal(myrio_udp_leave(b, GROUP(k)), 0);
	w_rounds(&w, 100);
	assert_int_equal(xstat(&w, 1, "mc_groups"), FILTER_SLOTS);
	assert_int_equal(xstat(&w, 1, "mc_filter_overflow"), 0);
	filtered = xstat(&w, 1, "dropped_multicast_filtered");
	send_n(&w, a, GROUP(200), "not joined", 3);
	send_n(&w, a, GROUP(many), "left", 4);
	assert_int_equal(drain(b, "none"), 0);
	assert_int_equal(xstat(&w, 1, "dropped_multicast_filtered"), filtered + 7);
	for (unsigned k = 1; k < FILTER_SLOTS; k++)
		send_n(&w, a, GROUP(k), "still joined", 1);
	assert_int_equal(drain(b, "still joined"), FILTER_SLOTS - 1);

	myrio_udp_close(a);
	myrio_udp_close(b);
	w_close(&w);
}

/* The firmware reboots: the watchdog's recovery writes the groups into the new firmware's
 * filter, which starts with ALLMULTI on after its RESET. */
static void groups_survive_a_nic_reboot(void **state)
{
	struct world w;
	w_open(&w);
	struct myrio_udp_sock *a, *b;
	assert_int_equal(myrio_udp_open(w.st[0], 0, NULL, &a), 0);
	assert_int_equal(myrio_udp_open(w.st[1], PORT, NULL, &b), 0);
	assert_int_equal(myrio_udp_join(b, GROUP(1)), 0);
	w_rounds(&w, 100);
	assert_int_equal(sim_nic_inject(sim_nic_find(w.sim, "sim1"), SIM_FAULT_REBOOT, 0), 0);
	for (int i = 0; i < 20000 && xstat(&w, 1, "watchdog_resets") == 0; i++)
		w_rounds(&w, 10);
	assert_int_equal(xstat(&w, 1, "watchdog_resets"), 1);
	w_rounds(&w, 2000); /* the link comes back */
	assert_int_equal(xstat(&w, 1, "mc_groups"), 2);
	assert_int_equal(xstat(&w, 1, "mc_filter_overflow"), 0);
	uint64_t filtered = xstat(&w, 1, "dropped_multicast_filtered");
	send_n(&w, a, GROUP(2), "not joined", 5);
	assert_int_equal(xstat(&w, 1, "dropped_multicast_filtered"), filtered + 5);
	send_n(&w, a, GROUP(1), "joined", 5);
	assert_int_equal(drain(b, "joined"), 5);
	/* a stack that goes with its groups joined leaves the port's filter empty */
	myrio_stack_destroy(w.st[1]);
	w.st[1] = NULL;
	assert_int_equal(xstat(&w, 1, "mc_groups"), 0);
	myrio_udp_close(a);
	w_close(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(two_receivers_then_one_leaves),
	    cmocka_unit_test(more_groups_than_the_filter_holds),
	    cmocka_unit_test(groups_survive_a_nic_reboot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
