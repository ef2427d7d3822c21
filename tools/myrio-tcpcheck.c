/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-tcpcheck: runs a tcp_lite stack whose link ends in a TAP device, so the Linux
 * stack on the other side checks ours (tests/sh/kernel_interop.sh drives it).
 *
 * The stack answers pings, echoes UDP, accepts TCP connections and verifies the bytes
 * they carry, and can itself send a pattern to a kernel server and expect a refusal from
 * a closed port. The byte at stream offset i is i % 251 in both directions.
 *
 * The link (--via):
 *   sim   (default) the stack runs on a Myri-10G NIC of an in-process device model, through
 *         the real driver, and the NIC's cable ends in the TAP device;
 *   pair  the stack's port is one end of an in-memory pair link and this program moves
 *         frames between the other end and the TAP device (the pair port emulates the
 *         checksum offloads in software).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "myrio/sim.h"
#include "myrio/tcp_lite.h"

#define MAX_IN 8

struct inbound {
	struct myrio_tcp_conn *c;
	uint64_t bytes;
	bool bad, done, closed;
};

struct app {
	struct myrio_stack *s;
	struct myrio_port *port, *wire;
	struct myrio_pool *wire_pool;
	struct myrio_sim_host *tap; /* pair mode: bridged here; sim mode: the world's */
	struct myrio_sim *sim;
	struct myrio_udp_sock *udp;
	struct inbound in[MAX_IN];
	unsigned nin, in_ok, in_bad;
	unsigned expect_conns;
	/* active send */
	uint32_t send_ip;
	uint16_t send_port;
	uint64_t send_bytes, sent;
	unsigned send_repeat, sends_ok; /* connections to make, one after the other */
	struct myrio_tcp_conn *out;
	int out_state; /* 0 idle, 1 connecting, 2 sending, 3 closing, 4 done ok, -1 failed */
	uint64_t out_start_ns, out_end_ns;
	/* refused */
	uint32_t ref_ip;
	uint16_t ref_port;
	struct myrio_tcp_conn *ref;
	int ref_state; /* 0 idle, 1 waiting, 2 refused (ok), -1 wrong */
	uint64_t udp_echoed;
	/* ICMP errors: a connect to a host the router cannot reach must end with
	 * -EHOSTUNREACH, a datagram to a closed port give the socket -ECONNREFUSED */
	struct icmp_probe {
		uint32_t ip;
		uint16_t port;
		int want;
		struct myrio_tcp_conn *c;
		struct myrio_udp_sock *u;
		int state; /* 0 idle, 1 waiting, 2 got want, -1 wrong */
		uint64_t start_ns;
	} unreach, udp_refused;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct inbound *find_in(struct app *a, struct myrio_tcp_conn *c)
{
	for (unsigned i = 0; i < a->nin; i++)
		if (a->in[i].c == c)
			return &a->in[i];
	return NULL;
}

static void drain_in(struct inbound *in)
{
	struct myrio_pkt *p;
	while ((p = myrio_tcp_recv(in->c)) != NULL) {
		const uint8_t *d = myrio_pkt_data(p);
		for (uint32_t i = 0; i < p->len; i++)
			if (d[i] != (uint8_t)((in->bytes + i) % 251))
				in->bad = true;
		in->bytes += p->len;
		myrio_tcp_release(in->c, p);
	}
}

static void probe_done(struct icmp_probe *pr, int err)
{
	if (pr->state != 1)
		return;
	pr->state = err == pr->want ? 2 : -1;
	printf("icmp: %s to port %u ended with \"%s\" after %.1f s (%s)\n",
	       pr->u ? "datagram" : "connect", pr->port, err ? strerror(-err) : "no error",
	       (double)(now_ns() - pr->start_ns) / 1e9, pr->state == 2 ? "as expected" : "WRONG");
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct app *a = arg;
	if (ev == MYRIO_TCP_EV_ACCEPTED) {
		struct inbound *slot = a->nin < MAX_IN ? &a->in[a->nin++] : NULL;
		for (unsigned i = 0; !slot && i < MAX_IN; i++)
			if (a->in[i].closed) /* a finished connection's slot */
				slot = &a->in[i];
		if (!slot) {
			myrio_tcp_abort(c);
			return;
		}
		*slot = (struct inbound){.c = c};
		return;
	}
	if (c == a->unreach.c) {
		if (ev == MYRIO_TCP_EV_ERROR || ev == MYRIO_TCP_EV_CONNECTED)
			probe_done(&a->unreach, myrio_tcp_error(c));
		return;
	}
	if (c == a->ref) {
		if (ev == MYRIO_TCP_EV_ERROR || ev == MYRIO_TCP_EV_CONNECTED) {
			a->ref_state = myrio_tcp_error(c) == -ECONNREFUSED ? 2 : -1;
			printf("kernel closed port: %s\n", a->ref_state == 2
							       ? "refused (RST), as expected"
							       : "unexpected answer");
			myrio_tcp_abort(c);
			a->ref = NULL;
		}
		return;
	}
	if (c == a->out) {
		if (ev == MYRIO_TCP_EV_CONNECTED) {
			a->out_state = 2;
			a->out_start_ns = now_ns();
		} else if (ev == MYRIO_TCP_EV_ERROR) {
			fprintf(stderr, "send: connection failed: %s\n",
				strerror(-myrio_tcp_error(c)));
			a->out_state = -1;
			myrio_tcp_close(c);
			a->out = NULL;
		} else if (ev == MYRIO_TCP_EV_CLOSED) {
			a->out_state = a->sent == a->send_bytes ? 4 : -1;
			a->out_end_ns = now_ns();
			myrio_tcp_close(c);
			a->out = NULL;
			/* --repeat: the next connection at once (our side keeps TIME_WAIT) */
			if (a->out_state == 4 && ++a->sends_ok < a->send_repeat) {
				a->sent = 0;
				if (myrio_tcp_connect(a->s, a->send_ip, a->send_port, NULL,
						      &a->out) == 0)
					a->out_state = 1;
				else
					a->out_state = -1;
			}
		} else if (ev == MYRIO_TCP_EV_READABLE) {
			char junk[256];
			while (myrio_tcp_read(c, junk, sizeof(junk)) > 0)
				;
		}
		return;
	}
	struct inbound *in = find_in(a, c);
	if (!in)
		return;
	if (ev == MYRIO_TCP_EV_READABLE) {
		drain_in(in);
		if (myrio_tcp_eof(c) && !in->done) {
			in->done = true;
			if (in->bad)
				a->in_bad++;
			else
				a->in_ok++;
			printf("inbound connection: %llu bytes, pattern %s\n",
			       (unsigned long long)in->bytes, in->bad ? "WRONG" : "intact");
			/* Close our side and keep the handle until the close completes, so
			 * the program does not exit (and reset) while our FIN is in flight. */
			myrio_tcp_shutdown(c);
		}
	} else if (ev == MYRIO_TCP_EV_ERROR || ev == MYRIO_TCP_EV_CLOSED) {
		if (!in->done) {
			in->done = true;
			a->in_bad++;
			printf("inbound connection ended early (%d) after %llu bytes\n",
			       myrio_tcp_error(c), (unsigned long long)in->bytes);
		}
		in->closed = true;
		myrio_tcp_close(c);
	}
}

/* Echoes each datagram, also those that came in fragments (sent back in fragments). */
static void on_udp(void *arg, struct myrio_udp_sock *u)
{
	struct app *a = arg;
	struct myrio_pkt *p;
	uint32_t ip;
	uint16_t port;
	if (u == a->udp_refused.u) {
		probe_done(&a->udp_refused, myrio_udp_error(u));
		return;
	}
	while ((p = myrio_udp_recv(u, &ip, &port)) != NULL) {
		if (myrio_udp_sendto_copy(u, myrio_pkt_data(p), p->len, ip, port) == 0)
			a->udp_echoed++;
		myrio_pkt_free(p);
	}
}

static void start_probes(struct app *a)
{
	struct icmp_probe *t = &a->unreach, *u = &a->udp_refused;
	if (t->port && myrio_tcp_connect(a->s, t->ip, t->port, NULL, &t->c) == 0) {
		t->state = 1;
		t->start_ns = now_ns();
	}
	if (u->port && myrio_udp_open(a->s, 0, NULL, &u->u) == 0 &&
	    myrio_udp_connect(u->u, u->ip, u->port) == 0 &&
	    myrio_udp_sendto_copy(u->u, "probe", 5, u->ip, u->port) == 0) {
		u->state = 1;
		u->start_ns = now_ns();
	}
}

static void pump_send(struct app *a)
{
	if (a->out_state != 2)
		return;
	uint32_t mss = myrio_tcp_mss(a->out); /* the peer's say; a buffer holds what it holds */
	if (mss > myrio_stack_pkt_room(a->s))
		mss = myrio_stack_pkt_room(a->s);
	while (a->sent < a->send_bytes && myrio_tcp_send_space(a->out)) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(a->s);
		if (!p)
			return;
		uint32_t n =
		    (uint32_t)(a->send_bytes - a->sent < mss ? a->send_bytes - a->sent : mss);
		uint8_t *d = myrio_pkt_data(p);
		uint32_t v = (uint32_t)(a->sent % 251);
		for (uint32_t i = 0; i < n; i++) {
			d[i] = (uint8_t)v;
			if (++v == 251)
				v = 0;
		}
		p->len = n;
		if (myrio_tcp_send(a->out, p) < 0) {
			myrio_pkt_free(p);
			return;
		}
		a->sent += n;
	}
	if (a->sent == a->send_bytes) {
		myrio_tcp_shutdown(a->out);
		a->out_state = 3;
	}
}

