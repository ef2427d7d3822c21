/* SPDX-License-Identifier: BSD-3-Clause */
/* Raw frames through the driver and the device model, both ways, byte-exact and in order:
 * all sizes, ring wraps, jumbo frames, runts, checksum offload, counters, link changes,
 * impossible completions. Each case runs on the stepped model and on the threaded one. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_env.h"
#include "ipv4_frame.h"
#include "sim/model.h"
#include "util/byteorder.h"
#include "util/csum.h"

static const char *spec_of(void **state)
{
	return *state ? "stepped" : "link=10g";
}

static uint32_t len_all(uint32_t i)
{
	return 60 + i % (1514 - 60 + 1);
}
static uint32_t len_min(uint32_t i)
{
	return 60;
}
static uint32_t len_max(uint32_t i)
{
	return 1514;
}
static uint32_t len_jumbo(uint32_t i)
{
	return i % 3 == 0 ? 9014 : 60 + (i * 1021) % (9014 - 60);
}

static void both_ways_all_sizes_with_wraps(void **state)
{
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	/* 3000 frames: the send ring (1024), rx rings (512) and completion ring (1024) wrap */
	assert_int_equal(env_transfer(&e, 0, 1455 * 2, len_all), 1455 * 2);
	assert_int_equal(env_transfer(&e, 1, 3000, len_min), 3000);
	assert_int_equal(env_transfer(&e, 0, 1500, len_max), 1500);
	struct myrio_port_stats sa, sb;
	assert_true(env_drain_tx(&e));
	myrio_port_stats(e.a, &sa);
	myrio_port_stats(e.b, &sb);
	assert_int_equal(sa.tx_packets, 1455 * 2 + 1500);
	assert_int_equal(sb.rx_packets, 1455 * 2 + 1500);
	assert_int_equal(sb.tx_packets, 3000);
	assert_int_equal(sa.rx_packets, 3000);
	assert_int_equal(sb.rx_bad_completion, 0);
	assert_int_equal(env_xstat(e.b, "dropped_bad_crc32"), 0);
	assert_int_equal(sb.rx_errors, 0);
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < 1455 * 2; i++)
		bytes += len_all(i);
	assert_int_equal(sb.rx_bytes, bytes + 1500 * 1514);
	env_destroy(&e);
}

static void jumbo_frames_mtu_9000(void **state)
{
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	assert_int_equal(env_open(&e, 9000), 0);
	assert_int_equal(e.ia.max_frame, 9018);
	assert_int_equal(env_transfer(&e, 0, 1200, len_jumbo), 1200);
	assert_int_equal(env_transfer(&e, 1, 600, len_jumbo), 600);
	env_destroy(&e);
}

static void runts_are_padded(void **state)
{
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a);
	env_fill(myrio_pkt_data(p), 60, 77, e.ib.mac, e.ia.mac);
	memset(myrio_pkt_data(p) + 42, 0xee, 18); /* stale bytes behind the runt */
	p->len = 42;
	assert_int_equal(myrio_tx_burst(e.a, &p, 1), 1);
	struct myrio_pkt *in = NULL;
	for (int i = 0; i < 100000 && !myrio_rx_burst(e.b, &in, 1); i++)
		env_pump(&e);
	assert_non_null(in);
	assert_int_equal(in->len, 60);
	uint8_t want[60];
	env_fill(want, 60, 77, e.ib.mac, e.ia.mac);
	memset(want + 42, 0, 18);
	assert_memory_equal(myrio_pkt_data(in), want, 60);
	myrio_pkt_free(in);
	env_destroy(&e);
}

/* An IPv4/UDP frame with the pseudo-header sum seeded (§5.5): the NIC completes the UDP
 * checksum; the receive sum (§4.6) covers bytes 14..end. */
