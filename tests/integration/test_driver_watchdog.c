/* The watchdog (§8.5) on raw frames: after a firmware self-reboot (§2.5, injected through the
 * model) the port notices the cleared bus-master bit by itself, while the application just
 * keeps polling, reloads and reopens the NIC on the same pools and moves frames again. The
 * buffers posted to the dead NIC and the frames pending in its send ring go back to their
 * pools exactly once; receive buffers the application held across the reboot stay valid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "driver_env.h"
#include "sim/model.h"
#include "sim/nic.h" /* sim_world_now: model time */

#define STEPS 100 /* model iterations per poll while waiting */
#define HELD 6	  /* receive buffers the application keeps across the reboot */

static uint32_t len_300(uint32_t i)
{
	return 60 + (i * 37) % 1400;
}

static uint64_t resets(struct myrio_port *p)
{
	struct myrio_port_stats s;
	assert_int_equal(myrio_port_stats(p, &s), 0);
	return s.watchdog_resets;
}

/* Polls both ports (receiving and freeing whatever arrives) for up to ns of model time or
 * until done(); returns the model time spent. */
static uint64_t poll_for(struct env *e, uint64_t ns, bool (*done)(struct env *))
{
	uint64_t t0 = sim_world_now(e->sim);
	struct myrio_pkt *in[32];
	while (sim_world_now(e->sim) - t0 < ns && !(done && done(e))) {
		myrio_sim_step(e->sim, STEPS);
		myrio_tx_burst(e->a, in, 0);
		myrio_pkt_free_bulk(in, myrio_rx_burst(e->a, in, 32));
		myrio_tx_burst(e->b, in, 0);
		myrio_pkt_free_bulk(in, myrio_rx_burst(e->b, in, 32));
	}
	return sim_world_now(e->sim) - t0;
}

static bool a_recovered(struct env *e)
{
	return resets(e->a) >= 1;
}

static bool a_link_up(struct env *e)
{
	return myrio_port_link(e->a) == MYRIO_LINK_UP;
}

