/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP request/response with timeouts and retries, on the stack's own timers: no clock of
 * the program's. The client keeps up to --window requests outstanding; each has a timer
 * (myrio_timer_start) that resends it when no answer came in time, up to --retries times,
 * and is cancelled (myrio_timer_cancel) by the answer. Each resend waits twice as long as
 * the try before (exponential backoff, RFC 8085 §3.1.3): a loss costs one --timeout-ms,
 * and a peer that stalls for a while (a loaded host) is not given up on at once. The
 * server answers each request with its sequence number and payload.
 *
 *   udp_rpc --server simd:nic1                          answers on 10.0.0.2:9000
 *   udp_rpc --requests 1000 --timeout-ms 20 simd:nic0   asks 10.0.0.2:9000
 *
 * Exit status 0 when every request was answered (with its own payload).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

#define REQ_LEN 64	      /* sequence number, then a payload derived from it */
#define BACKOFF_MAX_SHIFT 10u /* the wait grows to 1024 x --timeout-ms at most */

struct request {
	uint32_t seq;
	unsigned tries;
	uint64_t timer;
	bool answered;
};

struct client {
	struct myrio_udp_sock *u;
	uint32_t peer;
	uint16_t port;
	struct request *req;
	unsigned timeout_ms, retries;
	unsigned answered, failed, resent, dups, bad;
};

static void fill(uint8_t *b, uint32_t seq)
{
	memcpy(b, &seq, sizeof(seq));
	for (unsigned i = sizeof(seq); i < REQ_LEN; i++)
		b[i] = (uint8_t)(seq * 13 + i);
}

static void timed_out(void *arg, struct myrio_stack *s);

static void send_request(struct client *cl, struct myrio_stack *s, struct request *r)
{
	uint8_t b[REQ_LEN];
	fill(b, r->seq);
	unsigned backoff = r->tries < BACKOFF_MAX_SHIFT ? r->tries : BACKOFF_MAX_SHIFT;
	r->tries++;
	/* A send refused (the transmit pool or the send ring full) counts as lost: the timer
	 * resends it. */
	(void)myrio_udp_sendto_copy(cl->u, b, sizeof(b), cl->peer, cl->port);
	uint64_t wait_ns = ((uint64_t)cl->timeout_ms * 1000000u) << backoff;
	if (myrio_timer_start(s, wait_ns, timed_out, r, &r->timer) < 0)
		r->timer = 0;
}

static struct client *the_client; /* the timers' argument is the request */

static void timed_out(void *arg, struct myrio_stack *s)
{
	struct request *r = arg;
	struct client *cl = the_client;
	if (r->tries > cl->retries) {
		cl->failed++;
		return;
	}
	cl->resent++;
	send_request(cl, s, r);
}

static void take_answer(struct client *cl, struct myrio_stack *s, struct myrio_pkt *p,
			unsigned nreq)
{
	uint8_t want[REQ_LEN];
	uint32_t seq;
	if (p->len != REQ_LEN) {
		cl->bad++;
		return;
	}
	memcpy(&seq, myrio_pkt_data(p), sizeof(seq));
	fill(want, seq);
	if (seq >= nreq || memcmp(want, myrio_pkt_data(p), REQ_LEN) != 0) {
		cl->bad++;
		return;
	}
	struct request *r = &cl->req[seq];
	if (r->answered || myrio_timer_cancel(s, r->timer) < 0) {
		cl->dups++; /* a resent request answered twice, or after giving up */
		return;
	}
	r->answered = true;
	cl->answered++;
}

