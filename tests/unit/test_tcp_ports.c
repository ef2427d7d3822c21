/* SPDX-License-Identifier: BSD-3-Clause */
/* Ephemeral ports of active opens (RFC 6056 algorithm 4): towards one destination they
 * follow each other; across destinations they give nothing away; they depend on the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

static uint16_t connect_port(struct raw *r, uint32_t ip, uint16_t port)
{
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r->s, ip, port, NULL, &c), 0);
	uint16_t lport;
	myrio_tcp_addr(c, NULL, &lport, NULL, NULL);
	assert_true(lport >= EPH_MIN); /* and below 65536, the top of the range */
	return lport;
}

static void ports_across_destinations_are_not_sequential(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "pt1", NULL, NULL, true), 0);
	/* The issue: one counter for every destination, so a host seeing our port towards
	 * it knew the ports we had just used towards everyone else. */
	unsigned next_of_previous = 0;
	uint16_t prev = connect_port(&r, 0x0a000010u, 80);
	for (uint32_t i = 1; i < 32; i++) {
		uint16_t p = connect_port(&r, 0x0a000010u + i, 80);
		next_of_previous += p == (uint16_t)(prev + 1);
		prev = p;
	}
	assert_true(next_of_previous <= 2);
	raw_close(&r);
}

static void ports_towards_one_destination_follow_each_other(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "pt2", NULL, NULL, true), 0);
	uint16_t first = connect_port(&r, PEER_IP, 80);
	for (unsigned i = 1; i < 20; i++)
		assert_int_equal(connect_port(&r, PEER_IP, 80),
				 EPH_MIN + (first - EPH_MIN + i) % EPH_COUNT);
	raw_close(&r);
}

static void seed2(struct myrio_stack_conf *c)
{
	c->seed = 2;
}

static void ports_depend_on_the_key(void **state)
{
	struct raw a, b;
	assert_int_equal(raw_open(&a, "pt3", NULL, NULL, true), 0);
	assert_int_equal(raw_open(&b, "pt4", NULL, seed2, true), 0);
	unsigned same = 0;
	for (uint32_t i = 0; i < 8; i++)
		same +=
		    connect_port(&a, 0x0a000010u + i, 80) == connect_port(&b, 0x0a000010u + i, 80);
	assert_true(same <= 1);
	raw_close(&a);
	raw_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ports_across_destinations_are_not_sequential),
	    cmocka_unit_test(ports_towards_one_destination_follow_each_other),
	    cmocka_unit_test(ports_depend_on_the_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
