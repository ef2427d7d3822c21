/* SPDX-License-Identifier: BSD-3-Clause */
/* Echo client: opens many TCP connections to echo_server at once, sends each its own
 * stream of checked bytes, reads it all back, verifies every byte, and closes. The
 * connections live in a readiness set; a connection asks for OUT while it has bytes to
 * send. Exit status 0 when every connection got back exactly what it sent.
 *
 *   echo_client --conns 10000 --bytes 20000 simd:nic0
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

struct client {
	struct myrio_tcp_conn *c;
	uint32_t id;
	uint64_t sent, rcvd, bad;
	bool started, done, failed; /* started: connected, or ended before */
};

static uint64_t total_bytes;
static unsigned done, failed, opening;

/* Byte i of connection id's stream. */
static uint8_t byte_at(uint32_t id, uint64_t i)
{
	return (uint8_t)((i * 31 + id * 7 + (i >> 8)) & 0xff);
}

static void finish(struct client *k, bool ok)
{
	myrio_tcp_close(k->c);
	k->c = NULL;
	k->done = true;
	done++;
	if (!ok) {
		k->failed = true;
		failed++;
	}
}

static void serve(struct myrio_ready_set *set, struct client *k, uint32_t events)
{
	uint8_t buf[2048];
	if (events & MYRIO_READY_OUT) {
		while (k->sent < total_bytes) {
			uint32_t n =
			    (uint32_t)(total_bytes - k->sent < sizeof(buf) ? total_bytes - k->sent
									   : sizeof(buf));
			for (uint32_t i = 0; i < n; i++)
				buf[i] = byte_at(k->id, k->sent + i);
			ssize_t w = myrio_tcp_write(k->c, buf, n);
			if (w <= 0)
				break;
			k->sent += (uint64_t)w;
		}
		if (k->sent == total_bytes)
			myrio_ready_mod_tcp(set, k->c, MYRIO_READY_IN);
	}
	ssize_t r;
	while ((r = myrio_tcp_read(k->c, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < r; i++)
			k->bad += buf[i] != byte_at(k->id, k->rcvd + (uint64_t)i);
		k->rcvd += (uint64_t)r;
	}
	if (k->rcvd == total_bytes && k->sent == total_bytes)
		finish(k, k->bad == 0);
	else if (r != -EAGAIN || (events & (MYRIO_READY_HUP | MYRIO_READY_ERR)))
		finish(k, false); /* ended early */
}

int main(int argc, char **argv)
{
	unsigned nconns = 100, bytes = 20000, port_no = 7, window = 512;
	bool spin = false;
	const char *ip_str = "10.0.0.1", *server_str = "10.0.0.2";
	const struct cli_opt opts[] = {
	    {"conns", 'n', .num = &nconns},    {"bytes", 'b', .num = &bytes},
	    {"port", 0, .num = &port_no},      {"ip", 0, .str = &ip_str},
	    {"server", 0, .str = &server_str}, {"opening", 0, .num = &window},
	    {"spin", 0, .flag = &spin},	       {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: echo_client [--conns N] [--bytes N] [--server A] [--port N] [--ip A] "
		      "[--opening N] [--spin] DEVICE\n") < 0)
		return 2;
	struct in_addr ip, server;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1 ||
	    inet_pton(AF_INET, server_str, &server) != 1 || nconns == 0 || window == 0) {
		fprintf(stderr, "echo_client: give one DEVICE and valid addresses\n");
		return 2;
	}
	total_bytes = bytes;
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.max_tcp_conns = nconns + 64;
	sc.rcv_buf = 16 * 1024;
	sc.snd_queue_segs = 16;
	sc.tx_pool_size = 8192;
	struct stack_app app;
	if (stack_app_start(&app, "echo_client", argv[optind], NULL, ntohl(ip.s_addr), &sc, spin) <
	    0)
		return 1;
	struct myrio_stack *s = app.s;
	struct myrio_ready_set *set;
	struct client *cl = calloc(nconns, sizeof(*cl));
	if (!cl || myrio_ready_create(s, &set) < 0) {
		fprintf(stderr, "echo_client: out of memory\n");
		return 1;
	}
	uint64_t t0 = now_ns();
	unsigned next = 0;
	while (!stop && done < nconns) {
		/* At most `window` handshakes at once: a burst of SYNs larger than the
		 * server's backlog and the NIC's ring only waits out retransmissions. */
		for (; next < nconns && opening < window; next++) {
			struct client *k = &cl[next];
			k->id = next;
			if (myrio_tcp_connect(s, ntohl(server.s_addr), (uint16_t)port_no, k,
					      &k->c) < 0 ||
			    myrio_ready_add_tcp(set, k->c, MYRIO_READY_IN | MYRIO_READY_OUT, k) <
				0) {
				fprintf(stderr, "echo_client: connection %u could not start\n",
					next);
				return 1;
			}
			opening++;
		}
		int work = myrio_stack_poll(s);
		struct myrio_ready_event ev[64];
		int n = myrio_ready_wait(set, ev, 64);
		for (int i = 0; i < n; i++) {
			struct client *k = ev[i].user;
			if (!k->started) { /* connected (OUT), or refused */
				k->started = true;
				opening--;
			}
			serve(set, k, ev[i].events);
		}
		idle_wait(&app.iw, s, work + n, 100);
	}
	double secs = (now_ns() - t0) / 1e9;
	uint64_t bad = 0, verified = 0;
	for (unsigned i = 0; i < nconns; i++) {
		bad += cl[i].bad;
		if (cl[i].done && !cl[i].failed)
			verified += cl[i].rcvd;
	}
	printf("summary: %u connections, %u completed, %u failed, %llu bytes echoed and "
	       "verified, %llu bad, %.2f s\n",
	       nconns, done - failed, failed + (nconns - done), (unsigned long long)verified,
	       (unsigned long long)bad, secs);
	for (int i = 0; i < 1000; i++)
		myrio_stack_poll(s); /* let the closes go out */
	myrio_ready_destroy(set);
	for (unsigned i = 0; i < nconns; i++)
		if (cl[i].c)
			myrio_tcp_abort(cl[i].c);
	stack_app_stop(&app);
	free(cl);
	return done == nconns && failed == 0 ? 0 : 1;
}
