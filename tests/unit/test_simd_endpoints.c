/* SPDX-License-Identifier: BSD-3-Clause */
/* Cable endpoints into the Linux kernel: a TAP device and an AF_PACKET socket on a veth
 * pair, exercised against the kernel in a private network namespace (needs root; skipped
 * otherwise). Frames must cross byte-exact both ways, and a checksum the kernel left to
 * the hardware must arrive completed. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include "sim/endpoint.h"
#include "test_env.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define TEST_ETHERTYPE 0x88b5 /* IEEE local experimental: nothing in the kernel answers it */

static int set_up(const char *ifname, int up)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return rc;
}

static int raw_socket(const char *ifname)
{
	int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	assert_true(s >= 0);
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex(ifname)};
	assert_int_equal(bind(s, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return s;
}

static size_t test_frame(uint8_t *f, size_t len, uint8_t seed)
{
	memset(f, 0xff, 6);
	const uint8_t src[6] = {0x02, 0x60, 0xdd, 0, 0, seed};
	memcpy(f + 6, src, 6);
	put_be16(f + 12, TEST_ETHERTYPE);
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(i * 7 + seed);
	return len;
}

/* Reads frames of our ethertype only: the kernel sends its own (IPv6 DAD, MLD...). */
static ssize_t recv_test_frame(int s, uint8_t *buf, size_t cap)
{
	for (int i = 0; i < 100; i++) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		if (poll(&p, 1, 1000) != 1)
			return -1;
		ssize_t n = recv(s, buf, cap, 0);
		if (n >= 14 && get_be16(buf + 12) == TEST_ETHERTYPE)
			return n;
	}
	return -1;
}

struct got {
	uint8_t frame[2048];
	uint32_t len;
	unsigned count;
	uint16_t want_type;
};

static void collect(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct got *g = ctx;
	if (len < 14 || get_be16(frame + 12) != g->want_type || len > sizeof(g->frame))
		return;
	memcpy(g->frame, frame, len);
	g->len = len;
	g->count++;
}

static void poll_until(struct sim_endpoint *ep, struct got *g, unsigned want)
{
	for (int i = 0; i < 2000 && g->count < want; i++) {
		struct pollfd p = {.fd = ep->ops->fd(ep), .events = POLLIN};
		poll(&p, 1, 1);
		ep->ops->poll(ep, collect, g, 32);
	}
}

static void tap_carries_frames_both_ways(void **state)
{
	(void)state;
	struct sim_endpoint *ep;
	uint8_t f[1514], buf[2048];
	assert_int_equal(sim_endpoint_tap_open("mtap0", &ep), 0);
	assert_string_equal(ep->name, "tap:mtap0");
	assert_true(ep->ops->fd(ep) >= 0);
	assert_int_equal(set_up("mtap0", 1), 0);
	int s = raw_socket("mtap0");

	/* Model to kernel. */
	size_t len = test_frame(f, 1514, 1);
	ep->ops->deliver(ep, f, (uint32_t)len);
	assert_int_equal(ep->tx_frames, 1);
	assert_int_equal(recv_test_frame(s, buf, sizeof(buf)), (ssize_t)len);
	assert_memory_equal(buf, f, len);

	/* Kernel to model. */
	len = test_frame(f, 60, 2);
	assert_int_equal(send(s, f, len, 0), (ssize_t)len);
	struct got g = {.want_type = TEST_ETHERTYPE};
	poll_until(ep, &g, 1);
	assert_int_equal(g.count, 1);
	assert_int_equal(g.len, len);
	assert_memory_equal(g.frame, f, len);
	assert_true(ep->rx_frames >= 1);

	/* Never blocks: a runt, a giant and a down interface are drops, counted. */
	uint64_t drops = ep->drops;
	ep->ops->deliver(ep, f, 10);
	static uint8_t giant[10000];
	ep->ops->deliver(ep, giant, sizeof(giant));
	assert_int_equal(ep->drops, drops + 2);
	assert_int_equal(set_up("mtap0", 0), 0);
	ep->ops->deliver(ep, f, 60);
	assert_int_equal(ep->drops, drops + 3);
	close(s);
	ep->ops->destroy(ep);
	assert_int_equal(if_nametoindex("mtap0"), 0); /* gone with its fd */
}

static void tap_open_errors_are_values(void **state)
{
	(void)state;
	struct sim_endpoint *ep = (void *)1;
	assert_int_equal(sim_endpoint_tap_open("", &ep), -EINVAL);
	assert_null(ep);
	assert_int_equal(sim_endpoint_tap_open("a-name-longer-than-ifnamsiz", &ep), -EINVAL);
	assert_int_equal(sim_endpoint_packet_open("no-such-if0", &ep), -ENODEV);
	assert_null(ep);
}

