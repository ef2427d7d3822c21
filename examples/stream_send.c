/* SPDX-License-Identifier: BSD-3-Clause */
/* Stream sender: sends a TCP stream (or UDP datagrams) to stream_recv for a while, prints
 * the rate every second and a summary at the end.
 *
 *   stream_send simd:nic0                         TCP, 10 s, to 10.0.0.2:5001
 *   stream_send --udp -s 1472 -d 5 simd:nic0      UDP, 1472-byte datagrams, 5 s
 *   stream_send --mtu 9000 0000:03:00.0           on a board
 *   stream_send -T 4 sim:sim0                     4 queues, 4 threads, a stream each
 *
 * Transmit is zero-copy: the payload is written straight into a buffer of the stack's
 * pool (myrio_stack_pkt_alloc), the stack puts the headers in front of it and the NIC
 * reads that same buffer.
 *
 * With -T N (TCP) the port opens N queues (the NIC's slices) and N threads each run a stack
 * on one queue with one connection: the stack picks a source port whose RSS hash brings
 * the peer's answers back to its own queue, so no two threads share anything on the way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

/* What every sending thread shares: the options, read only once the threads run. */
static struct {
	bool udp, spin;
	unsigned mtu, duration, size, port_no;
	uint32_t dst;
	const char *peer_str, *dev;
	uint8_t pattern[PATTERN_MAX];
	_Atomic uint64_t bytes; /* all threads', for the per-second line */
} run;

