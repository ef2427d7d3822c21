/* SPDX-License-Identifier: BSD-3-Clause */
/* Stream receiver: accepts one TCP stream (or receives UDP datagrams) from stream_send,
 * checks every byte against the sender's pattern, prints the rate every second and a
 * summary at the end.
 *
 *   stream_recv simd:nic1                      TCP on 10.0.0.2:5001 (model daemon's NIC)
 *   stream_recv --udp --mtu 9000 0000:03:00.0  UDP on a board
 *   stream_recv -T 4 sim:sim1                  4 queues, 4 threads, any number of streams
 *
 * When no frame comes it sleeps on the stack's fd (common.h's idle_wait); --spin polls busily.
 *
 * Receive is zero-copy: the stack hands out the buffers the NIC wrote (myrio_tcp_recv,
 * myrio_udp_recv) and the program gives them back when it has looked at them.
 *
 * With -T N (TCP) the port opens N queues and N threads each run a stack listening on one
 * queue: a stream is accepted by the stack of the queue its RSS hash names, and checked
 * there. It ends when every stream accepted has ended and none came for half a second.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

#define STREAMS_MAX 64 /* per thread */

/* One stream: byte i of it is pattern[i % PATTERN_LEN]. */
struct stream {
	struct myrio_tcp_conn *conn;
	uint64_t bytes;
	bool ended;
};

/* What every thread shares. */
static struct {
	bool udp, spin;
	unsigned duration, threads;
	uint8_t pattern[PATTERN_MAX];
	_Atomic uint64_t bytes, pkts; /* all threads', for the per-second line */
	_Atomic unsigned accepted, ended;
	_Atomic uint64_t last_accept, start;
} run;

/* One receiving thread: a stack on its queue and the streams that landed there. */
struct rx {
	struct myrio_port *port;
	uint16_t q;
	struct myrio_stack *s;
	struct idle_wait iw;
	struct myrio_tcp_listener *l;
	struct myrio_udp_sock *u;
	struct stream st[STREAMS_MAX];
	unsigned n;
	uint64_t bytes, pkts, bad, lost, next_seq, last_rx;
	pthread_t th;
};

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct rx *rx = arg;
	if (ev != MYRIO_TCP_EV_ACCEPTED)
		return;
	/* one stream at a time, unless -T */
	if (rx->n == STREAMS_MAX || (run.threads == 1 && atomic_load(&run.accepted))) {
		myrio_tcp_abort(c);
		return;
	}
	rx->st[rx->n++] = (struct stream){.conn = c};
	atomic_store(&run.last_accept, now_ns());
	atomic_fetch_add(&run.accepted, 1);
}

/* The TCP payload continues the pattern where the previous segment stopped. */
static void check_tcp(struct rx *rx, struct stream *st, const uint8_t *data, uint32_t len)
{
	if (!pattern_matches(run.pattern, data, len, st->bytes))
		rx->bad++;
	st->bytes += len;
	rx->bytes += len;
	rx->pkts++;
}

