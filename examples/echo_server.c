/* SPDX-License-Identifier: BSD-3-Clause */
/* Echo server: sends back every byte each TCP client sends, for as many clients as the
 * stack's table holds. It shows the event model for many connections:
 *
 *   - a readiness set (myrio/ready_set.h): the listener and every connection in it, and
 *     one call that returns those ready, whatever the number registered;
 *   - the stack's waitable fd in an epoll set of the program's own: it sleeps when idle
 *     (arm, poll once more, sleep) and uses no CPU until a frame or a timer comes.
 *
 *   echo_server simd:nic1                 on 10.0.0.2:7 (model daemon's NIC)
 *   echo_client --conns 10000 simd:nic0   from the other NIC
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "myrio/myrio.h"

#define ECHO_BUF 2048

/* A client's bytes read and not yet sent back: while any wait, the connection asks for
 * OUT instead of IN (the peer is then held back by its window, not by our memory). */
struct echo_conn {
	struct myrio_tcp_conn *c;
	struct echo_conn *prev, *next; /* every open one, to free them at the end */
	uint32_t off, len;
	uint8_t buf[ECHO_BUF];
};

static uint64_t served, echoed;
static struct echo_conn *conns;

static void conn_free(struct echo_conn *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		conns = e->next;
	if (e->next)
		e->next->prev = e->prev;
	free(e);
}

/* Echoes until the connection has nothing to read or no room to send; false when it
 * is over (end of stream, reset). */
static bool echo(struct myrio_ready_set *set, struct echo_conn *e)
{
	for (;;) {
		if (e->off == e->len) {
			ssize_t n = myrio_tcp_read(e->c, e->buf, sizeof(e->buf));
			if (n == -EAGAIN)
				return myrio_ready_mod_tcp(set, e->c, MYRIO_READY_IN) == 0;
			if (n <= 0)
				return false;
			e->off = 0;
			e->len = (uint32_t)n;
		}
		ssize_t w = myrio_tcp_write(e->c, e->buf + e->off, e->len - e->off);
		if (w < 0)
			return false;
		e->off += (uint32_t)w;
		echoed += (uint64_t)w;
		if (e->off < e->len) /* refused: room comes with the peer's ACKs */
			return myrio_ready_mod_tcp(set, e->c, MYRIO_READY_OUT) == 0;
	}
}

static void accept_all(struct myrio_ready_set *set, struct myrio_tcp_listener *l)
{
	struct myrio_tcp_conn *c;
	while ((c = myrio_tcp_accept(l)) != NULL) {
		struct echo_conn *e = calloc(1, sizeof(*e));
		if (!e || myrio_ready_add_tcp(set, c, MYRIO_READY_IN, e) < 0) {
			free(e);
			myrio_tcp_abort(c);
			continue;
		}
		e->c = c;
		e->next = conns;
		if (conns)
			conns->prev = e;
		conns = e;
		served++;
	}
}

int main(int argc, char **argv)
{
	unsigned port_no = 7, max_conns = 16384;
	bool spin = false;
	const char *ip_str = "10.0.0.2", *pcap = NULL;
	const struct cli_opt opts[] = {
	    {"port", 0, .num = &port_no},	 {"ip", 0, .str = &ip_str},
	    {"max-conns", 0, .num = &max_conns}, {"spin", 0, .flag = &spin},
	    {"pcap", 0, .str = &pcap},		 {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: echo_server [--port N] [--ip A] [--max-conns N] [--spin] "
		      "[--pcap FILE] DEVICE\n") < 0)
		return 2;
	struct in_addr ip;
	if (optind + 1 != argc || inet_pton(AF_INET, ip_str, &ip) != 1) {
		fprintf(stderr, "echo_server: give one DEVICE and a valid --ip\n");
		return 2;
	}
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.max_tcp_conns = max_conns;
	sc.max_listeners = 1;
	sc.rcv_buf = 16 * 1024;
	sc.snd_queue_segs = 16;
	sc.tx_pool_size = 8192;
	sc.time_wait_ms = 1000;
	struct stack_app app;
	if (stack_app_start(&app, "echo_server", argv[optind], pcap, ntohl(ip.s_addr), &sc, spin) <
	    0)
		return 1;
	struct myrio_stack *s = app.s;
	struct myrio_ready_set *set;
	struct myrio_tcp_listener *l;
	if (myrio_ready_create(s, &set) < 0 ||
	    myrio_tcp_listen(s, (uint16_t)port_no, 1024, NULL, &l) < 0 ||
	    myrio_ready_add_listener(set, l, MYRIO_READY_IN, NULL) < 0) {
		fprintf(stderr, "echo_server: cannot start on %s\n", argv[optind]);
		return 1;
	}
	printf("echo_server: %s:%u on %s, %s when idle\n", ip_str, port_no, argv[optind],
	       spin ? "spinning" : "sleeping");
	fflush(stdout);

	while (!stop) {
		int work = myrio_stack_poll(s);
		struct myrio_ready_event ev[64];
		int n = myrio_ready_wait(set, ev, 64);
		for (int i = 0; i < n; i++) {
			struct echo_conn *e = ev[i].user;
			if (!e) {
				accept_all(set, l);
			} else if (!echo(set, e)) {
				myrio_tcp_close(
				    e->c); /* leaves the set; FIN after what is queued */
				conn_free(e);
			}
		}
		idle_wait(&app.iw, s, work + n, 1000);
	}
	printf("summary: %llu connections served, %llu bytes echoed, %llu sleeps, %.2f s CPU\n",
	       (unsigned long long)served, (unsigned long long)echoed,
	       (unsigned long long)app.iw.sleeps, cpu_seconds());
	myrio_ready_destroy(set);
	while (conns) {
		myrio_tcp_abort(conns->c);
		conn_free(conns);
	}
	myrio_tcp_listener_close(l);
	stack_app_stop(&app);
	return 0;
}
