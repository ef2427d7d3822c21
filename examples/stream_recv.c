/* SPDX-License-Identifier: BSD-3-Clause */
/* Stream receiver: accepts one TCP stream (or receives UDP datagrams) from stream_send,
 * checks every byte against the sender's pattern, prints the rate every second and a
 * summary at the end.
 *
 *   stream_recv simd:nic1                      TCP on 10.0.0.2:5001 (model daemon's NIC)
 *   stream_recv --udp --mtu 9000 0000:03:00.0  UDP on a board
 *
 * When no frame comes it sleeps on the stack's fd (common.h's idle_wait); --spin polls busily.
 *
 * Receive is zero-copy: the stack hands out the buffers the NIC wrote (myrio_tcp_recv,
 * myrio_udp_recv) and the program gives them back when it has looked at them.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

struct rx {
	struct myrio_tcp_conn *conn;
	bool closed;
	uint8_t pattern[PATTERN_MAX]; /* byte i of the stream is pattern[i % PATTERN_LEN] */
	uint64_t bytes, pkts, bad, lost, next_seq;
};

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct rx *rx = arg;
	if (ev == MYRIO_TCP_EV_ACCEPTED && !rx->conn)
		rx->conn = c;
	else if (ev == MYRIO_TCP_EV_ACCEPTED)
		myrio_tcp_abort(c); /* one stream at a time */
	else if ((ev == MYRIO_TCP_EV_CLOSED || ev == MYRIO_TCP_EV_ERROR) && c == rx->conn)
		rx->closed = true;
}

/* The TCP payload continues the pattern where the previous segment stopped. */
static void check_tcp(struct rx *rx, const uint8_t *data, uint32_t len)
{
	if (!pattern_matches(rx->pattern, data, len, rx->bytes))
		rx->bad++;
	rx->bytes += len;
	rx->pkts++;
}

/* A datagram: 8-byte sequence number, then the pattern from offset 8. */
static void check_udp(struct rx *rx, const uint8_t *data, uint32_t len)
{
	uint64_t seq;
	if (len == 0)
		return; /* the sender's probe while it resolves our MAC */
	if (len < sizeof(seq) || !pattern_matches(rx->pattern, data + 8, len - 8, 8)) {
		rx->bad++;
		return;
	}
	memcpy(&seq, data, sizeof(seq));
	if (seq > rx->next_seq)
		rx->lost += seq - rx->next_seq;
	if (seq >= rx->next_seq)
		rx->next_seq = seq + 1;
	rx->bytes += len;
	rx->pkts++;
}

int main(int argc, char **argv)
{
	unsigned mtu = 1500, duration = 0, port_no = 5001;
	bool udp = false, spin = false;
	const char *ip_str = "10.0.0.2", *pcap = NULL;
	const struct cli_opt opts[] = {
	    {"udp", 'u', .flag = &udp}, {"spin", 0, .flag = &spin},
	    {"mtu", 'm', .num = &mtu},	{"duration", 'd', .num = &duration},
	    {"ip", 0, .str = &ip_str},	{"port", 0, .num = &port_no},
	    {"pcap", 0, .str = &pcap},	{0}};
	if (cli_parse(argc, argv, opts,
		      "usage: stream_recv [--udp] [--mtu N] [--duration S] [--ip A] [--port N] "
		      "[--pcap FILE] [--spin] DEVICE\n") < 0)
		return 2;
	struct in_addr ip;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1) {
		fprintf(stderr, "stream_recv: give one DEVICE (simd:nic1, 0000:03:00.0) and a "
				"valid --ip\n");
		return 2;
	}
	stop_on_signals();

	static struct rx rx;
	pattern_fill(rx.pattern);

	struct myrio_port *port;
	if (open_port(&port, argv[optind], mtu, pcap) < 0)
		return 1;
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.ip = ntohl(ip.s_addr);
	sc.netmask = 0xffffff00u;
	sc.rcv_buf = 4u << 20; /* enough window for 10 Gb/s over the model's round trip */
	sc.tcp_event = on_tcp;
	sc.event_arg = &rx;
	struct myrio_stack *s;
	if (myrio_stack_create(&s, port, &sc) < 0)
		return 1;
	struct myrio_tcp_listener *l = NULL;
	struct myrio_udp_sock *u = NULL;
	int rc = udp ? myrio_udp_open(s, (uint16_t)port_no, NULL, &u)
		     : myrio_tcp_listen(s, (uint16_t)port_no, 4, NULL, &l);
	struct idle_wait iw;
	if (rc < 0 || idle_wait_init(&iw, s, port, spin) < 0)
		return 1;
	printf("stream_recv: %s on %s:%u (%s), MTU %u\n", udp ? "UDP" : "TCP", ip_str, port_no,
	       argv[optind], mtu);
	fflush(stdout);

	uint64_t start = 0, last = 0, last_bytes = 0, last_pkts = 0, last_rx = 0;
	while (!stop) {
		int work = myrio_stack_poll(s);
		idle_wait(&iw, s, work, 100); /* the checks below want the time now and then */
		uint64_t t = now_ns();
		struct myrio_pkt *p;
		if (udp) {
			while ((p = myrio_udp_recv(u, NULL, NULL)) != NULL) {
				check_udp(&rx, myrio_pkt_data(p), p->len);
				myrio_pkt_free(p);
				last_rx = t;
			}
		} else if (rx.conn) {
			while ((p = myrio_tcp_recv(rx.conn)) != NULL) {
				check_tcp(&rx, myrio_pkt_data(p), p->len);
				myrio_tcp_release(rx.conn, p);
			}
			if (myrio_tcp_eof(rx.conn) || rx.closed)
				break;
		}
		if (!start && rx.bytes)
			start = last = t;
		if (start && t - last >= 1000000000ull) {
			double dt = (t - last) / 1e9;
			printf("%6.1f s %8.3f Gb/s %10.0f pkts/s\n", (t - start) / 1e9,
			       (rx.bytes - last_bytes) * 8 / dt / 1e9, (rx.pkts - last_pkts) / dt);
			fflush(stdout);
			last = t;
			last_bytes = rx.bytes;
			last_pkts = rx.pkts;
		}
		if (udp && last_rx && t - last_rx > 1000000000ull)
			break; /* the sender stopped a second ago */
		if (duration && start && t - start > duration * 1000000000ull)
			break;
	}
	uint64_t end = udp && last_rx ? last_rx : now_ns();
	double secs = start ? (end - start) / 1e9 : 0;
	printf("summary: %llu bytes in %llu %s in %.2f s = %.3f Gb/s, %llu bad, %llu lost\n",
	       (unsigned long long)rx.bytes, (unsigned long long)rx.pkts,
	       udp ? "datagrams" : "segments", secs, secs > 0 ? rx.bytes * 8 / secs / 1e9 : 0.0,
	       (unsigned long long)rx.bad, (unsigned long long)rx.lost);
	if (rx.conn)
		myrio_tcp_close(rx.conn);
	for (int i = 0; i < 1000; i++)
		myrio_stack_poll(s); /* let the close go out */
	if (u)
		myrio_udp_close(u);
	if (l)
		myrio_tcp_listener_close(l);
	idle_wait_fini(&iw);
	myrio_stack_destroy(s);
	myrio_port_close(port);
	return rx.bytes == 0 || rx.bad != 0;
}
