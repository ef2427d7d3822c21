/* SPDX-License-Identifier: BSD-3-Clause */
/* A transmit pool may outlive its port: the bus, its DMA mapping and the device stay until
 * the last pool is destroyed, and only then is the NIC free for the next driver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "myrio/myrio.h"

/* A stepped world (the model never runs unless stepped) and a port conf that reaches it. */
static struct myrio_sim *stepped_world(struct myrio_port_conf *pc)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	sc.stepped = true;
	struct myrio_sim *sim;
	assert_int_equal(myrio_sim_create(&sim, &sc), 0);
	myrio_port_conf_init(pc);
	pc->sim = sim;
	return sim;
}

static void pool_destroyed_after_close_keeps_the_nic_until_then(void **state)
{
	(void)state;
	struct myrio_port_conf pc;
	struct myrio_sim *sim = stepped_world(&pc);
	struct myrio_port *port, *again;
	assert_int_equal(myrio_port_open(&port, "sim:sim0", &pc), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(port, 64, 2048, &pool), 0);
	myrio_port_close(port);

	/* The pool's memory is still mapped on the NIC, so the NIC is still taken. */
	assert_int_equal(myrio_port_open(&again, "sim:sim0", &pc), -EBUSY);
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	assert_non_null(p);
	memset(myrio_pkt_data(p), 0xab, 60);
	myrio_pkt_free(p);
	myrio_pool_destroy(pool);

	assert_int_equal(myrio_port_open(&again, "sim:sim0", &pc), 0);
	myrio_port_close(again);
	myrio_sim_destroy(sim);
}

static void pool_destroyed_before_close_frees_the_nic_at_close(void **state)
{
	(void)state;
	struct myrio_port_conf pc;
	struct myrio_sim *sim = stepped_world(&pc);
	struct myrio_port *port;
	assert_int_equal(myrio_port_open(&port, "sim:sim1", &pc), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(port, 64, 2048, &pool), 0);
	myrio_pool_destroy(pool);
	myrio_port_close(port);
	assert_int_equal(myrio_port_open(&port, "sim:sim1", &pc), 0);
	myrio_port_close(port);
	myrio_sim_destroy(sim);
}

static void pool_destroyed_with_frames_in_the_ring_is_released_at_close(void **state)
{
	(void)state;
	struct myrio_port_conf pc;
	struct myrio_sim *sim = stepped_world(&pc);
	struct myrio_port *port;
	assert_int_equal(myrio_port_open(&port, "sim:sim0", &pc), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(port, 64, 2048, &pool), 0);
	struct myrio_pkt *p[4];
	assert_int_equal(myrio_pkt_alloc_bulk(pool, p, 4), 4);
	for (int i = 0; i < 4; i++) {
		memset(myrio_pkt_data(p[i]), 0xff, 60);
		p[i]->len = 60;
	}
	/* The stepped model never runs: the frames stay in the send ring. */
	assert_int_equal(myrio_tx_burst(port, p, 4), 4);
	myrio_pool_destroy(pool); /* only marked: the NIC still holds 4 buffers */
	myrio_port_close(port);   /* the driver hands them back; the pool goes, then the bus */
	assert_int_equal(myrio_port_open(&port, "sim:sim0", &pc), 0);
	myrio_port_close(port);
	myrio_sim_destroy(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pool_destroyed_after_close_keeps_the_nic_until_then),
		cmocka_unit_test(pool_destroyed_before_close_frees_the_nic_at_close),
		cmocka_unit_test(pool_destroyed_with_frames_in_the_ring_is_released_at_close),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
