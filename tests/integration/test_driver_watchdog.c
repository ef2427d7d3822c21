/* SPDX-License-Identifier: BSD-3-Clause */
/* The watchdog (§8.5) on raw frames: after a firmware self-reboot (§2.5, injected through the
 * model) the port notices the cleared bus-master bit by itself, while the application just
 * keeps polling, reloads and reopens the NIC on the same pools and moves frames again. The
 * buffers posted to the dead NIC and the frames pending in its send ring go back to their
 * pools exactly once; receive buffers the application held across the reboot stay valid. */
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_env.h"
#include "sim/fw_image.h" /* sim_fw_image_build */
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

/* After a recovery: the link comes back, then n frames each way arrive byte-exact. */
static void frames_flow_again(struct env *e, uint32_t n)
{
	poll_for(e, 3000000000ull, a_link_up);
	assert_int_equal(myrio_port_link(e->a), MYRIO_LINK_UP);
	poll_for(e, 10000000ull, NULL); /* anything still in flight */
	assert_int_equal(env_transfer(e, 0, n, len_300), n);
	assert_int_equal(env_transfer(e, 1, n, len_300), n);
}

/* A port that is down takes no frame. */
static void assert_tx_refused(struct env *e)
{
	struct myrio_pkt *p = myrio_pkt_alloc(e->pool_a);
	assert_non_null(p);
	p->len = 60;
	assert_int_equal(myrio_tx_burst(e->a, &p, 1), 0);
	myrio_pkt_free(p);
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

/* Receives n frames b -> a and keeps them. */
static void hold_rx_n(struct env *e, struct myrio_pkt **held, unsigned n)
{
	struct myrio_pkt *out[64];
	assert_true(n <= 64);
	for (unsigned i = 0; i < n; i++) {
		out[i] = myrio_pkt_alloc(e->pool_b);
		assert_non_null(out[i]);
		env_fill(myrio_pkt_data(out[i]), 100, 1000 + i, e->ia.mac, e->ib.mac);
		out[i]->len = 100;
	}
	assert_int_equal(myrio_tx_burst(e->b, out, (uint16_t)n), n);
	unsigned got = 0;
	for (int i = 0; i < 100000 && got < n; i++) {
		env_pump(e);
		got += myrio_rx_burst(e->a, held + got, (uint16_t)(n - got));
	}
	assert_int_equal(got, n);
}

static void hold_rx(struct env *e, struct myrio_pkt **held)
{
	hold_rx_n(e, held, HELD);
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

	frames_flow_again(&e, 2000);

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
	assert_tx_refused(&e);
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);

	/* Another reboot while down changes nothing: the retry reloads from scratch. */
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REBOOT, 0), 0);
	uint64_t took = poll_for(&e, 5000000000ull, a_recovered);
	assert_int_equal(resets(e.a), 1);
	assert_true(took <= 1100000000ull);
	frames_flow_again(&e, 1000);
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

/* A port that loaded an image at open loads it again after the reboot (the NIC runs its
 * EEPROM firmware then), keeping the 4 KiB send descriptors of the aligned flavour. */
static void loaded_image_is_reloaded(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "nics=2,link=10g,stepped"), 0);
	static uint8_t img[1 << 20];
	size_t len;
	assert_int_equal(sim_fw_image_build(img, sizeof(img), "eth@1.4.61", &len), 0);
	char path[64];
	strcpy(path, "/tmp/myrio_eth_z8e-XXXXXX"); /* the name tells the flavour (§2.1) */
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, img, len), (ssize_t)len);
	close(fd);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &conf), 0);
	char eeprom_fw[128]; /* adopted: the EEPROM firmware */
	snprintf(eeprom_fw, sizeof(eeprom_fw), "%s", env_attr(e.a, "fw_version"));
	myrio_port_close(e.a);
	conf.firmware = path;
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &conf), 0);
	conf.firmware = NULL;
	assert_int_equal(myrio_port_open(&e.b, "sim:sim1", &conf), 0);
	struct myrio_port_info in;
	myrio_port_info(e.a, &in);
	char loaded_fw[128];
	snprintf(loaded_fw, sizeof(loaded_fw), "%s", env_attr(e.a, "fw_version"));
	assert_string_not_equal(loaded_fw, eeprom_fw);
	assert_int_equal(in.tx_boundary, 4096);
	myrio_port_info(e.b, &e.ib);
	e.ia = in;
	uint32_t buf = MYRIO_PKT_HEADROOM + 1518;
	assert_int_equal(myrio_port_pool_create(e.a, 2048, buf, &e.pool_a), 0);
	assert_int_equal(myrio_port_pool_create(e.b, 2048, buf, &e.pool_b), 0);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);

	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	poll_for(&e, 5000000000ull, a_recovered);
	unlink(path);
	assert_int_equal(resets(e.a), 1);
	myrio_port_info(e.a, &in);
	assert_string_equal(env_attr(e.a, "fw_version"), loaded_fw);
	assert_int_equal(in.tx_boundary, 4096);
	frames_flow_again(&e, 1000);
	env_destroy(&e);
}

