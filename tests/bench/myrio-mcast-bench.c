/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast receive on a port of two queues, one stack each, for instruction counts
 * (bench/stack_cost.sh mcast): a stepped model, port A with two stacks, a raw peer B
 * sending 64-byte datagrams to one group. Every datagram lands on queue 0 (the group is
 * chosen so); "local": the group's one member socket is on stack 0; "handed": one member on
 * each stack, so stack 0 keeps one copy and hands the other to stack 1.
 *
 *   myrio-mcast-bench local|handed [-n DATAGRAMS]
 *
 * Prints the datagrams the member sockets received; callgrind counts eth_input (the
 * receive path from Ethernet to the socket, hand-off included) and share_inbox_run (a
 * sibling taking what was handed over).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../integration/ipv4_frame.h"
#include "myrio/myrio.h"
#include "myrio/sim.h"
#include "myrio/tcp_lite.h"
#include "tcp_lite/igmp.h"
#include "util/byteorder.h"

#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define PORT 5000
#define BURST 32

static struct myrio_sim *sim;
static struct myrio_port *pa, *pb;
static struct myrio_stack *st[2];
static struct myrio_pool *pool;
static uint8_t mac_b[6];

static uint64_t sim_clock(void *arg)
{
	return myrio_sim_now_ns(arg);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "myrio-mcast-bench: %s: %d\n", what, rc);
	exit(1);
}

static void round_trip(void)
{
	myrio_sim_step(sim, 4);
	myrio_stack_poll(st[0]);
	myrio_stack_poll(st[1]);
	struct myrio_pkt *in[BURST];
	myrio_pkt_free_bulk(in, myrio_rx_burst(pb, in, BURST));
}

/* The IGMP reports A sends are read and dropped by round_trip. */
static void frame(struct myrio_pkt *p, uint32_t group, uint16_t seq)
{
	uint8_t *d = myrio_pkt_data(p), mc[6];
	ipv4_mcast_mac(group, mc);
	uint8_t *u = ipv4_frame(d, mc, mac_b, 17, 20 + 8 + 64, IP_B, group, 0);
	put_be16(u, PORT);
	put_be16(u + 2, PORT);
	put_be16(u + 4, 8 + 64);
	put_be16(u + 6, 0);
	memset(u + 8, 0, 64);
	put_be16(u + 8, seq);
	p->len = 14 + 20 + 8 + 64;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "local") && strcmp(argv[1], "handed"))) {
		fprintf(stderr, "usage: myrio-mcast-bench local|handed [-n DATAGRAMS]\n");
		return 2;
	}
	bool handed = strcmp(argv[1], "handed") == 0;
	unsigned n = 20000;
	optind = 2;
	for (int c; (c = getopt(argc, argv, "n:")) != -1;)
		if (c == 'n')
			n = (unsigned)strtoul(optarg, NULL, 0);
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	int rc = myrio_sim_conf_parse(&sc, "stepped,nics=2,eeprom_fw=rss,link=unlimited");
	if (rc == 0)
		rc = myrio_sim_create(&sim, &sc);
	if (rc < 0)
		die("model", rc);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = sim;
	if ((rc = myrio_port_open_queues(&pa, "sim:sim0", &pc, 2)) < 0)
		die("port A", rc);
	pc.promisc = true;
	if ((rc = myrio_port_open(&pb, "sim:sim1", &pc)) < 0 ||
	    (rc = myrio_port_pool_create(pb, 512, 2048, &pool)) < 0)
		die("port B", rc);
	struct myrio_port_info info;
	myrio_port_info(pb, &info);
	memcpy(mac_b, info.mac, 6);
	struct myrio_stack_conf c;
	myrio_stack_conf_init(&c);
	c.ip = IP_A;
	c.netmask = 0xffffff00u;
	c.clock = sim_clock;
	c.clock_arg = sim;
	if ((rc = myrio_stack_create_queue(&st[0], pa, 0, &c, NULL)) < 0 ||
	    (rc = myrio_stack_create_queue(&st[1], pa, 1, &c, st[0])) < 0)
		die("stacks", rc);
	uint32_t group = 0;
	for (uint32_t k = 1; k < 1000 && !group; k++)
		if (myrio_port_rss_flow_queue(pa, 17, htonl(IP_B), htonl(0xef090000u + k),
					      htons(PORT), htons(PORT), NULL) == 0)
			group = 0xef090000u + k;
	struct myrio_udp_sock *u[2] = {NULL, NULL};
	for (int k = 0; k < (handed ? 2 : 1); k++)
		if ((rc = myrio_udp_open_shared(st[k], PORT, NULL, &u[k])) < 0 ||
		    (rc = myrio_udp_join(u[k], group)) < 0)
			die("member", rc);
	for (int i = 0; i < 200; i++)
		round_trip();
	unsigned sent = 0, got = 0;
	while (sent < n) {
		struct myrio_pkt *out[BURST];
		unsigned k = n - sent < BURST ? n - sent : BURST;
		k = myrio_pkt_alloc_bulk(pool, out, k) ? k : 0;
		for (unsigned i = 0; i < k; i++)
			frame(out[i], group, (uint16_t)(sent + i));
		uint16_t taken = myrio_tx_burst(pb, out, (uint16_t)k);
		myrio_pkt_free_bulk(out + taken, (uint16_t)(k - taken));
		sent += taken;
		for (int r = 0; r < 4; r++)
			round_trip();
		for (int m = 0; m < 2; m++) {
			struct myrio_pkt *p;
			while (u[m] && (p = myrio_udp_recv(u[m], NULL, NULL)) != NULL) {
				myrio_pkt_free(p);
				got++;
			}
		}
	}
	printf("%u datagrams sent, %u received by %d member%s\n", sent, got, handed ? 2 : 1,
	       handed ? "s" : "");
	for (int k = 0; k < 2; k++) {
		myrio_udp_close(u[k]);
		myrio_stack_destroy(st[k]);
	}
	myrio_pool_destroy(pool);
	myrio_port_close(pb);
	myrio_port_close(pa);
	myrio_sim_destroy(sim);
	return 0;
}