/* One sending thread: a stack on its queue and its stream. */
struct tx {
	struct myrio_port *port;
	uint16_t q;
	struct myrio_stack *s;
	struct idle_wait iw;
	struct myrio_tcp_conn *conn;
	struct myrio_udp_sock *u;
	bool connected, failed, closed;
	uint64_t bytes, msgs, retransmits, ring_full, dropped;
	uint64_t start, end; /* of the sending, until all was acknowledged */
	int rc;		     /* 0, 1: failed, 2: bad options */
	pthread_t th;
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

/* A stack on tx's queue: of a port of several queues, each made with
 * myrio_stack_create_queue, siblings of the first. */
static int tx_start(struct tx *tx, unsigned queues, struct myrio_stack *first, uint32_t ip)
{
	struct myrio_port_info info;
	myrio_port_info(tx->port, &info);
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.ip = ip;
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
	if (run.udp)
		sc.tx_pool_size = in_flight < 64 ? 64 : in_flight;
	sc.tcp_event = on_tcp;
	sc.event_arg = tx;
	int rc = queues > 1 ? myrio_stack_create_queue(&tx->s, tx->port, tx->q, &sc, first)
			    : myrio_stack_create(&tx->s, tx->port, &sc);
	if (rc < 0 || idle_wait_init(&tx->iw, tx->s, tx->port, run.spin) < 0)
		return -1;
	return 0;
}

/* Reaches the peer: resolves its MAC (UDP) or connects, retrying refusals (the receiver
 * may not be listening yet). */
static int tx_reach(struct tx *tx)
{
	struct myrio_stack *s = tx->s;
	uint64_t t = now_ns(), deadline = t + 5000000000ull;
	if (run.udp) {
		/* Resolve the peer's MAC first: datagrams sent meanwhile would wait in the
		 * ARP queue or be dropped. */
		uint8_t mac[6];
		if (myrio_udp_open(s, 0, NULL, &tx->u) < 0 ||
		    myrio_udp_connect(tx->u, run.dst, (uint16_t)run.port_no) < 0)
			return -1;
		myrio_arp_announce(s);
		while (myrio_arp_lookup(s, run.dst, mac) < 0 && !stop &&
		       (t = now_ns()) < deadline) {
			/* a zero-length datagram triggers the ARP request */
			struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
			if (p && myrio_udp_send(tx->u, p) < 0)
				myrio_pkt_free(p); /* refused: still ours */
			for (uint64_t t0 = now_ns(); now_ns() - t0 < 100000000ull;)
				myrio_stack_poll(s);
		}
	} else {
		while (!tx->connected && !stop && (t = now_ns()) < deadline) {
			tx->failed = false;
			if (myrio_tcp_connect(s, run.dst, (uint16_t)run.port_no, NULL, &tx->conn) <
			    0)
				return -1;
			while (!tx->connected && !tx->failed && now_ns() < deadline)
				myrio_stack_poll(s);
			if (!tx->connected) {
				myrio_tcp_close(tx->conn);
				for (uint64_t t0 = now_ns(); now_ns() - t0 < 200000000ull;)
					myrio_stack_poll(s);
			}
		}
	}
	if (t >= deadline || stop) {
		fprintf(stderr, "stream_send: peer %s not reachable on %s within 5 s\n",
			run.peer_str, run.dev);
		return -1;
	}
	return 0;
}

/* Sends for the run's duration; thread 0 prints the rate of all every second. */
static void tx_send(struct tx *tx, uint32_t size)
{
	struct myrio_stack *s = tx->s;
	uint64_t seq = 0, last_bytes = 0, t;
	uint64_t start = now_ns(), last = start, end = start + run.duration * 1000000000ull;
	tx->start = start;
	while (!stop && (t = now_ns()) < end && !tx->failed) {
		uint64_t msgs_before = tx->msgs;
		for (int i = 0; i < 32; i++) {
			if (!run.udp && myrio_tcp_send_space(tx->conn) == 0)
				break;
			struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
			if (!p)
				break; /* all buffers in flight: poll to get some back */
			uint8_t *d = myrio_pkt_data(p);
			if (run.udp) {
				memcpy(d, &seq, sizeof(seq));
				memcpy(d + 8, run.pattern + 8, size - 8);
			} else {
				memcpy(d, run.pattern + tx->bytes % PATTERN_LEN, size);
			}
			p->len = size;
			int rc = run.udp ? myrio_udp_send(tx->u, p) : myrio_tcp_send(tx->conn, p);
			if (rc < 0) {
				myrio_pkt_free(p);
				break;
			}
			seq++;
			tx->msgs++;
			tx->bytes += size;
		}
		atomic_fetch_add_explicit(&run.bytes, (tx->msgs - msgs_before) * size,
					  memory_order_relaxed);
		/* TCP waits for ACKs (frames: they wake it); UDP waits for the NIC to finish
		 * sends, which raises no interrupt, so it keeps polling. */
		int work = myrio_stack_poll(s) + (int)(tx->msgs - msgs_before) + run.udp;
		idle_wait(&tx->iw, s, work, 100);
		if (tx->q == 0 && t - last >= 1000000000ull) {
			uint64_t all = atomic_load_explicit(&run.bytes, memory_order_relaxed);
			printf("%6.1f s %8.3f Gb/s\n", (t - start) / 1e9,
			       (all - last_bytes) * 8 / ((t - last) / 1e9) / 1e9);
			fflush(stdout);
			last = t;
			last_bytes = all;
		}
	}
}

static void *tx_run(void *arg)
{
	struct tx *tx = arg;
	tx->rc = 1;
	if (tx_reach(tx) < 0)
		return NULL;
	struct myrio_stack *s = tx->s;
	/* The peer decides the MSS: a message is also bounded by what a buffer holds. */
	uint32_t room = myrio_stack_pkt_room(s);
	uint32_t limit = run.udp ? run.mtu - 28 : myrio_tcp_mss(tx->conn);
	if (limit > room)
		limit = room;
	uint32_t size = run.size ? run.size : limit;
	if (size > limit || (run.udp && size < 8)) {
		fprintf(stderr, "stream_send: message size %u does not fit the MTU %u\n", size,
			run.mtu);
		tx->rc = 2;
		return NULL;
	}
	if (tx->q == 0) {
		printf("stream_send: %s to %s:%u, %u-byte messages, MTU %u, %u s\n",
		       run.udp ? "UDP" : "TCP", run.peer_str, run.port_no, size, run.mtu,
		       run.duration);
		fflush(stdout);
	}
	tx_send(tx, size);
	if (!run.udp) { /* wait until everything is acknowledged, then close */
		myrio_tcp_shutdown(tx->conn);
		for (uint64_t deadline = now_ns() + 3000000000ull; !tx->closed && !tx->failed &&
								   myrio_tcp_unacked(tx->conn) &&
								   now_ns() < deadline;)
			myrio_stack_poll(s);
	}
	tx->end = now_ns();
	struct myrio_stack_stats st;
	myrio_stack_stats(s, &st);
	tx->retransmits = st.tcp_retransmits;
	tx->ring_full = st.tx_ring_full;
	tx->dropped = st.tx_dropped_full;
	if (tx->conn)
		myrio_tcp_close(tx->conn);
	for (int i = 0; i < 1000; i++)
		myrio_stack_poll(s);
	tx->rc = tx->failed || tx->bytes == 0;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = 1, coal_us = STREAM_COAL_US;
	run.mtu = 1500;
	run.duration = 10;
	run.port_no = 5001;
	const char *ip_str = "10.0.0.1", *pcap = NULL;
	run.peer_str = "10.0.0.2";
	const struct cli_opt opts[] = {{"udp", 'u', .flag = &run.udp},
				       {"spin", 0, .flag = &run.spin},
				       {"coal", 0, .num = &coal_us},
				       {"size", 's', .num = &run.size},
				       {"mtu", 'm', .num = &run.mtu},
				       {"duration", 'd', .num = &run.duration},
				       {"threads", 'T', .num = &threads},
				       {"ip", 0, .str = &ip_str},
				       {"peer", 0, .str = &run.peer_str},
				       {"port", 0, .num = &run.port_no},
				       {"pcap", 0, .str = &pcap},
				       {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: stream_send [--udp] [-s SIZE] [--mtu N] [--duration S] [-T THREADS] "
		      "[--ip A] [--peer B] [--port N] [--pcap FILE] [--spin] [--coal US] DEVICE\n") < 0)
		return 2;
	struct in_addr ip, peer;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1 ||
	    inet_pton(AF_INET, run.peer_str, &peer) != 1) {
		fprintf(stderr, "stream_send: give one DEVICE and valid --ip/--peer\n");
		return 2;
	}
	if (threads < 1 || threads > 16 || (threads > 1 && run.udp)) {
		fprintf(stderr, "stream_send: -T takes 1..16 threads, with TCP\n");
		return 2;
	}
	run.dev = argv[optind];
	run.dst = ntohl(peer.s_addr);
	stop_on_signals();
	pattern_fill(run.pattern);

