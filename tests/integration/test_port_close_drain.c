/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames sent right before myrio_port_close reach the peer: the close lets what was posted
 * leave before it stops the NIC, as an application that sends its last datagram (or an
 * IGMP Leave) and then closes expects. On the in-process pair link, the stepped model and
 * the model daemon; no polling of the sender between its last send and its close. And the
 * NIC's part: ETHERNET_DOWN right behind the sends still lets them leave (§10). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "link_pair.h"
#include "port/myri10ge_port.h" /* the driver's ETHERNET_DOWN, without the close's wait */
#include "simd_daemon.h"
#include "wall_clock.h"

#define FRAMES 32
#define FRAME_LEN 600
#define ETHERTYPE_TEST 0x88b5 /* IEEE local experimental */

static void fill(struct myrio_pkt *p, const uint8_t dst[6], unsigned seq)
{
	uint8_t *f = myrio_pkt_data(p);
	memcpy(f, dst, 6);
	memcpy(f + 6, (uint8_t[]){0x02, 0, 0, 0, 0xcd, 0x01}, 6);
	f[12] = ETHERTYPE_TEST >> 8;
	f[13] = ETHERTYPE_TEST & 0xff;
	f[14] = (uint8_t)seq;
	for (unsigned i = 15; i < FRAME_LEN; i++)
		f[i] = (uint8_t)(i * 7 + seq);
	p->len = FRAME_LEN;
}

/* The sequence number of a frame of ours, intact; -1 for anything else. */
static int frame_seq(const struct myrio_pkt *p)
{
	const uint8_t *f = myrio_pkt_data(p);
	if (p->len < FRAME_LEN || f[12] != ETHERTYPE_TEST >> 8 || f[13] != (ETHERTYPE_TEST & 0xff))
		return -1;
	unsigned seq = f[14];
	for (unsigned i = 15; i < FRAME_LEN; i++)
		if (f[i] != (uint8_t)(i * 7 + seq))
			return -1;
	return seq < FRAMES ? (int)seq : -1;
}

/* a sends FRAMES frames to b and closes at once (or, with down_only, stops its NIC at once
 * with ETHERNET_DOWN: the driver's own wait for the send ring left out, which the NIC's
 * firmware must then make up for); b must get every one of them. */
static void send_then_stop(struct link_pair *l, bool down_only)
{
	struct myrio_port_info bi;
	assert_int_equal(myrio_port_info(l->b, &bi), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(l->a, 64, 2048, &pool), 0);
	struct myrio_pkt *out[FRAMES];
	for (unsigned i = 0; i < FRAMES; i++) {
		assert_non_null(out[i] = myrio_pkt_alloc(pool));
		fill(out[i], bi.mac, i);
	}
	assert_int_equal(myrio_tx_burst(l->a, out, FRAMES), FRAMES);
	myrio_pool_destroy(pool); /* as a stack does: the port keeps what is still out */
	if (down_only)
		assert_int_equal(myri_nic_down(&((struct myri10ge_port *)l->a)->nic), 0);
	myrio_port_close(l->a);
	l->a = NULL;

	bool seen[FRAMES] = {false};
	unsigned got = 0;
	uint64_t give_up = wall_ns() + 10000000000ull; /* a bound, not an expectation */
	for (unsigned round = 0; got < FRAMES && wall_ns() < give_up; round++) {
		link_pair_step(l, 20);
		struct myrio_pkt *in[32];
		uint16_t n = myrio_rx_burst(l->b, in, 32);
		for (uint16_t i = 0; i < n; i++) {
			int seq = frame_seq(in[i]);
			if (seq >= 0 && !seen[seq]) {
				seen[seq] = true;
				got++;
			}
			myrio_pkt_free(in[i]);
		}
		if (!n && !l->sim)
			usleep(100);
	}
	assert_int_equal(got, FRAMES);
}

static void send_then_close(struct link_pair *l)
{
	send_then_stop(l, false);
}

static void over_the_pair_link(void **state)
{
	struct link_pair l;
	assert_int_equal(link_pair_open(&l, "pair:closedrain", NULL, NULL, NULL), 0);
	send_then_close(&l);
	link_pair_close(&l);
}

static void over_the_stepped_model(void **state)
{
	struct link_pair l;
	assert_int_equal(link_pair_open(&l, "sim:", NULL, NULL, NULL), 0);
	send_then_close(&l);
	link_pair_close(&l);
}

static void down_at_once_over_the_stepped_model(void **state)
{
	struct link_pair l;
	assert_int_equal(link_pair_open(&l, "sim:", NULL, NULL, NULL), 0);
	send_then_stop(&l, true);
	link_pair_close(&l);
}

static void over_the_model_daemon(void **state)
{
	struct simd_daemon_proc d;
	assert_int_equal(simd_daemon_start(&d, "closedrain", NULL), 0);
	char link[160];
	snprintf(link, sizeof(link), "simd:nic0+nic1@%s", d.sock);
	struct link_pair l;
	assert_int_equal(link_pair_open(&l, link, NULL, NULL, NULL), 0);
	send_then_close(&l);
	link_pair_close(&l);
	assert_int_equal(simd_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(over_the_pair_link),
	    cmocka_unit_test(over_the_stepped_model),
	    cmocka_unit_test(down_at_once_over_the_stepped_model),
	    cmocka_unit_test(over_the_model_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