/* A datagram: 8-byte sequence number, then the pattern from offset 8. */
static void check_udp(struct rx *rx, const uint8_t *data, uint32_t len)
{
	uint64_t seq;
	if (len == 0)
		return; /* the sender's probe while it resolves our MAC */
	if (len < sizeof(seq) || !pattern_matches(run.pattern, data + 8, len - 8, 8)) {
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

/* Every stream accepted has ended (and with -T, none came for half a second). */
static bool all_ended(uint64_t t)
{
	unsigned a = atomic_load(&run.accepted);
	if (!a || atomic_load(&run.ended) != a)
		return false;
	return run.threads == 1 || t - atomic_load(&run.last_accept) > 500000000ull;
}

static int rx_work(struct rx *rx, uint64_t t)
{
	struct myrio_pkt *p;
	int n = 0;
	if (rx->u) {
		while ((p = myrio_udp_recv(rx->u, NULL, NULL)) != NULL) {
			check_udp(rx, myrio_pkt_data(p), p->len);
			myrio_pkt_free(p);
			rx->last_rx = t;
			n++;
		}
		return n;
	}
	for (unsigned i = 0; i < rx->n; i++) {
		struct stream *st = &rx->st[i];
		if (st->ended)
			continue;
		while ((p = myrio_tcp_recv(st->conn)) != NULL) {
			check_tcp(rx, st, myrio_pkt_data(p), p->len);
			myrio_tcp_release(st->conn, p);
			n++;
		}
		if (myrio_tcp_eof(st->conn) || myrio_tcp_state(st->conn) == MYRIO_TCP_CLOSED) {
			st->ended = true;
			myrio_tcp_close(st->conn);
			atomic_fetch_add(&run.ended, 1);
		}
	}
	return n;
}

static void *rx_run(void *arg)
{
	struct rx *rx = arg;
	uint64_t last = 0, last_bytes = 0, last_pkts = 0;
	while (!stop) {
		uint64_t b0 = rx->bytes, p0 = rx->pkts;
		int work = myrio_stack_poll(rx->s);
		uint64_t t = now_ns();
		work += rx_work(rx, t);
		idle_wait(&rx->iw, rx->s, work,
			  100); /* the checks below want the time now and then */
		atomic_fetch_add_explicit(&run.bytes, rx->bytes - b0, memory_order_relaxed);
		atomic_fetch_add_explicit(&run.pkts, rx->pkts - p0, memory_order_relaxed);
		uint64_t start = atomic_load(&run.start);
		if (!start && rx->bytes) {
			uint64_t zero = 0;
			atomic_compare_exchange_strong(&run.start, &zero, t);
			start = atomic_load(&run.start);
		}
		if (rx->q == 0 && start && !last)
			last = start;
		if (rx->q == 0 && start && t - last >= 1000000000ull) {
			double dt = (t - last) / 1e9;
			uint64_t b = atomic_load(&run.bytes), pk = atomic_load(&run.pkts);
			printf("%6.1f s %8.3f Gb/s %10.0f pkts/s\n", (t - start) / 1e9,
			       (b - last_bytes) * 8 / dt / 1e9, (pk - last_pkts) / dt);
			fflush(stdout);
			last = t;
			last_bytes = b;
			last_pkts = pk;
		}
		if (!run.udp && all_ended(t))
			break;
		if (run.udp && rx->last_rx && t - rx->last_rx > 1000000000ull)
			break; /* the sender stopped a second ago */
		if (run.duration && start && t - start > run.duration * 1000000000ull)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned mtu = 1500, port_no = 5001, coal_us = STREAM_COAL_US;
	run.threads = 1;
	const char *ip_str = "10.0.0.2", *pcap = NULL;
	const struct cli_opt opts[] = {{"udp", 'u', .flag = &run.udp},
				       {"spin", 0, .flag = &run.spin},
				       {"coal", 0, .num = &coal_us},
				       {"mtu", 'm', .num = &mtu},
				       {"duration", 'd', .num = &run.duration},
				       {"threads", 'T', .num = &run.threads},
				       {"ip", 0, .str = &ip_str},
				       {"port", 0, .num = &port_no},
				       {"pcap", 0, .str = &pcap},
				       {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: stream_recv [--udp] [--mtu N] [--duration S] [-T THREADS] [--ip A] "
		      "[--port N] [--pcap FILE] [--spin] [--coal US] DEVICE\n") < 0)
		return 2;
	struct in_addr ip;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1) {
		fprintf(stderr, "stream_recv: give one DEVICE (simd:nic1, 0000:03:00.0) and a "
				"valid --ip\n");
		return 2;
	}
	unsigned nt = run.threads;
	if (nt < 1 || nt > 16 || (nt > 1 && run.udp)) {
		fprintf(stderr, "stream_recv: -T takes 1..16 threads, with TCP\n");
		return 2;
	}
	stop_on_signals();
	pattern_fill(run.pattern);

	struct myrio_port *port;
	if (open_port_queues(&port, argv[optind], mtu, pcap, nt, coal_us) < 0)
		return 1;
	static struct rx rx[16];
	for (unsigned q = 0; q < nt; q++) {
		rx[q].port = port;
		rx[q].q = (uint16_t)q;
		struct myrio_stack_conf sc;
		myrio_stack_conf_init(&sc);
		sc.ip = ntohl(ip.s_addr);
		sc.netmask = 0xffffff00u;
		sc.rcv_buf = 4u << 20; /* enough window for 10 Gb/s over the model's round trip */
		sc.tcp_event = on_tcp;
		sc.event_arg = &rx[q];
		int rc = nt > 1 ? myrio_stack_create_queue(&rx[q].s, port, (uint16_t)q, &sc,
							   q ? rx[0].s : NULL)
				: myrio_stack_create(&rx[q].s, port, &sc);
		if (rc == 0)
			rc = run.udp
				 ? myrio_udp_open(rx[q].s, (uint16_t)port_no, NULL, &rx[q].u)
				 : myrio_tcp_listen(rx[q].s, (uint16_t)port_no, 4, NULL, &rx[q].l);
		if (rc < 0 || idle_wait_init(&rx[q].iw, rx[q].s, port, run.spin) < 0)
			return 1;
	}
	printf("stream_recv: %s on %s:%u (%s), MTU %u\n", run.udp ? "UDP" : "TCP", ip_str, port_no,
	       argv[optind], mtu);
	fflush(stdout);
	for (unsigned q = 1; q < nt; q++)
		if (pthread_create(&rx[q].th, NULL, rx_run, &rx[q]) != 0)
			return 1;
	rx_run(&rx[0]);
	uint64_t bytes = 0, pkts = 0, bad = 0, lost = 0, last_rx = 0;
	for (unsigned q = 0; q < nt; q++) {
		if (q)
			pthread_join(rx[q].th, NULL);
		bytes += rx[q].bytes;
		pkts += rx[q].pkts;
		bad += rx[q].bad;
		lost += rx[q].lost;
		last_rx = rx[q].last_rx > last_rx ? rx[q].last_rx : last_rx;
		if (nt > 1)
			printf("queue %u: %u streams, %llu bytes\n", q, rx[q].n,
			       (unsigned long long)rx[q].bytes);
	}
	uint64_t start = atomic_load(&run.start);
	uint64_t end = run.udp && last_rx ? last_rx : now_ns();
	double secs = start ? (end - start) / 1e9 : 0;
	printf("summary: %llu bytes in %llu %s in %.2f s = %.3f Gb/s, %llu bad, %llu lost\n",
	       (unsigned long long)bytes, (unsigned long long)pkts,
	       run.udp ? "datagrams" : "segments", secs, secs > 0 ? bytes * 8 / secs / 1e9 : 0.0,
	       (unsigned long long)bad, (unsigned long long)lost);
	for (unsigned q = nt; q-- > 0;) {
		for (unsigned i = 0; i < rx[q].n; i++)
			if (!rx[q].st[i].ended)
				myrio_tcp_close(rx[q].st[i].conn);
		for (int i = 0; i < 1000; i++)
			myrio_stack_poll(rx[q].s); /* let the close go out */
		if (rx[q].u)
			myrio_udp_close(rx[q].u);
		if (rx[q].l)
			myrio_tcp_listener_close(rx[q].l);
		idle_wait_fini(&rx[q].iw);
		myrio_stack_destroy(rx[q].s);
	}
	myrio_port_close(port);
	return bytes == 0 || bad != 0;
}
