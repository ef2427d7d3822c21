/* SPDX-License-Identifier: BSD-3-Clause */
/* The public face of the model's host endpoints (myrio_sim_host_*, myrio/sim.h): spec
 * checks, and a world of one NIC cabled to a TAP device carrying frames byte-exact both
 * ways between the driver's port and the kernel, in a private network namespace (needs
 * root; skipped otherwise). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include "myrio/myrio.h"
#include "test_pattern.h"
#include "test_env.h"
#include "util/byteorder.h"

#define TEST_ETHERTYPE 0x88b5 /* IEEE local experimental: nothing in the kernel answers it */
#define LEN 300

static void specs_are_checked(void **state)
{
	(void)state;
	struct myrio_sim_host *h = NULL;
	const char *bad[] = {"", "tap:", "packet:", "tap", "veth:x", "TAP:x"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(myrio_sim_host_open(&h, bad[i]), -EINVAL);
	assert_null(h);
	/* no such interface to listen on */
	assert_true(myrio_sim_host_open(&h, "packet:nosuchif0") < 0);
}

/* An AF_PACKET socket on ifname: the kernel's side of the TAP device. */
static int kernel_socket(const char *ifname)
{
	int s = socket(AF_PACKET, SOCK_RAW, htons(TEST_ETHERTYPE));
	assert_true(s >= 0);
	struct sockaddr_ll a = {.sll_family = AF_PACKET,
				.sll_protocol = htons(TEST_ETHERTYPE),
				.sll_ifindex = (int)if_nametoindex(ifname)};
	assert_true(a.sll_ifindex > 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	struct timeval tv = {.tv_sec = 2};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return s;
}

static void frame(uint8_t *f, const uint8_t dst[6], const uint8_t src[6], uint64_t off)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put_be16(f + 12, TEST_ETHERTYPE);
	test_pattern_fill(f + 14, LEN - 14, off);
}

static void cabled_world_reaches_the_kernel(void **state)
{
	(void)state;
	struct myrio_sim_host *h;
	assert_int_equal(myrio_sim_host_open(&h, "tap:mrhost0"), 0);
	assert_int_equal(system("ip link set mrhost0 up"), 0);
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	sc.stepped = true;
	struct myrio_sim *sim;
	assert_int_equal(myrio_sim_create_cabled(&sim, &sc, h), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = sim;
	struct myrio_port *port;
	assert_int_equal(myrio_port_open(&port, "sim:sim0", &pc), 0);
	struct myrio_port_info info;
	assert_int_equal(myrio_port_info(port, &info), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(port, 64, 2048, &pool), 0);
	int k = kernel_socket("mrhost0");

	/* port -> cable -> TAP -> kernel */
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	assert_non_null(p);
	frame(myrio_pkt_data(p), bcast, info.mac, 0);
	p->len = LEN;
	assert_int_equal(myrio_tx_burst(port, &p, 1), 1);
	myrio_sim_step(sim, 100);
	uint8_t buf[2048];
	ssize_t n = recv(k, buf, sizeof(buf), 0);
	assert_int_equal(n, LEN);
	assert_int_equal(test_pattern_check(buf + 14, LEN - 14, 0, NULL), 0);

	/* kernel -> TAP -> cable -> port */
	frame(buf, info.mac, (const uint8_t[6]){0x02, 0, 0, 0, 0, 9}, 1000);
	assert_int_equal(send(k, buf, LEN, 0), LEN);
	struct myrio_pkt *in = NULL;
	for (int i = 0; i < 1000 && !in; i++) {
		myrio_sim_step(sim, 10);
		if (myrio_rx_burst(port, &in, 1) == 0)
			in = NULL;
	}
	assert_non_null(in);
	assert_int_equal(in->len, LEN);
	assert_memory_equal(myrio_pkt_data(in), buf, LEN);
	myrio_pkt_free(in);

	struct myrio_sim_host_stats st;
	myrio_sim_host_stats(h, &st);
	assert_int_equal(st.to_host, 1);
	assert_true(st.from_host >= 1); /* and whatever the kernel sends a new link */
	assert_int_equal(st.drops, 0);
	close(k);
	myrio_port_tx_drain(port, pool, 1000);
	myrio_port_close(port);
	myrio_pool_destroy(pool);
	myrio_sim_destroy(sim); /* and the TAP device with its cable */
	assert_int_equal(if_nametoindex("mrhost0"), 0);
}

int main(void)
{
	test_private_netns();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(specs_are_checked),
	    cmocka_unit_test(cabled_world_reaches_the_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