static void up_env(struct env *e)
{
	assert_int_equal(env_world(e, "nics=2,link=10g,stepped"), 0);
	assert_int_equal(env_open(e, 1500), 0);
	assert_int_equal(env_link(e, e->a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(env_link(e, e->b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(env_transfer(e, 0, 500, len_300), 500);
	assert_int_equal(env_transfer(e, 1, 500, len_300), 500);
}

/* Receives HELD frames b -> a and keeps them. */
static void hold_rx(struct env *e, struct myrio_pkt **held)
{
	struct myrio_pkt *out[HELD];
	for (int i = 0; i < HELD; i++) {
		out[i] = myrio_pkt_alloc(e->pool_b);
		assert_non_null(out[i]);
		env_fill(myrio_pkt_data(out[i]), 100, 1000 + i, e->ia.mac, e->ib.mac);
		out[i]->len = 100;
	}
	assert_int_equal(myrio_tx_burst(e->b, out, HELD), HELD);
	unsigned got = 0;
	for (int i = 0; i < 100000 && got < HELD; i++) {
		env_pump(e);
		got += myrio_rx_burst(e->a, held + got, (uint16_t)(HELD - got));
	}
	assert_int_equal(got, HELD);
}

/* Queues frames on a that the rebooted NIC will never send. */
static void queue_tx(struct env *e, unsigned n)
{
	struct myrio_pkt *out[64];
	assert_true(n <= 64);
	for (unsigned i = 0; i < n; i++) {
		out[i] = myrio_pkt_alloc(e->pool_a);
		assert_non_null(out[i]);
		env_fill(myrio_pkt_data(out[i]), 1000, 5000 + i, e->ib.mac, e->ia.mac);
		out[i]->len = 1000;
	}
	assert_int_equal(myrio_tx_burst(e->a, out, (uint16_t)n), n);
}

static void reboot_recovers_by_itself(void **state)
{
	(void)state;
	struct env e;
	up_env(&e);

	/* An idle port is checked but left alone. */
	poll_for(&e, 2500000000ull, NULL);
	assert_int_equal(resets(e.a), 0);
	assert_int_equal(resets(e.b), 0);

	struct myrio_pkt *held[HELD];
	hold_rx(&e, held);
	struct myrio_port_stats before;
	myrio_port_stats(e.a, &before);

	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	queue_tx(&e, 40);
	assert_true(myrio_pool_free_count(e.pool_a) < e.pool_a->count);

	/* Nothing but polling: the port recovers within two periods of model time. */
	uint64_t took = poll_for(&e, 5000000000ull, a_recovered);
	assert_int_equal(resets(e.a), 1);
	assert_true(took <= 2100000000ull);
	assert_int_equal(resets(e.b), 0);
	/* the 40 frames pending on the dead NIC went back to their pool, once */
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);

	/* The held buffers are intact and go back to the same pool afterwards. */
	for (int i = 0; i < HELD; i++)
		assert_true(env_check(held[i], 100, 1000 + i, e.ia.mac, e.ib.mac));
	myrio_pkt_free_bulk(held, HELD);

	poll_for(&e, 3000000000ull, a_link_up);
	assert_int_equal(myrio_port_link(e.a), MYRIO_LINK_UP);
	poll_for(&e, 10000000ull, NULL); /* anything still in flight */
	assert_int_equal(env_transfer(&e, 0, 2000, len_300), 2000);
	assert_int_equal(env_transfer(&e, 1, 2000, len_300), 2000);

	/* The driver's counters carry over the recovery. */
	struct myrio_port_stats after;
	myrio_port_stats(e.a, &after);
	assert_true(after.tx_packets >= before.tx_packets + 2000);
	assert_true(after.rx_packets >= before.rx_packets + 2000);
	assert_int_equal(after.watchdog_resets, 1);
	env_destroy(&e);
}

/* The first recovery attempt fails (the NIC stops answering commands, as after another
 * reboot): the port reports link down and takes no frames, then the next check retries. */
static void failed_recovery_leaves_port_down_and_retries(void **state)
{
	(void)state;
	struct env e;
	up_env(&e);
	struct sim_nic *nic = sim_nic_find(e.sim, "sim0");
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REBOOT, 0), 0);
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_CMD_TIMEOUT, 0), 0);
	queue_tx(&e, 10);

	/* Wait for the failed attempt: the port is down and refuses frames. */
	struct myrio_port_stats s;
	uint64_t t0 = sim_world_now(e.sim);
	for (;;) {
		poll_for(&e, 50000000ull, NULL);
		myrio_port_stats(e.a, &s);
		if (s.link_up == 0 || sim_world_now(e.sim) - t0 > 5000000000ull)
			break;
	}
	assert_int_equal(s.link_up, 0);
	assert_int_equal(s.watchdog_resets, 0);
	assert_int_equal(myrio_port_link(e.a), MYRIO_LINK_DOWN);
	struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a);
	assert_non_null(p);
	p->len = 60;
	assert_int_equal(myrio_tx_burst(e.a, &p, 1), 0);
	myrio_pkt_free(p);
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);

	/* Another reboot while down changes nothing: the retry reloads from scratch. */
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REBOOT, 0), 0);
	uint64_t took = poll_for(&e, 5000000000ull, a_recovered);
	assert_int_equal(resets(e.a), 1);
	assert_true(took <= 1100000000ull);
	poll_for(&e, 3000000000ull, a_link_up);
	assert_int_equal(myrio_port_link(e.a), MYRIO_LINK_UP);
	poll_for(&e, 10000000ull, NULL);
	assert_int_equal(env_transfer(&e, 0, 1000, len_300), 1000);
	assert_int_equal(env_transfer(&e, 1, 1000, len_300), 1000);
	env_destroy(&e);
}

/* Opens sim0 alone with the given watchdog period, reboots it and polls for 3 s of model
 * time; returns the model time the recovery took, or UINT64_MAX if there was none. */
static uint64_t recovery_time(uint32_t watchdog_ms)
{
	struct env e;
	assert_int_equal(env_world(&e, "nics=2,link=10g,stepped"), 0);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	conf.watchdog_ms = watchdog_ms;
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &conf), 0);
	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	uint64_t t0 = sim_world_now(e.sim), took = UINT64_MAX;
	struct myrio_pkt *in[8];
	while (sim_world_now(e.sim) - t0 < 3000000000ull) {
		myrio_sim_step(e.sim, STEPS);
		myrio_rx_burst(e.a, in, 8); /* nothing can arrive: the port is alone */
		if (resets(e.a)) {
			took = sim_world_now(e.sim) - t0;
			break;
		}
	}
	myrio_port_close(e.a);
	e.a = NULL;
	env_destroy(&e);
	return took;
}

static void period_is_configurable(void **state)
{
	(void)state;
	uint64_t fast = recovery_time(200);
	assert_true(fast <= 450000000ull); /* two periods and the recovery itself */
	assert_true(recovery_time(0) > 450000000ull); /* the default: 1 s */
	assert_int_equal(recovery_time(UINT32_MAX), UINT64_MAX); /* off */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reboot_recovers_by_itself),
		cmocka_unit_test(failed_recovery_leaves_port_down_and_retries),
		cmocka_unit_test(period_is_configurable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