static void packet_carries_frames_both_ways(void **state)
{
	(void)state;
	struct sim_endpoint *ep;
	uint8_t f[1514], buf[2048];
	assert_int_equal(system("ip link add mveth0 type veth peer name mveth1 && "
				"ip link set mveth0 up && ip link set mveth1 up"),
			 0);
	assert_int_equal(sim_endpoint_packet_open("mveth0", &ep), 0);
	int s = raw_socket("mveth1");

	size_t len = test_frame(f, 1514, 3);
	ep->ops->deliver(ep, f, (uint32_t)len);
	assert_int_equal(ep->tx_frames, 1);
	assert_int_equal(recv_test_frame(s, buf, sizeof(buf)), (ssize_t)len);
	assert_memory_equal(buf, f, len);

	len = test_frame(f, 100, 4);
	assert_int_equal(send(s, f, len, 0), (ssize_t)len);
	struct got g = {.want_type = TEST_ETHERTYPE};
	poll_until(ep, &g, 1);
	assert_int_equal(g.count, 1);
	assert_int_equal(g.len, len);
	assert_memory_equal(g.frame, f, len);
	/* PACKET_IGNORE_OUTGOING: our own delivered frame never came back. */
	assert_int_equal(g.count, 1);

	/* A burst larger than one poll's budget arrives whole, in order, over several polls;
	 * a frame longer than any the NIC takes is dropped and counted. */
	assert_int_equal(system("ip link set mveth0 mtu 9600 && ip link set mveth1 mtu 9600"), 0);
	static uint8_t giant[9550];
	test_frame(giant, sizeof(giant), 5);
	uint64_t drops = ep->drops;
	assert_int_equal(send(s, giant, sizeof(giant), 0), (ssize_t)sizeof(giant));
	for (unsigned i = 0; i < 100; i++) {
		len = test_frame(f, 60 + i, (uint8_t)i);
		assert_int_equal(send(s, f, len, 0), (ssize_t)len);
	}
	g.count = 0;
	poll_until(ep, &g, 100);
	assert_int_equal(g.count, 100);
	assert_int_equal(g.len, 60 + 99);
	test_frame(f, 60 + 99, 99);
	assert_memory_equal(g.frame, f, g.len);
	assert_int_equal(ep->drops, drops + 1);
	close(s);
	ep->ops->destroy(ep);
	assert_int_equal(system("ip link del mveth0"), 0);
}

/* The kernel sends UDP over veth with the checksum left to "hardware"; the endpoint must
 * complete it so that the frame verifies. */
static void packet_completes_offloaded_checksums(void **state)
{
	(void)state;
	struct sim_endpoint *ep;
	assert_int_equal(system("ip link add mveth2 type veth peer name mveth3 && "
				"ip link set mveth2 up && ip link set mveth3 up && "
				"ip addr add 10.213.0.1/24 dev mveth3 && "
				"ip neigh add 10.213.0.2 lladdr 02:60:dd:00:00:09 dev mveth3"),
			 0);
	assert_int_equal(sim_endpoint_packet_open("mveth2", &ep), 0);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9999)};
	inet_pton(AF_INET, "10.213.0.2", &to.sin_addr);
	const char msg[] = "checksum me, please";
	assert_int_equal(sendto(u, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)sizeof(msg));
	struct got g = {.want_type = 0x0800};
	poll_until(ep, &g, 1);
	assert_int_equal(g.count, 1);
	const uint8_t *ip = g.frame + 14;
	assert_int_equal(ip[9], 17);
	size_t ihl = (ip[0] & 15u) * 4u;
	uint16_t ulen = get_be16(ip + ihl + 4);
	assert_int_equal(ulen, 8 + sizeof(msg));
	assert_memory_equal(ip + ihl + 8, msg, sizeof(msg));
	/* Pseudo-header + UDP header + data sums to 0xffff when the checksum is right. */
	uint8_t ph[12];
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 17;
	put_be16(ph + 10, ulen);
	uint64_t sum = csum_add(csum_add(0, ph, sizeof(ph)), ip + ihl, ulen);
	assert_int_not_equal(get_be16(ip + ihl + 6), 0);
	assert_int_equal(csum_fold(sum), 0xffff);
	close(u);
	ep->ops->destroy(ep);
	assert_int_equal(system("ip link del mveth2"), 0);
}

int main(void)
{
	test_private_netns();
	/* The namespace is this process's own: nothing leaks, nothing collides. */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(tap_carries_frames_both_ways),
	    cmocka_unit_test(tap_open_errors_are_values),
	    cmocka_unit_test(packet_carries_frames_both_ways),
	    cmocka_unit_test(packet_completes_offloaded_checksums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
