/* SPDX-License-Identifier: BSD-3-Clause */
/* A daemon NIC whose cable ends in the Linux kernel, inside a network namespace: first a
 * TAP device moved into the namespace, then an AF_PACKET socket on a veth pair whose other
 * end is in the namespace. Each time, a frame the driver sends is seen by tcpdump in the
 * namespace; the ARP request the kernel sends for an unknown neighbour arrives at the
 * driver, whose ARP reply then lands in the kernel's neighbour table; and a UDP datagram
 * from the kernel arrives with a valid checksum (veth leaves it to the "hardware": the
 * AF_PACKET end completes it). Needs root (namespaces, TAP) and tcpdump; skipped
 * otherwise. Names are unique per run and everything is removed at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */
#include <limits.h>

#include "myrio/port.h"
#include "simd_daemon.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define KERNEL_IP "10.211.0.1"
#define DRIVER_IP "10.211.0.2"

struct env {
	struct simd_daemon_proc d;
	bool packet; /* AF_PACKET on a veth pair instead of a TAP device */
	char ns[32];
	char tap[16];	/* the kernel's interface, in the namespace */
	char outer[16]; /* packet: the veth end the daemon binds, outside */
	char tmp[64];
	struct myrio_port *port;
	struct myrio_pool *pool;
	uint8_t mac[6];
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int setup(struct env *e, bool packet)
{
	memset(e, 0, sizeof(*e));
	e->packet = packet;
	snprintf(e->ns, sizeof(e->ns), "myrio-k%d", (int)getpid());
	snprintf(e->tap, sizeof(e->tap), "mk%d", (int)getpid());
	snprintf(e->outer, sizeof(e->outer), "mko%d", (int)getpid());
	snprintf(e->tmp, sizeof(e->tmp), "/tmp/myrio-simd-k%d", (int)getpid());
	if (sh("ip netns add %s && mkdir -p %s", e->ns, e->tmp) != 0)
		return -1;
	char cable[64];
	if (packet) {
		if (sh("ip link add %s type veth peer name %s netns %s && ip link set %s up",
		       e->outer, e->tap, e->ns, e->outer) != 0)
			return -1;
		snprintf(cable, sizeof(cable), "nic0,cable=packet:%s", e->outer);
	} else {
		snprintf(cable, sizeof(cable), "nic0,cable=tap:%s", e->tap);
	}
	const char *args[] = {"--nic", cable, NULL};
	if (simd_daemon_start(&e->d, "kernel", args) < 0)
		return -1;
	/* The TAP device goes into the namespace; the daemon's fd keeps working. */
	if (!packet && sh("ip link set %s netns %s", e->tap, e->ns) != 0)
		return -1;
	if (sh("ip -n %s link set %s up && ip -n %s addr add %s/24 dev %s", e->ns, e->tap, e->ns,
	       KERNEL_IP, e->tap) != 0)
		return -1;
	char dev[160];
	snprintf(dev, sizeof(dev), "simd:nic0@%s", e->d.sock);
	if (myrio_port_open(&e->port, dev, NULL) < 0)
		return -1;
	struct myrio_port_info info;
	myrio_port_info(e->port, &info);
	memcpy(e->mac, info.mac, 6);
	if (myrio_port_pool_create(e->port, 256, 2048, &e->pool) < 0)
		return -1;
	return 0;
}

static int setup_tap(void **state)
{
	static struct env e;
	*state = &e;
	return setup(&e, false);
}

static int setup_packet(void **state)
{
	static struct env e;
	*state = &e;
	return setup(&e, true);
}

static int teardown(void **state)
{
	struct env *e = *state;
	if (e->port)
		myrio_port_close(e->port);
	int rc = e->d.pid > 0 ? simd_daemon_stop(&e->d) : -1;
	sh("ip netns del %s 2>/dev/null; ip link del %s 2>/dev/null; rm -rf %s", e->ns, e->outer,
	   e->tmp);
	return rc;
}

static void send_frame(struct env *e, const uint8_t *frame, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(e->pool);
	assert_non_null(p);
	memcpy(myrio_pkt_data(p), frame, len);
	p->len = len;
	uint64_t end = now_ms() + 2000;
	while (myrio_tx_burst(e->port, &p, 1) != 1)
		assert_true(now_ms() < end);
}

static void driver_frame_reaches_tcpdump(void **state)
{
	struct env *e = *state;
	/* tcpdump in the namespace, one frame of our ethertype, printed with link headers. */
	assert_int_equal(sh("ip netns exec %s timeout 10 tcpdump -i %s -nn -e -c 1 -l "
			    "'ether proto 0x88b5' >%s/out 2>%s/err &",
			    e->ns, e->tap, e->tmp, e->tmp),
			 0);
	uint64_t end = now_ms() + 5000;
	while (sh("grep -q 'listening on' %s/err 2>/dev/null", e->tmp) != 0) {
		assert_true(now_ms() < end);
		usleep(20000);
	}
	uint8_t f[200];
	memset(f, 0xff, 6);
	memcpy(f + 6, e->mac, 6);
	put_be16(f + 12, 0x88b5);
	for (unsigned i = 14; i < sizeof(f); i++)
		f[i] = (uint8_t)i;
	/* The link may still be coming up: send until tcpdump has its frame. */
	end = now_ms() + 8000;
	char want[64];
	snprintf(want, sizeof(want), "%02x:%02x:%02x:%02x:%02x:%02x > ff:ff:ff:ff:ff:ff", e->mac[0],
		 e->mac[1], e->mac[2], e->mac[3], e->mac[4], e->mac[5]);
	int seen = 1;
	while (seen != 0 && now_ms() < end) {
		send_frame(e, f, sizeof(f));
		usleep(100000);
		seen =
		    sh("grep -q '%s, ethertype Unknown (0x88b5), length 200' %s/out", want, e->tmp);
	}
	if (seen != 0)
		sh("cat %s/out %s/err >&2", e->tmp, e->tmp);
	assert_int_equal(seen, 0);
}

/* ARP for DRIVER_IP from the kernel; answered, so the kernel learns our MAC. */
static void kernel_arp_reaches_driver(void **state)
{
	struct env *e = *state;
	/* Any datagram to an unknown neighbour makes the kernel ask for it (no ping needed). */
	assert_int_equal(sh("ip netns exec %s timeout 8 bash -c 'for i in $(seq 40); do "
			    "echo x >/dev/udp/%s/9; sleep 0.2; done' >/dev/null 2>&1 &",
			    e->ns, DRIVER_IP),
			 0);
	uint8_t target[4], sender_ip[4];
	inet_pton(AF_INET, DRIVER_IP, target);
	inet_pton(AF_INET, KERNEL_IP, sender_ip);
	bool got_arp = false;
	uint64_t end = now_ms() + 8000;
	while (!got_arp && now_ms() < end) {
		struct myrio_pkt *pkts[32];
		uint16_t n = myrio_rx_burst(e->port, pkts, 32);
		for (uint16_t i = 0; i < n; i++) {
			uint8_t *f = myrio_pkt_data(pkts[i]);
			uint32_t len = pkts[i]->len;
			if (!got_arp && len >= 42 && get_be16(f + 12) == 0x0806 &&
			    get_be16(f + 20) == 1 && memcmp(f + 38, target, 4) == 0 &&
			    memcmp(f + 28, sender_ip, 4) == 0) {
				got_arp = true;
				/* Reply in place: op 2, swap sender/target, our MAC. */
				uint8_t reply[42];
				memcpy(reply, f + 6, 6);
				memcpy(reply + 6, e->mac, 6);
				memcpy(reply + 12, f + 12, 8);
				put_be16(reply + 20, 2);
				memcpy(reply + 22, e->mac, 6);
				memcpy(reply + 28, target, 4);
				memcpy(reply + 32, f + 22, 10);
				send_frame(e, reply, sizeof(reply));
			}
			myrio_pkt_free(pkts[i]);
		}
		if (!n)
			usleep(1000);
	}
	assert_true(got_arp);
	char want[32];
	snprintf(want, sizeof(want), "%02x:%02x:%02x:%02x:%02x:%02x", e->mac[0], e->mac[1],
		 e->mac[2], e->mac[3], e->mac[4], e->mac[5]);
	int learned = 1;
	for (int i = 0; i < 50 && learned != 0; i++) {
		usleep(50000);
		learned = sh("ip -n %s neigh show %s | grep -q %s", e->ns, DRIVER_IP, want);
	}
	assert_int_equal(learned, 0);
}

/* A datagram from the kernel's socket arrives whole with a checksum that verifies (after
 * the ARP test: the kernel knows our MAC). */
static void kernel_udp_arrives_with_valid_checksum(void **state)
{
	struct env *e = *state;
	assert_int_equal(
	    sh("ip netns exec %s timeout 8 bash -c 'for i in $(seq 40); do "
	       "echo checksum-me >/dev/udp/%s/4321; sleep 0.2; done' >/dev/null 2>&1 &",
	       e->ns, DRIVER_IP),
	    0);
	bool got = false;
	uint64_t end = now_ms() + 8000;
	while (!got && now_ms() < end) {
		struct myrio_pkt *pkts[32];
		uint16_t n = myrio_rx_burst(e->port, pkts, 32);
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *f = myrio_pkt_data(pkts[i]);
			uint32_t len = pkts[i]->len;
			const uint8_t *ip = f + 14;
			if (!got && len >= 42 && get_be16(f + 12) == 0x0800 && ip[9] == 17 &&
			    get_be16(ip + 20 + 2) == 4321) {
				got = true;
				size_t ihl = (ip[0] & 15u) * 4u;
				uint16_t ulen = get_be16(ip + ihl + 4);
				assert_int_equal(ulen, 8 + 12); /* "checksum-me\n" */
				assert_memory_equal(ip + ihl + 8, "checksum-me\n", 12);
				uint8_t ph[12];
				memcpy(ph, ip + 12, 8);
				ph[8] = 0;
				ph[9] = 17;
				put_be16(ph + 10, ulen);
				assert_int_not_equal(get_be16(ip + ihl + 6), 0);
				uint64_t sum = csum_add(csum_add(0, ph, 12), ip + ihl, ulen);
				assert_int_equal(csum_fold(sum), 0xffff);
			}
			myrio_pkt_free(pkts[i]);
		}
		if (!n)
			usleep(1000);
	}
	assert_true(got);
}

int main(void)
{
	if (geteuid() != 0 || access("/dev/net/tun", F_OK) != 0 ||
	    system("command -v tcpdump >/dev/null && command -v ip >/dev/null") != 0) {
		printf("skipped: needs root, /dev/net/tun, ip and tcpdump\n");
		return 77; /* skipped */
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(driver_frame_reaches_tcpdump),
	    cmocka_unit_test(kernel_arp_reaches_driver),
	    cmocka_unit_test(kernel_udp_arrives_with_valid_checksum),
	};
	int failed = cmocka_run_group_tests_name("tap", tests, setup_tap, teardown);
	failed += cmocka_run_group_tests_name("packet", tests, setup_packet, teardown);
	return failed;
}