	struct myrio_port *port;
	if (open_port_queues(&port, run.dev, run.mtu, pcap, threads, coal_us) < 0)
		return 1;
	static struct tx tx[16];
	for (unsigned q = 0; q < threads; q++) {
		tx[q].port = port;
		tx[q].q = (uint16_t)q;
		if (tx_start(&tx[q], threads, q ? tx[0].s : NULL, ntohl(ip.s_addr)) < 0)
			return 1;
	}
	for (unsigned q = 1; q < threads; q++)
		if (pthread_create(&tx[q].th, NULL, tx_run, &tx[q]) != 0)
			return 1;
	tx_run(&tx[0]);
	int rc = 0;
	uint64_t bytes = 0, msgs = 0, retrans = 0, ring_full = 0, dropped = 0;
	uint64_t start = UINT64_MAX, end = 0;
	for (unsigned q = 0; q < threads; q++) {
		if (q)
			pthread_join(tx[q].th, NULL);
		rc = rc > tx[q].rc ? rc : tx[q].rc;
		bytes += tx[q].bytes;
		msgs += tx[q].msgs;
		retrans += tx[q].retransmits;
		ring_full += tx[q].ring_full;
		dropped += tx[q].dropped;
		if (tx[q].start && tx[q].start < start)
			start = tx[q].start;
		end = tx[q].end > end ? tx[q].end : end;
		if (threads > 1)
			printf("queue %u: %llu bytes\n", q, (unsigned long long)tx[q].bytes);
	}
	double secs = end > start ? (end - start) / 1e9 : 0;
	if (rc != 2)
		printf("summary: %llu bytes in %llu messages in %.2f s = %.3f Gb/s, %llu "
		       "retransmits, %llu flushes found the send ring full (frames kept), %llu "
		       "frames dropped\n",
		       (unsigned long long)bytes, (unsigned long long)msgs, secs,
		       secs > 0 ? bytes * 8 / secs / 1e9 : 0.0, (unsigned long long)retrans,
		       (unsigned long long)ring_full, (unsigned long long)dropped);
	for (unsigned q = threads; q-- > 0;) {
		if (tx[q].u)
			myrio_udp_close(tx[q].u);
		idle_wait_fini(&tx[q].iw);
		myrio_stack_destroy(tx[q].s);
	}
	myrio_port_close(port);
	return rc;
}
