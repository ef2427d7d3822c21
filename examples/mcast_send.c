/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast sender: --count datagrams (an 8-byte sequence number, then the pattern of
 * common.h) to a group, at most --rate a second, with the TTL of --ttl (1: this link).
 *
 *   mcast_send --ip 10.0.0.1 --group 239.1.1.1 --count 1000 --rate 10000 simd:nic0
 *
 * No membership is needed to send; nothing sent is looped back to this host.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

int main(int argc, char **argv)
{
	unsigned count = 1000, rate = 10000, size = 64, ttl = 1, port_no = 9100;
	const char *ip_str = "10.0.0.1", *group_str = "239.1.1.1";
	const struct cli_opt opts[] = {
	    {"ip", 0, .str = &ip_str},	    {"group", 'g', .str = &group_str},
	    {"port", 'p', .num = &port_no}, {"count", 'n', .num = &count},
	    {"rate", 'r', .num = &rate},    {"size", 's', .num = &size},
	    {"ttl", 0, .num = &ttl},	    {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: mcast_send [--ip A] [--group G] [--port N] [--count N] [--rate PPS]\n"
		      "                  [--size BYTES] [--ttl N] DEVICE\n") < 0)
		return 2;
	struct in_addr ip, group;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1 ||
	    inet_pton(AF_INET, group_str, &group) != 1 || size < 8 || size > 1472 || ttl > 255) {
		fprintf(stderr, "mcast_send: give one DEVICE, addresses, a size of 8..1472 and a "
				"TTL up to 255\n");
		return 2;
	}
	struct myrio_port *port;
	struct myrio_stack_conf sc;
	if (open_port_for_stack(&port, argv[optind], ntohl(ip.s_addr), &sc) < 0)
		return 1;
	struct myrio_stack *s;
	struct myrio_udp_sock *u;
	if (myrio_stack_create(&s, port, &sc) < 0 || myrio_udp_open(s, 0, NULL, &u) < 0) {
		fprintf(stderr, "mcast_send: cannot start on %s\n", argv[optind]);
		return 1;
	}
	myrio_udp_set_mcast_ttl(u, (uint8_t)ttl);
	uint8_t pattern[PATTERN_MAX], d[1472];
	pattern_fill(pattern);
	memcpy(d + 8, pattern + 8, size - 8);
	uint32_t dst = ntohl(group.s_addr);
	uint64_t t0 = now_ns(), sent = 0, refused = 0;
	while (!stop && sent < count) {
		myrio_stack_poll(s);
		/* at most rate a second: datagram i goes at t0 + i / rate */
		if (rate && (now_ns() - t0) * rate < sent * 1000000000ull)
			continue;
		memcpy(d, &sent, sizeof(sent));
		int rc = myrio_udp_sendto_copy(u, d, size, dst, (uint16_t)port_no);
		if (rc == -EAGAIN || rc == -ENOBUFS) {
			refused++; /* the send ring or the transmit pool full: after a poll */
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "mcast_send: send to %s: %s\n", group_str, strerror(-rc));
			break;
		}
		sent++;
	}
	myrio_stack_poll(s); /* the last batch to the NIC; destroy waits for it to be sent */
	printf("summary: %llu datagrams to %s:%u, %llu refused for a while (a full send ring "
	       "or pool), %.3f s\n",
	       (unsigned long long)sent, group_str, port_no, (unsigned long long)refused,
	       (now_ns() - t0) / 1e9);
	myrio_udp_close(u);
	myrio_stack_destroy(s);
	myrio_port_close(port);
	return sent == count ? 0 : 1;
}
