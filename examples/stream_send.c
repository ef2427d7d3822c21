/* SPDX-License-Identifier: BSD-3-Clause */
/* Stream sender: sends a TCP stream (or UDP datagrams) to stream_recv for a while, prints
 * the rate every second and a summary at the end.
 *
 *   stream_send simd:nic0                         TCP, 10 s, to 10.0.0.2:5001
 *   stream_send --udp -s 1472 -d 5 simd:nic0      UDP, 1472-byte datagrams, 5 s
 *   stream_send --mtu 9000 0000:03:00.0           on a board
 *
 * Transmit is zero-copy: the payload is written straight into a buffer of the stack's
 * pool (myrio_stack_pkt_alloc), the stack puts the headers in front of it and the NIC
 * reads that same buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

struct tx {
	struct myrio_tcp_conn *conn;
	bool connected, failed, closed;
	uint8_t pattern[PATTERN_MAX];
};

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct tx *tx = arg;
	if (ev == MYRIO_TCP_EV_CONNECTED)
		tx->connected = true;
	else if (ev == MYRIO_TCP_EV_ERROR)
		tx->failed = true;
	else if (ev == MYRIO_TCP_EV_CLOSED)
		tx->closed = true;
}

int main(int argc, char **argv)
{
	unsigned mtu = 1500, duration = 10, size = 0, port_no = 5001;
	bool udp = false, spin = false;
	const char *ip_str = "10.0.0.1", *peer_str = "10.0.0.2", *pcap = NULL;
	const struct cli_opt opts[] = {
	    {"udp", 'u', .flag = &udp},		 {"spin", 0, .flag = &spin},
	    {"size", 's', .num = &size},	 {"mtu", 'm', .num = &mtu},
	    {"duration", 'd', .num = &duration}, {"ip", 0, .str = &ip_str},
	    {"peer", 0, .str = &peer_str},	 {"port", 0, .num = &port_no},
	    {"pcap", 0, .str = &pcap},		 {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: stream_send [--udp] [-s SIZE] [--mtu N] [--duration S] [--ip A] "
		      "[--peer B] [--port N] [--pcap FILE] [--spin] DEVICE\n") < 0)
		return 2;
	struct in_addr ip, peer;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1 ||
	    inet_pton(AF_INET, peer_str, &peer) != 1) {
		fprintf(stderr, "stream_send: give one DEVICE and valid --ip/--peer\n");
		return 2;
	}
	stop_on_signals();
	static struct tx tx;
	pattern_fill(tx.pattern);

	struct myrio_port *port;
	if (open_port(&port, argv[optind], mtu, pcap) < 0)
		return 1;
	struct myrio_port_info info;
	myrio_port_info(port, &info);
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.ip = ntohl(ip.s_addr);
	sc.netmask = 0xffffff00u;
	/* About as many packets in flight as the NIC's send ring holds (a frame takes one
	 * descriptor per tx_boundary it touches, §5.4, where the NIC has one): a full send queue
	 * (TCP) or an empty pool (UDP) holds the sender back. The ring may still fill (a TSO
	 * request's header takes a descriptor more, and the NIC reports the slots it freed in
	 * its next status update): the stack then keeps the frames for its next poll, and the
	 * NIC has a ring's worth of frames to send meanwhile. */
	uint32_t descs = info.tx_boundary
			     ? (info.max_frame + info.tx_boundary - 1) / info.tx_boundary + 1
			     : 1; /* no boundary: one descriptor a frame */
	uint32_t in_flight = info.tx_ring_entries / descs;
	sc.snd_queue_segs = in_flight;
	if (udp)
		sc.tx_pool_size = in_flight < 64 ? 64 : in_flight;
	sc.tcp_event = on_tcp;
	sc.event_arg = &tx;
	struct myrio_stack *s;
	struct idle_wait iw;
	if (myrio_stack_create(&s, port, &sc) < 0 || idle_wait_init(&iw, s, port, spin) < 0)
		return 1;

	uint32_t dst = ntohl(peer.s_addr);
	struct myrio_udp_sock *u = NULL;
	uint64_t t = now_ns(), deadline = t + 5000000000ull;
	if (udp) {
		/* Resolve the peer's MAC first: datagrams sent meanwhile would wait in the
		 * ARP queue or be dropped. */
		uint8_t mac[6];
		if (myrio_udp_open(s, 0, NULL, &u) < 0 ||
		    myrio_udp_connect(u, dst, (uint16_t)port_no) < 0)
			return 1;
		myrio_arp_announce(s);
		while (myrio_arp_lookup(s, dst, mac) < 0 && !stop && (t = now_ns()) < deadline) {
			struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
			if (p) { /* a zero-length datagram triggers the ARP request */
				myrio_udp_send(u, p);
			}
			for (uint64_t t0 = now_ns(); now_ns() - t0 < 100000000ull;)
				myrio_stack_poll(s);
		}
	} else {
		/* The receiver may not be listening yet: retry refused connections. */
		while (!tx.connected && !stop && (t = now_ns()) < deadline) {
			tx.failed = false;
			if (myrio_tcp_connect(s, dst, (uint16_t)port_no, NULL, &tx.conn) < 0)
				return 1;
			while (!tx.connected && !tx.failed && now_ns() < deadline)
				myrio_stack_poll(s);
			if (!tx.connected) {
				myrio_tcp_close(tx.conn);
				for (uint64_t t0 = now_ns(); now_ns() - t0 < 200000000ull;)
					myrio_stack_poll(s);
			}
		}
	}
	if (t >= deadline || stop) {
		fprintf(stderr, "stream_send: peer %s not reachable on %s within 5 s\n", peer_str,
			argv[optind]);
		return 1;
	}
	/* The peer decides the MSS: a message is also bounded by what a buffer holds. */
	uint32_t room = myrio_stack_pkt_room(s);
	uint32_t limit = udp ? mtu - 28 : myrio_tcp_mss(tx.conn);
	if (limit > room)
		limit = room;
	if (!size)
		size = limit;
	if (size > limit || (udp && size < 8)) {
		fprintf(stderr, "stream_send: message size %u does not fit the MTU %u\n", size,
			mtu);
		return 2;
	}
	printf("stream_send: %s to %s:%u, %u-byte messages, MTU %u, %u s\n", udp ? "UDP" : "TCP",
	       peer_str, port_no, size, mtu, duration);
	fflush(stdout);

	uint64_t bytes = 0, msgs = 0, seq = 0, last_bytes = 0;
	uint64_t start = now_ns(), last = start, end = start + duration * 1000000000ull;
	while (!stop && (t = now_ns()) < end && !tx.failed) {
		uint64_t msgs_before = msgs;
		for (int i = 0; i < 32; i++) {
			if (!udp && myrio_tcp_send_space(tx.conn) == 0)
				break;
			struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
			if (!p)
				break; /* all buffers in flight: poll to get some back */
			uint8_t *d = myrio_pkt_data(p);
			if (udp) {
				memcpy(d, &seq, sizeof(seq));
				memcpy(d + 8, tx.pattern + 8, size - 8);
			} else {
				memcpy(d, tx.pattern + bytes % PATTERN_LEN, size);
			}
			p->len = size;
			int rc = udp ? myrio_udp_send(u, p) : myrio_tcp_send(tx.conn, p);
			if (rc < 0) {
				myrio_pkt_free(p);
				break;
			}
			seq++;
			msgs++;
			bytes += size;
		}
		/* TCP waits for ACKs (frames: they wake it); UDP waits for the NIC to finish
		 * sends, which raises no interrupt, so it keeps polling. */
		int work = myrio_stack_poll(s) + (int)(msgs - msgs_before) + udp;
		idle_wait(&iw, s, work, 100);
		if (t - last >= 1000000000ull) {
			printf("%6.1f s %8.3f Gb/s\n", (t - start) / 1e9,
			       (bytes - last_bytes) * 8 / ((t - last) / 1e9) / 1e9);
			fflush(stdout);
			last = t;
			last_bytes = bytes;
		}
	}
	double secs = (now_ns() - start) / 1e9;
	struct myrio_stack_stats st;
	myrio_stack_stats(s, &st);
	if (!udp) { /* wait until everything is acknowledged, then close */
		myrio_tcp_shutdown(tx.conn);
		for (deadline = now_ns() + 3000000000ull;
		     !tx.closed && !tx.failed && myrio_tcp_unacked(tx.conn) && now_ns() < deadline;)
			myrio_stack_poll(s);
		secs = (now_ns() - start) / 1e9;
	}
	printf("summary: %llu bytes in %llu messages in %.2f s = %.3f Gb/s, %llu retransmits, "
	       "%llu flushes found the send ring full (frames kept), %llu frames dropped\n",
	       (unsigned long long)bytes, (unsigned long long)msgs, secs, bytes * 8 / secs / 1e9,
	       (unsigned long long)st.tcp_retransmits, (unsigned long long)st.tx_ring_full,
	       (unsigned long long)st.tx_dropped_full);
	if (tx.conn)
		myrio_tcp_close(tx.conn);
	for (int i = 0; i < 1000; i++)
		myrio_stack_poll(s);
	if (u)
		myrio_udp_close(u);
	idle_wait_fini(&iw);
	myrio_stack_destroy(s);
	myrio_port_close(port);
	return tx.failed || bytes == 0;
}