/* The application holds more receive buffers than the pool has beyond the ring: the ring
 * restarts partly filled, and fills up again as the buffers come back. */
static void held_buffers_beyond_spare_partial_rings(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "nics=2,link=10g,stepped"), 0);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	conf.rx_pool_size = 8; /* 8 buffers per pool beyond the ring */
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &conf), 0);
	assert_int_equal(myrio_port_open(&e.b, "sim:sim1", &conf), 0);
	myrio_port_info(e.a, &e.ia);
	myrio_port_info(e.b, &e.ib);
	uint32_t buf = MYRIO_PKT_HEADROOM + 1518;
	assert_int_equal(myrio_port_pool_create(e.a, 2048, buf, &e.pool_a), 0);
	assert_int_equal(myrio_port_pool_create(e.b, 2048, buf, &e.pool_b), 0);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	struct myrio_pkt *held[40];
	hold_rx_n(&e, held, 40);

	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	poll_for(&e, 5000000000ull, a_recovered);
	assert_int_equal(resets(e.a), 1);
	for (int i = 0; i < 40; i++)
		assert_true(env_check(held[i], 100, 1000 + i, e.ia.mac, e.ib.mac));
	myrio_pkt_free_bulk(held, 40);
	poll_for(&e, 3000000000ull, a_link_up);
	poll_for(&e, 10000000ull, NULL);
	assert_int_equal(env_transfer(&e, 1, 3000, len_300), 3000);
	assert_int_equal(env_transfer(&e, 0, 1000, len_300), 1000);
	env_destroy(&e);
}

/* The fault hangs the sender's NIC with 40 frames pending: the port resets it by itself
 * within `within` ns of model time, the stuck frames go back to their pool, and frames
 * flow both ways afterwards. */
static void hangs_then_is_reset(enum sim_fault fault, uint64_t within)
{
	struct env e;
	up_env(&e);
	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), fault, 0), 0);
	queue_tx(&e, 40);
	uint64_t took = poll_for(&e, 10000000000ull, a_recovered);
	assert_int_equal(resets(e.a), 1);
	assert_true(took <= within);
	assert_int_equal(resets(e.b), 0);
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);
	frames_flow_again(&e, 2000);
	assert_int_equal(resets(e.a), 1);
	env_destroy(&e);
}

/* The send engine hangs while the NIC still answers (bus master on, commands work): a
 * period without progress and without pause frames, and the port resets the NIC itself,
 * as the Linux driver does (§8.5); the frames stuck in the ring go back to their pool. */
static void stuck_send_ring_is_reset(void **state)
{
	(void)state;
	hangs_then_is_reset(SIM_FAULT_TX_HANG, 2100000000ull);
}

/* The whole firmware hangs (it answers no command, sends nothing, bus master on): the
 * stuck send ring is noticed as above, ETHERNET_DOWN goes unanswered (1 s), and the port
 * resets the function (FLR) before it adopts the firmware again, as a port of several
 * queues does; without the FLR every later command times out and the port stays down. */
static void hung_firmware_is_reset(void **state)
{
	(void)state;
	hangs_then_is_reset(SIM_FAULT_FW_HANG, 3100000000ull); /* + the 1 s unanswered */
}

static bool a_link_down(struct env *e)
{
	return myrio_port_link(e->a) == MYRIO_LINK_DOWN;
}

/* The NIC leaves the bus (config space reads all ones): the port goes down and takes no
 * frames, without trying to reload a NIC that is not there; when the NIC answers again
 * (as at power-on), the watchdog brings it back. */
