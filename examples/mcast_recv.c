/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast receiver: --sockets UDP sockets share one port and each joins every group of
 * --groups; each counts the datagrams it gets (an 8-byte sequence number, then the pattern
 * of common.h), checks their bytes and the sequence per sender. The stack reports the
 * memberships with IGMP and answers the querier of the link.
 *
 *   mcast_recv --ip 10.0.0.2 --groups 239.1.1.1,239.1.1.2 --sockets 2 --count 1000 simd:nic1
 *
 * Prints "joined" once the sockets are in their groups, then a summary; exit status 0 when
 * every socket got --count datagrams, none bad. --count 0 listens the whole --seconds.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

#define MAX_SOCKETS 16
#define MAX_GROUPS 16

struct member {
	struct myrio_udp_sock *u;
	uint64_t got, bad, lost;
	uint32_t from;	   /* the sender whose sequence is followed */
	uint64_t next_seq; /* the sequence number expected next from it */
};

static void take(struct member *m, const uint8_t pattern[PATTERN_MAX], struct myrio_pkt *p,
		 uint32_t from)
{
	const uint8_t *d = myrio_pkt_data(p);
	uint64_t seq;
	if (p->len < sizeof(seq) || !pattern_matches(pattern, d + 8, p->len - 8, 8)) {
		m->bad++;
		return;
	}
	memcpy(&seq, d, sizeof(seq));
	m->got++;
	if (m->from != from) { /* a new sender: follow it from here */
		m->from = from;
		m->next_seq = seq;
	}
	if (seq > m->next_seq)
		m->lost += seq - m->next_seq;
	if (seq >= m->next_seq)
		m->next_seq = seq + 1;
}

static int parse_groups(const char *list, uint32_t *groups)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list);
	int n = 0;
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct in_addr a;
		if (n == MAX_GROUPS || inet_pton(AF_INET, t, &a) != 1)
			return -1;
		groups[n++] = ntohl(a.s_addr);
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned nsock = 1, count = 1000, seconds = 0, port_no = 9100;
	bool spin = false;
	const char *ip_str = "10.0.0.2", *groups_str = "239.1.1.1";
	const struct cli_opt opts[] = {
	    {"ip", 0, .str = &ip_str},	    {"groups", 'g', .str = &groups_str},
	    {"port", 'p', .num = &port_no}, {"sockets", 'k', .num = &nsock},
	    {"count", 'n', .num = &count},  {"seconds", 't', .num = &seconds},
	    {"spin", 0, .flag = &spin},	    {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: mcast_recv [--ip A] [--groups G1,G2...] [--port N] [--sockets K]\n"
		      "                  [--count N] [--seconds S] [--spin] DEVICE\n") < 0)
		return 2;
	uint32_t groups[MAX_GROUPS];
	int ngroups = parse_groups(groups_str, groups);
	struct in_addr ip;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1 || ngroups <= 0 ||
	    nsock == 0 || nsock > MAX_SOCKETS) {
		fprintf(stderr,
			"mcast_recv: give one DEVICE, an address, 1..%d groups and 1..%d "
			"sockets\n",
			MAX_GROUPS, MAX_SOCKETS);
		return 2;
	}
	struct myrio_port *port;
	struct myrio_stack_conf sc;
	if (open_port_for_stack(&port, argv[optind], ntohl(ip.s_addr), &sc) < 0)
		return 1;
	sc.max_udp_socks = nsock;
	struct myrio_stack *s;
	struct idle_wait iw;
	struct member m[MAX_SOCKETS];
	memset(m, 0, sizeof(m));
	if (myrio_stack_create(&s, port, &sc) < 0 || idle_wait_init(&iw, s, port, spin) < 0) {
		fprintf(stderr, "mcast_recv: cannot start on %s\n", argv[optind]);
		return 1;
	}
	for (unsigned i = 0; i < nsock; i++) {
		int rc = myrio_udp_open_shared(s, (uint16_t)port_no, NULL, &m[i].u);
		for (int g = 0; rc == 0 && g < ngroups; g++)
			rc = myrio_udp_join(m[i].u, groups[g]);
		if (rc < 0) {
			fprintf(stderr, "mcast_recv: cannot join: %s\n", strerror(-rc));
			return 1;
		}
	}
	uint8_t pattern[PATTERN_MAX];
	pattern_fill(pattern);
	printf("mcast_recv: joined %s on port %u with %u sockets\n", groups_str, port_no, nsock);
	fflush(stdout);
	uint64_t end = seconds ? now_ns() + seconds * 1000000000ull : UINT64_MAX;
	for (;;) {
		int work = myrio_stack_poll(s);
		bool done = true;
		for (unsigned i = 0; i < nsock; i++) {
			struct myrio_pkt *p;
			uint32_t from;
			while ((p = myrio_udp_recv(m[i].u, &from, NULL)) != NULL) {
				take(&m[i], pattern, p, from);
				myrio_pkt_free(p);
				work++;
			}
			done = done && m[i].got >= count;
		}
		if (stop || (count && done) || now_ns() >= end)
			break;
		idle_wait(&iw, s, work, 100);
	}
	struct myrio_stack_stats st;
	myrio_stack_stats(s, &st);
	int rc = 0;
	printf("summary:");
	for (unsigned i = 0; i < nsock; i++) {
		printf(" socket%u %llu got %llu lost %llu bad;", i, (unsigned long long)m[i].got,
		       (unsigned long long)m[i].lost, (unsigned long long)m[i].bad);
		if (m[i].got < count || m[i].bad)
			rc = 1;
	}
	printf(" igmp_tx %llu igmp_queries_rx %llu igmp_reports_suppressed %llu",
	       (unsigned long long)st.igmp_tx, (unsigned long long)st.igmp_queries_rx,
	       (unsigned long long)st.igmp_reports_suppressed);
	/* where datagrams were lost, if any were: the NIC out of buffers, a socket's queue full */
	struct myrio_port_stats ps;
	if (myrio_port_stats(port, &ps) == 0)
		printf(" nic_rx_missed %llu", (unsigned long long)ps.rx_missed);
	printf(" udp_queue_full %llu", (unsigned long long)st.drop_udp_queue_full);
	/* what the NIC's own filter kept out (groups nobody here joined), where it has one */
	uint64_t filtered;
	if (myrio_port_xstat(port, "dropped_multicast_filtered", &filtered) == 0)
		printf(" nic_dropped_multicast_filtered %llu", (unsigned long long)filtered);
	printf("\n");
	idle_wait_fini(&iw);
	for (unsigned i = 0; i < nsock; i++)
		myrio_udp_close(m[i].u);
	myrio_stack_poll(s);
	myrio_stack_destroy(s);
	myrio_port_close(port); /* the leave reports go out before the NIC stops */
	return rc;
}
