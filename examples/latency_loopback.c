/* SPDX-License-Identifier: BSD-3-Clause */
/* Latency loopback: two ports joined by a cable, one process, one thread.
 *
 * A client stack on port A sends a message to an echo server on port B and waits for it
 * to come back; both stacks are polled from the same loop, so the round trip covers the
 * stack and driver twice in each direction plus the NIC (or the device model) and the cable.
 * It measures a UDP ping-pong and then a TCP one and prints min/median/p99/p99.9/max and a
 * histogram of the round-trip times, and the CPU the measured round trips used.
 *
 *   latency_loopback                         in-process model, sim:sim0 <-> sim:sim1
 *   latency_loopback --sim link=unlimited    model options (see myrio/sim.h)
 *   latency_loopback simd:nic0 simd:nic1     two NICs of the model daemon, or two boards
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "myrio/myrio.h"

#define IP_A 0x0a000001u /* 10.0.0.1 */
#define IP_B 0x0a000002u /* 10.0.0.2 */
#define ECHO_PORT 7

struct side {
	struct myrio_port *port;
	struct myrio_stack *stack;
	struct myrio_tcp_conn *conn; /* client: connected; server: accepted */
};

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void poll_both(struct side *a, struct side *b)
{
	myrio_stack_poll(a->stack);
	myrio_stack_poll(b->stack);
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct side *side = arg;
	if (ev == MYRIO_TCP_EV_ACCEPTED || ev == MYRIO_TCP_EV_CONNECTED)
		side->conn = c;
}

static int open_side(struct side *s, const char *dev, uint32_t ip, uint32_t mtu,
		     struct myrio_sim *sim)
{
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.mtu = mtu;
	pc.sim = sim;
	int rc = myrio_port_open(&s->port, dev, &pc);
	if (rc < 0)
		return rc;
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	myrio_stack_conf_latency(&sc);
	sc.ip = ip;
	sc.netmask = 0xffffff00u;
	sc.tcp_event = on_tcp;
	sc.event_arg = s;
	return myrio_stack_create(&s->stack, s->port, &sc);
}