static void checksum_offload(void **state)
{
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	const uint32_t len = 14 + 20 + 8 + 301; /* odd payload */
	struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a);
	uint8_t *f = myrio_pkt_data(p);
	memset(f, 0, len);
	uint8_t *ip = f + 14, *udp = ipv4_frame(f, e.ib.mac, e.ia.mac, 17, (uint16_t)(len - 14),
						0x0a000001, 0x0a000002, 0);
	put_be16(udp, 1234);
	put_be16(udp + 2, 5678);
	put_be16(udp + 4, (uint16_t)(len - 34));
	for (uint32_t i = 42; i < len; i++)
		f[i] = (uint8_t)(i * 13);
	/* pseudo-header: addresses, protocol, UDP length */
	uint64_t ph = csum_add(0, ip + 12, 8) + 17 + (len - 34);
	put_be16(udp + 6, csum_fold(ph));
	p->len = len;
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 34;
	p->csum_field = 40;
	assert_int_equal(myrio_tx_burst(e.a, &p, 1), 1);
	struct myrio_pkt *in = NULL;
	for (int i = 0; i < 100000 && !myrio_rx_burst(e.b, &in, 1); i++)
		env_pump(&e);
	assert_non_null(in);
	assert_int_equal(in->len, len);
	const uint8_t *g = myrio_pkt_data(in);
	/* the UDP checksum verifies: pseudo-header + segment sums to 0xffff */
	uint64_t v = csum_add(0, g + 26, 8) + 17 + (len - 34);
	v = csum_add(v, g + 34, len - 34);
	assert_int_equal(csum_fold(v), 0xffff);
	assert_true(get_be16(g + 40) != 0);
	/* the receive sum */
	assert_true(in->ol_flags & MYRIO_PKT_RX_CSUM_PARTIAL);
	assert_int_equal(in->rx_csum, csum_fold(csum_add(0, g + 14, len - 14)));
	myrio_pkt_free(in);
	env_destroy(&e);
}

static void link_changes_reported(void **state)
{
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(myrio_sim_set_link(e.sim, "sim1", false), 0);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_DOWN), MYRIO_LINK_DOWN);
	assert_int_equal(myrio_sim_set_link(e.sim, "sim1", true), 0);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	struct myrio_port_stats s;
	myrio_port_stats(e.b, &s);
	assert_true(s.link_changes >= 3); /* unknown -> up -> down -> up */
	assert_int_equal(env_transfer(&e, 0, 100, len_all), 100);
	env_destroy(&e);
}

/* A completion claiming 60000 bytes: dropped and counted, and since the driver cannot know
 * which ring the NIC took a buffer from, the next burst resets the NIC (watchdog, §8.5);
 * frames flow again once the link is back. */
static void impossible_completion_is_counted_and_resets(void **state)
{
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	assert_int_equal(env_transfer(&e, 0, 10, len_max), 10);
	assert_int_equal(
	    sim_nic_inject(sim_nic_find(e.sim, "sim1"), SIM_FAULT_BAD_COMPLETION, 60000), 0);
	struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a);
	env_fill(myrio_pkt_data(p), 1000, 0xffff, e.ib.mac, e.ia.mac);
	p->len = 1000;
	assert_int_equal(myrio_tx_burst(e.a, &p, 1), 1);
	struct myrio_port_stats s = {0};
	struct myrio_pkt *in[4];
	for (int i = 0; i < 100000 && s.watchdog_resets == 0; i++) {
		env_pump(&e);
		assert_int_equal(myrio_rx_burst(e.b, in, 4), 0);
		myrio_port_stats(e.b, &s);
	}
	assert_int_equal(s.rx_bad_completion, 1);
	assert_int_equal(s.watchdog_resets, 1);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	/* traffic goes on, byte-exact */
	assert_int_equal(env_transfer(&e, 0, 1000, len_all), 1000);
	env_destroy(&e);
}

static void sleeping_on_the_interrupt_fd(void **state)
{
	if (*state)
		skip(); /* needs the model thread */
	struct env e;
	assert_int_equal(env_world(&e, spec_of(state)), 0);
	e.irq = true;
	assert_int_equal(env_open(&e, 1500), 0);
	int fd = myrio_port_irq_fd(e.b);
	assert_true(fd >= 0);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	struct myrio_pkt *in[4];
	while (myrio_rx_burst(e.b, in, 4))
		;
	/* forget interrupts raised so far, then arm */
	uint64_t v;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	while (poll(&pfd, 1, 0) == 1 && read(fd, &v, sizeof(v)) == sizeof(v))
		;
	assert_int_equal(myrio_port_irq_arm(e.b), 0);
	struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a);
	env_fill(myrio_pkt_data(p), 100, 1, e.ib.mac, e.ia.mac);
	p->len = 100;
	assert_int_equal(myrio_tx_burst(e.a, &p, 1), 1);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	uint16_t got = 0;
	for (int i = 0; i < 1000000 && !got; i++)
		got = myrio_rx_burst(e.b, in, 4);
	assert_int_equal(got, 1);
	myrio_pkt_free(in[0]);
	env_destroy(&e);
}

#define BOTH(f) cmocka_unit_test_prestate(f, (void *)1), cmocka_unit_test_prestate(f, NULL)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    BOTH(both_ways_all_sizes_with_wraps),
	    BOTH(jumbo_frames_mtu_9000),
	    BOTH(runts_are_padded),
	    BOTH(checksum_offload),
	    BOTH(link_changes_reported),
	    BOTH(impossible_completion_is_counted_and_resets),
	    BOTH(sleeping_on_the_interrupt_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