int main(int argc, char **argv)
{
	unsigned nreq = 1000, window = 16, timeout_ms = 20, retries = 5, port_no = 9000;
	bool server = false, spin = false;
	const char *ip_str = NULL, *peer_str = "10.0.0.2";
	const struct cli_opt opts[] = {
	    {"server", 0, .flag = &server},    {"requests", 'n', .num = &nreq},
	    {"window", 'w', .num = &window},   {"timeout-ms", 't', .num = &timeout_ms},
	    {"retries", 'r', .num = &retries}, {"port", 0, .num = &port_no},
	    {"ip", 0, .str = &ip_str},	       {"peer", 0, .str = &peer_str},
	    {"spin", 0, .flag = &spin},	       {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: udp_rpc --server [--ip A] [--port N] DEVICE\n"
		      "       udp_rpc [--requests N] [--window N] [--timeout-ms MS] [--retries N]\n"
		      "               [--peer A] [--port N] [--ip A] DEVICE\n") < 0)
		return 2;
	if (!ip_str)
		ip_str = server ? "10.0.0.2" : "10.0.0.1";
	struct in_addr ip, peer;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1 ||
	    inet_pton(AF_INET, peer_str, &peer) != 1 || window == 0) {
		fprintf(stderr, "udp_rpc: give one DEVICE and valid addresses\n");
		return 2;
	}
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.max_timers = window;
	struct stack_app app;
	if (stack_app_start(&app, "udp_rpc", argv[optind], NULL, ntohl(ip.s_addr), &sc, spin) < 0)
		return 1;
	struct myrio_stack *s = app.s;
	struct myrio_udp_sock *u;
	int rc = 0;
	if (myrio_udp_open(s, server ? (uint16_t)port_no : 0, NULL, &u) < 0) {
		fprintf(stderr, "udp_rpc: cannot start on %s\n", argv[optind]);
		return 1;
	}
	if (server) {
		printf("udp_rpc: answering on %s:%u\n", ip_str, port_no);
		fflush(stdout);
		uint64_t answered = 0;
		while (!stop) {
			int work = myrio_stack_poll(s);
			struct myrio_pkt *p;
			uint32_t from;
			uint16_t from_port;
			while ((p = myrio_udp_recv(u, &from, &from_port)) != NULL) {
				answered += myrio_udp_sendto_copy(u, myrio_pkt_data(p), p->len,
								  from, from_port) == 0;
				myrio_pkt_free(p);
			}
			idle_wait(&app.iw, s, work, -1);
		}
		printf("summary: %llu requests answered\n", (unsigned long long)answered);
	} else {
		struct client cl = {.u = u,
				    .peer = ntohl(peer.s_addr),
				    .port = (uint16_t)port_no,
				    .timeout_ms = timeout_ms,
				    .retries = retries};
		the_client = &cl;
		cl.req = calloc(nreq ? nreq : 1, sizeof(*cl.req));
		if (!cl.req || myrio_udp_connect(u, cl.peer, cl.port) < 0)
			return 1;
		uint64_t t0 = now_ns();
		unsigned next = 0;
		while (!stop && cl.answered + cl.failed < nreq) {
			for (; next < nreq && next - cl.answered - cl.failed < window; next++) {
				cl.req[next].seq = next;
				send_request(&cl, s, &cl.req[next]);
			}
			int work = myrio_stack_poll(s);
			struct myrio_pkt *p;
			while ((p = myrio_udp_recv(u, NULL, NULL)) != NULL) {
				take_answer(&cl, s, p, nreq);
				myrio_pkt_free(p);
			}
			if (myrio_udp_error(u) == -ECONNREFUSED) /* nobody listens there */
				break;
			idle_wait(&app.iw, s, work, -1);
		}
		printf("summary: %u requests, %u answered, %u failed, %u resent, %u duplicate "
		       "answers, %u bad, %.2f s\n",
		       nreq, cl.answered, nreq - cl.answered, cl.resent, cl.dups, cl.bad,
		       (now_ns() - t0) / 1e9);
		free(cl.req);
		rc = cl.answered == nreq && cl.bad == 0 ? 0 : 1;
	}
	myrio_udp_close(u);
	stack_app_stop(&app);
	return rc;
}