/* CPU used so far, in ns: this thread (both stacks), the model's thread, the process. */
struct cpu {
	uint64_t thread, model, process;
	bool has_model;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cpu_read(struct myrio_sim *sim, struct cpu *c)
{
	c->thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	c->process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	c->has_model = sim && myrio_sim_thread_cpu_ns(sim, &c->model) == 0;
}

/* One test's round trips: a warm-up of a tenth of them (or of the time limit), then at
 * most iters measured ones, which stop at the time limit (0: none). */
struct phase {
	unsigned iters, n;
	uint64_t limit_ns, t0, t1;
	bool measuring;
	struct myrio_sim *sim;
	struct cpu c0, c1;
	uint64_t *rtt;
};

static void phase_init(struct phase *p, unsigned iters, uint64_t limit_ns,
		       struct myrio_sim *sim, uint64_t *rtt)
{
	*p = (struct phase){.iters = iters, .limit_ns = limit_ns, .sim = sim, .rtt = rtt};
	p->t0 = now_ns();
}

/* Before round trip i: whether to make it. */
static bool phase_next(struct phase *p, unsigned i)
{
	uint64_t t = now_ns();
	if (!p->measuring && (i >= p->iters / 10 || (p->limit_ns && t - p->t0 > p->limit_ns / 10))) {
		p->measuring = true;
		p->t0 = t;
		cpu_read(p->sim, &p->c0);
	}
	return p->n < p->iters && !(p->measuring && p->limit_ns && t - p->t0 > p->limit_ns);
}

static void phase_record(struct phase *p, uint64_t rtt)
{
	if (p->measuring)
		p->rtt[p->n++] = rtt;
}

static void phase_end(struct phase *p)
{
	p->t1 = now_ns();
	cpu_read(p->sim, &p->c1);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Sorts the samples, prints the percentiles, a log2 histogram and the CPU. */
static void report(const char *what, const struct phase *p, unsigned size)
{
	uint64_t *rtt = p->rtt;
	unsigned n = p->n;
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("%s %u-byte round trips: %u\n", what, size, n);
	printf("  min %.2f us  median %.2f us  p99 %.2f us  p99.9 %.2f us  max %.2f us\n",
	       rtt[0] / 1e3, rtt[n / 2] / 1e3, rtt[(uint64_t)n * 99 / 100] / 1e3,
	       rtt[(uint64_t)n * 999 / 1000] / 1e3, rtt[n - 1] / 1e3);
	unsigned bucket[40] = {0};
	for (unsigned i = 0; i < n; i++) {
		unsigned b = 63 - (unsigned)__builtin_clzll(rtt[i] | 1);
		bucket[b < 39 ? b : 39]++;
	}
	for (unsigned b = 0; b < 40; b++) {
		if (!bucket[b])
			continue;
		int bar = (int)(50.0 * bucket[b] / n + 0.5);
		printf("  %8.2f us .. %8.2f us %8u %.*s\n", (1ull << b) / 1e3, (2ull << b) / 1e3,
		       bucket[b], bar ? bar : 1,
		       "##################################################");
	}
	printf("  cpu: thread %.6f s  model ", (p->c1.thread - p->c0.thread) / 1e9);
	if (p->c0.has_model && p->c1.has_model)
		printf("%.6f s", (p->c1.model - p->c0.model) / 1e9);
	else
		printf("n/a");
	printf("  process %.6f s  over %.6f s\n", (p->c1.process - p->c0.process) / 1e9,
	       (p->t1 - p->t0) / 1e9);
}

static int udp_pingpong(struct side *a, struct side *b, unsigned size, struct phase *ph)
{
	struct myrio_udp_sock *ua, *ub;
	if (myrio_udp_open(a->stack, 0, NULL, &ua) < 0 ||
	    myrio_udp_open(b->stack, ECHO_PORT, NULL, &ub) < 0)
		return -ENOBUFS;
	int rc = 0;
	for (unsigned i = 0; rc == 0 && phase_next(ph, i); i++) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(a->stack);
		if (!p)
			return -ENOBUFS;
		memset(myrio_pkt_data(p), (int)i, size);
		p->len = size;
		uint64_t t0 = now_ns();
		if ((rc = myrio_udp_sendto(ua, p, IP_B, ECHO_PORT)) < 0) {
			myrio_pkt_free(p); /* refused: still ours */
			break;
		}
		struct myrio_pkt *q = NULL;
		uint32_t ip;
		uint16_t port;
		while (!q) { /* server: echo what arrives */
			poll_both(a, b);
			struct myrio_pkt *e = myrio_udp_recv(ub, &ip, &port);
			if (e && (rc = myrio_udp_sendto(ub, e, ip, port)) < 0) {
				myrio_pkt_free(e);
				break;
			}
			q = myrio_udp_recv(ua, NULL, NULL);
			if (now_ns() - t0 > 5000000000ull) {
				fprintf(stderr, "udp: no echo within 5 s (lost?)\n");
				rc = -ETIMEDOUT;
				break;
			}
		}
		if (q) {
			if (q->len != size || myrio_pkt_data(q)[0] != (uint8_t)i)
				rc = -EBADMSG;
			myrio_pkt_free(q);
		}
		phase_record(ph, now_ns() - t0);
	}
	phase_end(ph);
	myrio_udp_close(ua);
	myrio_udp_close(ub);
	return rc;
}

static int tcp_pingpong(struct side *a, struct side *b, unsigned size, struct phase *ph)
{
	struct myrio_tcp_listener *l;
	struct myrio_tcp_conn *c;
	if (myrio_tcp_listen(b->stack, ECHO_PORT, 4, NULL, &l) < 0 ||
	    myrio_tcp_connect(a->stack, IP_B, ECHO_PORT, NULL, &c) < 0)
		return -ENOBUFS;
	uint64_t t0 = now_ns();
	while (!a->conn || !b->conn) {
		poll_both(a, b);
		if (now_ns() - t0 > 3000000000ull) {
			fprintf(stderr, "tcp: connection not established within 3 s\n");
			return -ETIMEDOUT;
		}
	}
	static uint8_t msg[65536], echo[65536];
	int rc = 0;
	for (unsigned i = 0; rc == 0 && phase_next(ph, i); i++) {
		memset(msg, (int)i, size);
		t0 = now_ns();
		size_t sent = 0, back = 0;
		while (back < size) {
			if (sent < size) {
				ssize_t w = myrio_tcp_write(a->conn, msg + sent, size - sent);
				sent += w > 0 ? (size_t)w : 0;
			}
			poll_both(a, b);
			ssize_t r = myrio_tcp_read(b->conn, echo, sizeof(echo)); /* echo server */
			for (ssize_t off = 0; r > 0 && off < r;) {
				ssize_t w = myrio_tcp_write(b->conn, echo + off, (size_t)(r - off));
				off += w > 0 ? w : 0;
				if (w <= 0)
					poll_both(a, b);
			}
			r = myrio_tcp_read(a->conn, echo, size - back);
			if (r > 0) {
				if (echo[0] != (uint8_t)i)
					rc = -EBADMSG;
				back += (size_t)r;
			}
			if (now_ns() - t0 > 5000000000ull) {
				fprintf(stderr, "tcp: no echo within 5 s\n");
				rc = -ETIMEDOUT;
				break;
			}
		}
		phase_record(ph, now_ns() - t0);
	}
	phase_end(ph);
	myrio_tcp_close(a->conn);
	myrio_tcp_close(b->conn);
	myrio_tcp_listener_close(l);
	for (int i = 0; i < 100; i++)
		poll_both(a, b);
	return rc;
}

static const char usage[] = "usage: latency_loopback [-n ITERS] [-d MS] [-s SIZE] "
			    "[--mtu 1500|9000] [--sim SPEC] [--pcap FILE] [DEV_A DEV_B]\n"
			    "  -d, --duration-ms MS: each test stops after MS ms of round trips "
			    "(0: after ITERS)\n";

int main(int argc, char **argv)
{
	unsigned iters = 100000, size = 32, mtu = 1500, duration_ms = 0;
	const char *sim_spec = "spin", *pcap = NULL;
	const struct cli_opt opts[] = {{"iters", 'n', .num = &iters}, {"size", 's', .num = &size},
				       {"duration-ms", 'd', .num = &duration_ms},
				       {"mtu", 0, .num = &mtu},	      {"sim", 0, .str = &sim_spec},
				       {"pcap", 0, .str = &pcap},     {0}};
	if (cli_parse(argc, argv, opts, usage) < 0)
		return 2;
	if (iters < 10 || size < 1 || size > mtu - 28 || (optind != argc && optind + 2 != argc)) {
		fputs(usage, stderr);
		return 2;
	}
	const char *dev_a = optind < argc ? argv[optind] : "sim:sim0";
	const char *dev_b = optind < argc ? argv[optind + 1] : "sim:sim1";

	struct myrio_sim *sim = NULL;
	if (optind == argc) {
		/* The model's thread is the NIC: it gets CPU 0 (it inherits its creator's CPU
		 * set), this thread the last CPU. */
		long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (ncpus > 1)
			pin(0);
		struct myrio_sim_conf simc;
		myrio_sim_conf_init(&simc);
		if (myrio_sim_conf_parse(&simc, sim_spec) < 0 || myrio_sim_create(&sim, &simc) < 0)
			return 1;
		printf("model timing: %s\n", simc.timing[0] ? simc.timing : "none");
		if (ncpus > 1)
			pin((int)ncpus - 1);
	}
	struct side a = {0}, b = {0};
	int rc = open_side(&a, dev_a, IP_A, mtu, sim);
	if (rc == 0)
		rc = open_side(&b, dev_b, IP_B, mtu, sim);
	if (rc == 0 && pcap)
		rc = myrio_port_capture_start(a.port, pcap);
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	if (rc == 0 && !rtt)
		rc = -ENOMEM;
	struct phase ph;
	uint64_t limit_ns = duration_ms * 1000000ull;
	phase_init(&ph, iters, limit_ns, sim, rtt);
	if (rc == 0)
		rc = udp_pingpong(&a, &b, size, &ph);
	if (rc == 0 && ph.n == 0)
		rc = -ETIMEDOUT; /* the warm-up took all the time */
	if (rc == 0)
		report("UDP", &ph, size);
	phase_init(&ph, iters, limit_ns, sim, rtt);
	if (rc == 0)
		rc = tcp_pingpong(&a, &b, size, &ph);
	if (rc == 0 && ph.n == 0)
		rc = -ETIMEDOUT;
	if (rc == 0)
		report("TCP", &ph, size);
	if (rc < 0)
		fprintf(stderr, "latency_loopback: %s\n", strerror(-rc));
	free(rtt);
	myrio_stack_destroy(a.stack);
	myrio_stack_destroy(b.stack);
	myrio_port_close(a.port);
	myrio_port_close(b.port);
	myrio_sim_destroy(sim);
	return rc < 0;
}