static void nic_gone_then_back(void **state)
{
	(void)state;
	struct env e;
	up_env(&e);
	struct sim_nic *nic = sim_nic_find(e.sim, "sim0");
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REMOVED, 1), 0);
	queue_tx(&e, 10);
	uint64_t took = poll_for(&e, 5000000000ull, a_link_down);
	assert_true(took <= 2100000000ull);
	assert_int_equal(myrio_port_link(e.a), MYRIO_LINK_DOWN);
	assert_tx_refused(&e);
	poll_for(&e, 3000000000ull, NULL); /* still gone: no recovery attempts */
	struct myrio_port_stats s;
	myrio_port_stats(e.a, &s);
	assert_int_equal(s.watchdog_resets, 0);
	assert_int_equal(s.link_up, 0);

	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REMOVED, 0), 0);
	took = poll_for(&e, 5000000000ull, a_recovered);
	assert_int_equal(resets(e.a), 1);
	assert_true(took <= 1100000000ull);
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);
	frames_flow_again(&e, 1000);
	env_destroy(&e);
}

/* A program asleep on the interrupt fd with a timeout of one watchdog period: a rebooted
 * NIC raises no interrupt, but myrio_port_irq_arm gives the watchdog its look, so the port
 * recovers after a few wake-ups, with far fewer bursts than the countdown needs. */
static void sleeper_notices_reboot(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "nics=2,link=10g"), 0); /* threaded: real time */
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	conf.watchdog_ms = 50;
	conf.irq = true;
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &conf), 0);
	int fd = myrio_port_irq_fd(e.a);
	assert_true(fd >= 0);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	unsigned wakeups = 0;
	struct myrio_pkt *in[8];
	while (resets(e.a) == 0 && wakeups < 100) {
		myrio_port_irq_arm(e.a);
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 50) == 1) {
			uint64_t v;
			(void)!read(fd, &v, sizeof(v));
		}
		wakeups++;
		myrio_pkt_free_bulk(in, myrio_rx_burst(e.a, in, 8));
	}
	assert_int_equal(resets(e.a), 1);
	assert_true(wakeups <= 10);
	myrio_port_close(e.a);
	e.a = NULL;
	env_destroy(&e);
}

/* b stops receiving: its ring fills and, with flow control on, b's NIC holds a's
 * transmitter with pause frames (§7.4). A send ring held that way for more than a period
 * is explained by dropped_pause and is not reset; once b reads again, frames flow. */
static void pause_held_ring_is_not_reset(void **state)
{
	(void)state;
	struct env e;
	up_env(&e);
	struct myrio_port_info info;
	myrio_port_info(e.b, &info);
	unsigned queued = 0;
	uint64_t t0 = sim_world_now(e.sim);
	struct myrio_pkt *none[1];
	while (sim_world_now(e.sim) - t0 < 1500000000ull) { /* 1.5 periods, only a polled */
		if (queued < 2 * info.rx_ring_entries + 64) {
			queue_tx(&e, 32);
			queued += 32;
		}
		myrio_sim_step(e.sim, STEPS);
		myrio_tx_burst(e.a, none, 0);
	}
	struct myrio_port_stats s;
	myrio_port_stats(e.a, &s);
	assert_true(env_xstat(e.a, "dropped_pause") > 1); /* renewed while held */
	assert_int_equal(s.watchdog_resets, 0);
	assert_true(myrio_pool_free_count(e.pool_a) < e.pool_a->count); /* still held */
	poll_for(&e, 100000000ull, NULL); /* b reads again: the ring drains */
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);
	assert_int_equal(resets(e.a), 0);
	frames_flow_again(&e, 1000);
	env_destroy(&e);
}

/* Frames posted just before the watchdog's look, which the NIC has not had the time to
 * reach (a loaded host: the model, or the bus, slow to run), are not a stuck ring: only
 * frames pending at the last look too, with none sent since, are (as Linux's check). */
static void frames_posted_just_before_a_look_are_not_stuck(void **state)
{
	(void)state;
	struct env e;
	up_env(&e);
	struct myrio_pkt *none[1];
	/* A look at the idle ring, then the next one. */
	for (int look = 0; look < 2; look++) {
		myrio_sim_step(e.sim, 1100000); /* past the look, the NIC idle */
		if (look == 1)
			queue_tx(&e, 40);
		for (unsigned i = 0; i < 512; i++) /* the look comes; the model does not run */
			myrio_tx_burst(e.a, none, 0);
	}
	assert_int_equal(resets(e.a), 0);
	poll_for(&e, 10000000ull, NULL); /* the NIC runs: they go */
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);
	assert_int_equal(resets(e.a), 0);
	env_destroy(&e);
}