static void to_stack(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct app *a = ctx;
	struct myrio_pkt *p = myrio_pkt_alloc(a->wire_pool);
	if (!p || len > p->buf_len - p->data_off) {
		if (p)
			myrio_pkt_free(p);
		return;
	}
	memcpy(myrio_pkt_data(p), frame, len);
	p->len = len;
	if (myrio_tx_burst(a->wire, &p, 1) != 1)
		myrio_pkt_free(p);
}

/* Moves frames between the wire end of the pair link and the TAP device. */
static unsigned bridge(struct app *a)
{
	if (!a->wire)
		return 0; /* the model's cable does it */
	unsigned work = myrio_sim_host_recv(a->tap, to_stack, a, 32);
	struct myrio_pkt *pk[32];
	uint16_t n = myrio_rx_burst(a->wire, pk, 32);
	for (uint16_t i = 0; i < n; i++)
		myrio_sim_host_send(a->tap, myrio_pkt_data(pk[i]), pk[i]->len);
	myrio_pkt_free_bulk(pk, n);
	return work + n;
}

static int parse_ip(const char *s, uint32_t *ip)
{
	unsigned b[4];
	char tail;
	if (sscanf(s, "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3], &tail) != 4 || b[0] > 255 ||
	    b[1] > 255 || b[2] > 255 || b[3] > 255)
		return -1;
	*ip = b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
	return 0;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	double d = strtod(s, &end);
	if (*end == 'K' || *end == 'k')
		d *= 1024;
	else if (*end == 'M' || *end == 'm')
		d *= 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		d *= 1024.0 * 1024 * 1024;
	return (uint64_t)d;
}

/* "A.B.C.D:PORT" and, with bytes, ":SIZE" */
static int parse_target(char *s, uint32_t *ip, uint16_t *port, uint64_t *bytes)
{
	char *c1 = strchr(s, ':');
	if (!c1)
		return -1;
	*c1 = '\0';
	char *c2 = strchr(c1 + 1, ':');
	if (c2)
		*c2 = '\0';
	if (parse_ip(s, ip) < 0)
		return -1;
	*port = (uint16_t)atoi(c1 + 1);
	if (bytes) {
		if (!c2)
			return -1;
		*bytes = parse_size(c2 + 1);
	}
	return *port ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: myrio-tcpcheck --tap IFNAME --ip A.B.C.D/LEN [--gw A.B.C.D]\n"
		"       [--listen PORT] [--expect-conns N] [--udp-echo PORT]\n"
		"       [--send IP:PORT:BYTES] [--expect-refused IP:PORT]\n"
		"       [--ready FILE] [--go FILE] [--timeout SECONDS] [--stats] [--via sim|pair]\n"
		"       [--sim SPEC]   model options, e.g. loss=0.01,reorder=0.01,dup=0.01,seed=1\n"
		"       [--cubic]      CUBIC congestion control instead of NewReno\n"
		"       [--syncookies] answer every SYN with a SYN cookie\n"
		"       [--mtu N]      the port's IP MTU (68..9000; 1500)\n"
		"       [--expect-unreachable IP:PORT] a connect there ends with EHOSTUNREACH\n"
		"       [--udp-refused IP:PORT] a datagram there gets ECONNREFUSED\n"
		"       [--repeat N]   make the --send connection N times, one after the other\n");
}

