/* SPDX-License-Identifier: BSD-3-Clause */
/* Command errors and timeouts at every step of bring-up (§8.2, §8.3), injected through the
 * device model. For each command the driver sends while opening a port, the model answers
 * that one command with an error (ERROR_RANGE, ERROR_UNKNOWN) or not at all. Expected
 * behaviour: the open either fails with a negative errno, promptly (no hang), leaving
 * nothing behind — no file descriptor, no DMA mapping, the NIC free to be opened again —
 * or, for the few commands the driver may treat as optional, succeeds with a working
 * port that passes a frame. Leaks of memory are caught by the sanitizer build. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "bus/bus.h"
#include "mcp/cmd.h"
#include "mcp/mcp_abi.h"
#include "myrio/port.h"
#include "myrio/sim.h"
#include "port/port_ops.h"
#include "sim/model.h"
#include "sim/nic.h"
#include "util/byteorder.h"
#include "wall_clock.h"

/* The fault is armed from inside the bus's delay_us, which the driver calls while it waits
 * for a response: on a stepped model nothing runs until then, so arming "the next command"
 * once k commands have completed hits exactly command k (counting from 0). */
struct injector {
	const struct myrio_bus_ops *orig;
	struct myrio_bus_ops ops;
	struct sim_nic *nic;
	uint64_t at;          /* command index to hit */
	enum sim_fault fault;
	uint32_t arg;
	bool armed;
	uint32_t opcode; /* the command that got the fault */
};
static struct injector inj;

static void inj_delay_us(struct myrio_bus *bus, unsigned us)
{
	struct sim_nic_stats st;
	sim_nic_get_stats(inj.nic, &st);
	if (st.cmds == inj.at) {
		if (!inj.armed)
			sim_nic_inject(inj.nic, inj.fault, inj.arg);
		inj.armed = true;
		/* the block holds the command being waited for (the one that gets the fault) */
		inj.opcode = be32(*(volatile uint32_t *)(bus->bar0 + MCP_CMD_OFFSET));
	}
	inj.orig->delay_us(bus, us);
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Opens sim0 on a fresh stepped world; with fault armed at command `at` when at >= 0.
 * Returns the open's result; *cmds gets the commands the model answered. */
static int open_with_fault(long at, enum sim_fault fault, uint32_t arg, uint64_t *cmds,
			   bool *works)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	sc.stepped = true;
	struct myrio_sim *w;
	assert_int_equal(myrio_sim_create(&w, &sc), 0);
	struct myrio_bus *bus;
	assert_int_equal(myrio_sim_bus_open(w, "sim0", &bus), 0);
	memset(&inj, 0, sizeof(inj));
	inj.nic = sim_nic_find(w, "sim0");
	inj.orig = bus->ops;
	inj.ops = *bus->ops;
	inj.ops.delay_us = inj_delay_us;
	inj.at = at < 0 ? UINT64_MAX : (uint64_t)at;
	inj.fault = fault;
	inj.arg = arg;
	if (at >= 0)
		bus->ops = &inj.ops;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	struct myrio_port *port = NULL;
	double t0 = wall_s();
	int rc = myrio_myri10ge_open(bus, &pc, &port);
	double took = wall_s() - t0;
	assert_true(took < 60.0); /* no hang (generous: valgrind on a loaded machine) */
	struct sim_nic_stats st;
	sim_nic_get_stats(inj.nic, &st);
	*cmds = st.cmds;
	*works = false;
	if (rc == 0) {
		/* the port must really work: link comes up and a frame goes out */
		for (int i = 0; i < 100 && myrio_port_link(port) != MYRIO_LINK_UP; i++) {
			myrio_sim_step(w, 100);
			struct myrio_pkt *pk[8];
			uint16_t n = myrio_rx_burst(port, pk, 8);
			myrio_pkt_free_bulk(pk, n);
		}
		struct myrio_pool *pool;
		assert_int_equal(myrio_port_pool_create(port, 8, 2048, &pool), 0);
		struct myrio_pkt *p = myrio_pkt_alloc(pool);
		memset(myrio_pkt_data(p), 0xff, 60);
		p->len = 60;
		uint64_t before = st.tx_frames;
		assert_int_equal(myrio_tx_burst(port, &p, 1), 1);
		for (int i = 0; i < 100; i++) {
			myrio_sim_step(w, 10);
			myrio_tx_burst(port, NULL, 0);
		}
		sim_nic_get_stats(inj.nic, &st);
		*works = myrio_port_link(port) == MYRIO_LINK_UP && st.tx_frames == before + 1;
		assert_int_equal(myrio_pool_free_count(pool), 8); /* the NIC gave it back */
		myrio_pool_destroy(pool); /* before the port: it unmaps from the port's bus */
		myrio_port_close(port);
	} else {
		assert_true(rc < 0);
		assert_null(port);
		/* the bus was closed: the NIC can be attached again */
		assert_int_equal(sim_nic_attach(inj.nic), 0);
		sim_nic_detach(inj.nic);
	}
	myrio_sim_destroy(w);
	return rc;
}

static void every_command_fails_cleanly(void **state)
{
	(void)state;
	int fds0 = count_fds();
	uint64_t total;
	bool works;
	assert_int_equal(open_with_fault(-1, SIM_FAULT_CMD_ERROR, 0, &total, &works), 0);
	assert_true(works);
	assert_true(total >= 15); /* reset sequence and open send at least this many */
	printf("  an open sends %lu commands; each gets each fault in turn\n", (unsigned long)total);
	assert_int_equal(count_fds(), fds0);
	static const struct {
		enum sim_fault fault;
		uint32_t arg;
		const char *name;
	} faults[] = {
		{SIM_FAULT_CMD_ERROR, MCP_ERR_RANGE, "ERROR_RANGE"},
		{SIM_FAULT_CMD_ERROR, MCP_ERR_UNKNOWN, "ERROR_UNKNOWN"},
		{SIM_FAULT_CMD_TIMEOUT, 0, "timeout"},
	};
	unsigned tolerated = 0;
	for (size_t f = 0; f < sizeof(faults) / sizeof(faults[0]); f++) {
		for (uint64_t k = 0; k < total; k++) {
			uint64_t cmds;
			int rc = open_with_fault((long)k, faults[f].fault, faults[f].arg, &cmds, &works);
			if (rc == 0) {
				/* tolerated: only if the port really works */
				if (!works)
					fail_msg("command %lu answered with %s: open succeeded but "
						 "the port does not work",
						 (unsigned long)k, faults[f].name);
				tolerated++;
				printf("  command #%lu (%s): %s tolerated\n", (unsigned long)k,
				       mcp_cmd_name(inj.opcode), faults[f].name);
			} else {
				/* the driver stopped at the failing command */
				assert_int_equal(cmds, k + 1);
			}
			/* a timeout is fatal even for optional commands */
			if (faults[f].fault == SIM_FAULT_CMD_TIMEOUT)
				assert_true(rc < 0);
			assert_int_equal(count_fds(), fds0);
		}
	}
	/* most commands are mandatory */
	assert_true(tolerated < total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_command_fails_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