/* A ring seen stuck at two looks gets a moment to move before the reset: a NIC (a model's
 * thread, a daemon) that had no time between the looks on a loaded host sends then, and is
 * left alone. Here the send engine comes back just before the second look. */
static void stall_ending_at_the_look_is_not_reset(void **state)
{
	(void)state;
	struct env e;
	up_env(&e);
	struct sim_nic *nic = sim_nic_find(e.sim, "sim0");
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_TX_HANG, 0), 0);
	queue_tx(&e, 40);
	struct myrio_pkt *none[1];
	for (int look = 0; look < 2; look++) {
		myrio_sim_step(e.sim, 1100000); /* past the look, the ring held */
		if (look == 1)
			nic->fault_tx_hang = false;
		for (unsigned i = 0; i < 512; i++) /* the look */
			myrio_tx_burst(e.a, none, 0);
	}
	assert_int_equal(resets(e.a), 0);
	poll_for(&e, 10000000ull, NULL);
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);
	assert_int_equal(resets(e.a), 0);
	env_destroy(&e);
}

/* A send descriptor at an IOVA that was never mapped (MYRIO_FAULT_TX_IOVA, the driver's
 * test-only injection, here on both ports): the model refuses the read and counts it, the
 * frame is lost with an RDMA tag, and the watchdog resets the NIC; the frames queued with
 * it go back to their pool and traffic flows again, with no second fault. The QEMU guest
 * test does the same behind a real IOMMU. */
static bool both_recovered(struct env *e)
{
	return resets(e->a) >= 1 && resets(e->b) >= 1;
}

static void unmapped_send_iova_is_recovered(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "nics=2,link=10g,stepped"), 0);
	setenv("MYRIO_FAULT_TX_IOVA", "5", 1);
	int rc = env_open(&e, 1500);
	unsetenv("MYRIO_FAULT_TX_IOVA");
	assert_int_equal(rc, 0);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	struct sim_nic_stats st;
	sim_nic_get_stats(sim_nic_find(e.sim, "sim0"), &st);
	assert_int_equal(st.dma_faults, 0);
	queue_tx(&e, 10); /* the 5th goes out at the unmapped IOVA */
	struct myrio_pkt *out[10];
	for (unsigned i = 0; i < 10; i++) {
		out[i] = myrio_pkt_alloc(e.pool_b);
		assert_non_null(out[i]);
		env_fill(myrio_pkt_data(out[i]), 500, 7000 + i, e.ia.mac, e.ib.mac);
		out[i]->len = 500;
	}
	assert_int_equal(myrio_tx_burst(e.b, out, 10), 10);
	poll_for(&e, 5000000000ull, both_recovered);
	for (unsigned i = 0; i < 2; i++) {
		sim_nic_get_stats(sim_nic_find(e.sim, i ? "sim1" : "sim0"), &st);
		assert_true(st.dma_faults >= 1);
		struct myrio_port *p = i ? e.b : e.a;
		assert_int_equal(resets(p), 1);
		assert_true(env_xstat(p, "rdma_tags_lost") >= 1);
	}
	assert_int_equal(myrio_pool_free_count(e.pool_a), e.pool_a->count);
	assert_int_equal(myrio_pool_free_count(e.pool_b), e.pool_b->count);
	frames_flow_again(&e, 1000);
	assert_int_equal(resets(e.a), 1); /* once: the injection does not repeat */
	assert_int_equal(resets(e.b), 1);
	env_destroy(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reboot_recovers_by_itself),
		cmocka_unit_test(failed_recovery_leaves_port_down_and_retries),
		cmocka_unit_test(period_is_configurable),
		cmocka_unit_test(loaded_image_is_reloaded),
		cmocka_unit_test(held_buffers_beyond_spare_partial_rings),
		cmocka_unit_test(stuck_send_ring_is_reset),
		cmocka_unit_test(hung_firmware_is_reset),
		cmocka_unit_test(frames_posted_just_before_a_look_are_not_stuck),
		cmocka_unit_test(stall_ending_at_the_look_is_not_reset),
		cmocka_unit_test(nic_gone_then_back),
		cmocka_unit_test(sleeper_notices_reboot),
		cmocka_unit_test(pause_held_ring_is_not_reset),
		cmocka_unit_test(unmapped_send_iova_is_recovered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