int main(int argc, char **argv)
{
	struct app a;
	memset(&a, 0, sizeof(a));
	const char *tap = NULL, *ready = NULL, *go = NULL, *sim_spec = NULL;
	uint32_t ip = 0, mask = 0, gw = 0;
	int listen_port = 0, udp_port = 0, timeout = 120;
	uint32_t mtu = 0;
	bool stats = false, via_pair = false, cubic = false, cookies = false;
	static const struct option opts[] = {
	    {"tap", 1, 0, 't'},
	    {"ip", 1, 0, 'i'},
	    {"gw", 1, 0, 'g'},
	    {"listen", 1, 0, 'l'},
	    {"expect-conns", 1, 0, 'n'},
	    {"udp-echo", 1, 0, 'u'},
	    {"send", 1, 0, 's'},
	    {"expect-refused", 1, 0, 'r'},
	    {"ready", 1, 0, 'R'},
	    {"go", 1, 0, 'G'},
	    {"timeout", 1, 0, 'T'},
	    {"stats", 0, 0, 'S'},
	    {"via", 1, 0, 'V'},
	    {"sim", 1, 0, 'M'},
	    {"cubic", 0, 0, 'C'},
	    {"syncookies", 0, 0, 'K'},
	    {"mtu", 1, 0, 'm'},
	    {"expect-unreachable", 1, 0, 'h'},
	    {"udp-refused", 1, 0, 'U'},
	    {"repeat", 1, 0, 'N'},
	    {0, 0, 0, 0},
	};
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 't':
			tap = optarg;
			break;
		case 'i': {
			char *slash = strchr(optarg, '/');
			int len = slash ? atoi(slash + 1) : 24;
			if (slash)
				*slash = '\0';
			if (parse_ip(optarg, &ip) < 0 || len < 1 || len > 30) {
				usage();
				return 2;
			}
			mask = ~0u << (32 - len);
			break;
		}
		case 'g':
			if (parse_ip(optarg, &gw) < 0) {
				usage();
				return 2;
			}
			break;
		case 'l':
			listen_port = atoi(optarg);
			break;
		case 'n':
			a.expect_conns = (unsigned)atoi(optarg);
			break;
		case 'u':
			udp_port = atoi(optarg);
			break;
		case 's':
			if (parse_target(optarg, &a.send_ip, &a.send_port, &a.send_bytes) < 0) {
				usage();
				return 2;
			}
			break;
		case 'r':
			if (parse_target(optarg, &a.ref_ip, &a.ref_port, NULL) < 0) {
				usage();
				return 2;
			}
			break;
		case 'R':
			ready = optarg;
			break;
		case 'G':
			go = optarg;
			break;
		case 'T':
			timeout = atoi(optarg);
			break;
		case 'S':
			stats = true;
			break;
		case 'M':
			sim_spec = optarg;
			break;
		case 'm':
			mtu = (uint32_t)atoi(optarg);
			break;
		case 'N':
			a.send_repeat = (unsigned)atoi(optarg);
			break;
		case 'C':
			cubic = true;
			break;
		case 'K':
			cookies = true;
			break;
		case 'h':
		case 'U': {
			struct icmp_probe *pr = o == 'h' ? &a.unreach : &a.udp_refused;
			if (parse_target(optarg, &pr->ip, &pr->port, NULL) < 0) {
				usage();
				return 2;
			}
			pr->want = o == 'h' ? -EHOSTUNREACH : -ECONNREFUSED;
			break;
		}
		case 'V':
			if (strcmp(optarg, "pair") && strcmp(optarg, "sim")) {
				usage();
				return 2;
			}
			via_pair = !strcmp(optarg, "pair");
			break;
		default:
			usage();
			return 2;
		}
	}
	if (!tap || !ip) {
		usage();
		return 2;
	}
	char host[80];
	snprintf(host, sizeof(host), "tap:%s", tap);
	int rc = myrio_sim_host_open(&a.tap, host);
	if (rc < 0)
		return 1;
	if (via_pair) {
		char dev[64];
		snprintf(dev, sizeof(dev), "pair:tcpcheck%d/0", (int)getpid() % 100000);
		struct myrio_port_conf pc;
		myrio_port_conf_init(&pc);
		pc.mtu = mtu;
		if ((rc = myrio_port_open(&a.port, dev, &pc)) < 0)
			return 1;
		dev[strlen(dev) - 1] = '1';
		if ((rc = myrio_port_open(&a.wire, dev, &pc)) < 0 ||
		    (rc = myrio_pool_create(1024, 9600, &a.wire_pool)) < 0)
			return 1;
	} else {
		/* A model world with one NIC whose cable ends in the TAP device. */
		struct myrio_sim_conf sc;
		myrio_sim_conf_init(&sc);
		if (sim_spec && myrio_sim_conf_parse(&sc, sim_spec) < 0)
			return 2;
		if (myrio_sim_create_cabled(&a.sim, &sc, a.tap) < 0)
			return 1;
		struct myrio_port_conf pc;
		myrio_port_conf_init(&pc);
		pc.sim = a.sim;
		pc.mtu = mtu;
		if (myrio_port_open(&a.port, "sim:sim0", &pc) < 0)
			return 1;
	}
	struct myrio_stack_conf conf;
	myrio_stack_conf_init(&conf);
	conf.ip = ip;
	conf.netmask = mask;
	conf.gateway = gw;
	conf.tcp_event = on_tcp;
	conf.udp_event = on_udp;
	conf.event_arg = &a;
	conf.time_wait_ms = 2000;
	if (cubic)
		conf.cc = MYRIO_TCP_CC_CUBIC;
	conf.syncookies_always = cookies;
	if ((rc = myrio_stack_create(&a.s, a.port, &conf)) < 0)
		return 1;
	struct myrio_tcp_listener *l = NULL;
	if (listen_port && myrio_tcp_listen(a.s, (uint16_t)listen_port, 16, NULL, &l) < 0)
		return 1;
	if (udp_port && myrio_udp_open(a.s, (uint16_t)udp_port, NULL, &a.udp) < 0)
		return 1;
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (f)
			fclose(f);
	}
	uint64_t start = now_ns(), deadline = start + (uint64_t)timeout * 1000000000ull;
	bool started = go == NULL;
	int tapfd = a.wire ? myrio_sim_host_fd(a.tap) : -1;
	unsigned idle = 0;
	/* Gaps between two passes of this loop after which there was work (frames waiting):
	 * nothing was read from the TAP or acknowledged meanwhile, so a peer's loss probe (a
	 * few ms after its last segment) or its RTO (200 ms at least) may have fired; the
	 * process was not scheduled on a loaded machine, or the loop blocked. The loop itself
	 * sleeps 1 ms at most. */
	uint64_t last_pass = start, longest_gap = 0;
	unsigned stalls = 0; /* such gaps of 5 ms or more */
	for (;;) {
		uint64_t t = now_ns(), gap = t - last_pass;
		last_pass = t;
		if (t > deadline) {
			fprintf(stderr, "timeout after %d s\n", timeout);
			break;
		}
		struct stat st;
		if (!started && stat(go, &st) == 0) {
			started = true;
			myrio_arp_announce(a.s);
			if (a.send_bytes &&
			    myrio_tcp_connect(a.s, a.send_ip, a.send_port, NULL, &a.out) == 0)
				a.out_state = 1;
			if (a.ref_port &&
			    myrio_tcp_connect(a.s, a.ref_ip, a.ref_port, NULL, &a.ref) == 0)
				a.ref_state = 1;
			start_probes(&a);
		}
		unsigned work = bridge(&a);
		work += (unsigned)myrio_stack_poll(a.s);
		if (started && work) {
			longest_gap = gap > longest_gap ? gap : longest_gap;
			stalls += gap >= 5000000;
		}
		pump_send(&a);
		for (unsigned i = 0; i < a.nin; i++)
			if (!a.in[i].done)
				drain_in(&a.in[i]);
		bool send_done = !a.send_bytes || a.out_state == 4 || a.out_state == -1;
		bool ref_done = (!a.ref_port || a.ref_state == 2 || a.ref_state == -1) &&
				a.unreach.state != 1 && a.udp_refused.state != 1;
		bool in_done = a.in_ok + a.in_bad >= a.expect_conns;
		for (unsigned i = 0; i < a.nin; i++)
			in_done = in_done && a.in[i].closed;
		if (started && send_done && ref_done && in_done &&
		    (a.expect_conns || a.send_bytes || a.ref_port || a.unreach.port ||
		     a.udp_refused.port))
			break;
		if (work == 0 && ++idle > 64) {
			if (tapfd >= 0) {
				struct pollfd pfd = {.fd = tapfd, .events = POLLIN};
				poll(&pfd, 1, 1);
			} else {
				struct timespec ts = {0, 20000};
				nanosleep(&ts, NULL);
			}
		} else if (work) {
			idle = 0;
		}
	}
	int status = 0;
	if (a.send_bytes) {
		if (a.out_state == 4) {
			double s = (double)(a.out_end_ns - a.out_start_ns) / 1e9;
			printf("sent %llu bytes to the kernel in %.2f s (%.1f MB/s)\n",
			       (unsigned long long)a.sent, s, (double)a.sent / s / 1e6);
			if (a.send_repeat)
				printf("sent on %u connections one after the other\n", a.sends_ok);
		} else {
			printf("send: FAILED (state %d, %llu of %llu bytes queued)\n", a.out_state,
			       (unsigned long long)a.sent, (unsigned long long)a.send_bytes);
			status = 1;
		}
	}
	if (a.ref_port && a.ref_state != 2) {
		printf("closed port: no RST seen\n");
		status = 1;
	}
	if ((a.unreach.port && a.unreach.state != 2) ||
	    (a.udp_refused.port && a.udp_refused.state != 2)) {
		printf("icmp: an expected error did not come\n");
		status = 1;
	}
	if (a.in_ok < a.expect_conns) {
		printf("inbound: %u of %u connections verified\n", a.in_ok, a.expect_conns);
		status = 1;
	}
	if (udp_port)
		printf("udp: %llu datagrams echoed\n", (unsigned long long)a.udp_echoed);
	struct myrio_stack_stats sst;
	myrio_stack_stats(a.s, &sst);
	printf("loop: longest gap between passes %.1f ms, %u gaps of 5 ms or more\n",
	       (double)longest_gap / 1e6, stalls);
	printf("icmp echo replies: %llu, tcp segs in %llu out %llu, retransmits %llu\n",
	       (unsigned long long)sst.icmp_echo_replies, (unsigned long long)sst.tcp_segs_in,
	       (unsigned long long)sst.tcp_segs_out, (unsigned long long)sst.tcp_retransmits);
	if (stats) {
		static char buf[8192];
		myrio_stack_stats_format(a.s, buf, sizeof(buf));
		fputs(buf, stdout);
		myrio_stack_conns_format(a.s, buf, sizeof(buf));
		fputs(buf, stdout);
		struct myrio_port_stats ps;
		if (myrio_port_stats(a.port, &ps) == 0)
			printf("port: rx %llu tx %llu refill_failed %llu tx_ring_full %llu "
			       "rx_missed %llu rx_errors %llu\n",
			       (unsigned long long)ps.rx_packets, (unsigned long long)ps.tx_packets,
			       (unsigned long long)ps.rx_refill_failed,
			       (unsigned long long)ps.tx_ring_full,
			       (unsigned long long)ps.rx_missed, (unsigned long long)ps.rx_errors);
		struct myrio_sim_host_stats ts;
		myrio_sim_host_stats(a.tap, &ts);
		printf("tap: to kernel %llu, from kernel %llu, dropped %llu\n",
		       (unsigned long long)ts.to_host, (unsigned long long)ts.from_host,
		       (unsigned long long)ts.drops);
	}
	fflush(stdout);
	if (l)
		myrio_tcp_listener_close(l);
	if (a.udp)
		myrio_udp_close(a.udp);
	if (a.udp_refused.u)
		myrio_udp_close(a.udp_refused.u);
	if (a.unreach.c)
		myrio_tcp_close(a.unreach.c);
	for (int i = 0; i < 20; i++) {
		bridge(&a);
		myrio_stack_poll(a.s);
	}
	myrio_stack_destroy(a.s);
	if (a.wire) {
		myrio_tx_burst(a.wire, NULL, 0);
		myrio_port_close(a.port);
		myrio_port_close(a.wire);
		myrio_pool_destroy(a.wire_pool);
		myrio_sim_host_close(a.tap);
	} else {
		myrio_port_close(a.port);
		myrio_sim_destroy(a.sim); /* and the cable's TAP endpoint with it */
	}
	return status;
}
