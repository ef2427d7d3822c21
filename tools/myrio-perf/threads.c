/* SPDX-License-Identifier: BSD-3-Clause */
/* -T N: N queues on each port (the Myri-10G's slices), N threads, one stack per queue at
 * each end; thread q polls queue q's stack of side A and of side B.
 *
 * TCP_STREAM opens --conns connections from every stack of A (TCP_RR one); each stack
 * picks source ports whose RSS hash brings the answers back to it, and B's end of a
 * connection lives on whichever of B's stacks its hash names, so a thread serves the
 * connections its queue receives at both ends. The run checks that every connection is on
 * the stack its hash names at both ends and, at the end, that the bytes received are the
 * bytes sent, exactly (with --verify, each byte too).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"

#define BURST 32
#define PATTERN 251u /* prime: a shifted stream never matches by accident */

enum phase { PH_CONNECT, PH_RUN, PH_DRAIN, PH_DONE };

/* One end of a connection: its stream offsets, and for RR its transaction state. */
struct flow {
	struct myrio_tcp_conn *c;
	uint64_t sent, recvd; /* stream bytes */
	uint64_t partial;     /* RR: bytes of the unit being received */
	uint64_t owed;	      /* RR: bytes still to send */
	bool a_side;
};

struct lane {
	struct threads *t;
	uint16_t q;
	struct myrio_stack *a, *b;
	struct flow *flows; /* the connections this lane's stacks hold, either end */
	unsigned nflows, cap;
	_Atomic uint64_t bytes_sent, bytes_recv, trans, bad, wrong_stack, established;
	pthread_t th;
};

struct threads {
	struct perf *pf;
	struct myrio_port *pa, *pb;
	struct lane lane[16];
	unsigned n, conns; /* threads, connections per thread */
	_Atomic int phase;
};

static void add(_Atomic uint64_t *v, uint64_t d)
{
	atomic_fetch_add_explicit(v, d, memory_order_relaxed);
}

static uint64_t sum(struct threads *t, size_t off)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < t->n; i++)
		s += atomic_load_explicit((_Atomic uint64_t *)((char *)&t->lane[i] + off),
					  memory_order_relaxed);
	return s;
}
#define SUM(t, field) sum((t), offsetof(struct lane, field))

/* The connection is on the stack its RSS hash names. */
static bool on_its_queue(struct myrio_port *port, struct myrio_tcp_conn *c, uint16_t q)
{
	uint32_t lip, rip;
	uint16_t lport, rport;
	myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
	int hq = myrio_port_rss_flow_queue(port, 6, htonl(rip), htonl(lip), htons(rport),
					   htons(lport), NULL);
	return hq < 0 || hq == q;
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev, bool a_side)
{
	struct lane *ln = arg;
	if (ev != MYRIO_TCP_EV_ACCEPTED && ev != MYRIO_TCP_EV_CONNECTED) {
		if (ev == MYRIO_TCP_EV_ERROR && atomic_load(&ln->t->phase) != PH_DONE)
			add(&ln->bad, 1);
		return;
	}
	if (ln->nflows == ln->cap) { /* more than the lanes opened: not ours */
		myrio_tcp_abort(c);
		add(&ln->bad, 1);
		return;
	}
	struct flow *f = &ln->flows[ln->nflows++];
	*f = (struct flow){.c = c, .a_side = a_side};
	if (a_side && ln->t->pf->o.test == TCP_RR)
		f->owed = ln->t->pf->o.req_size;
	myrio_tcp_set_user(c, f);
	if (!on_its_queue(a_side ? ln->t->pa : ln->t->pb, c, ln->q))
		add(&ln->wrong_stack, 1);
	add(&ln->established, 1);
}

static void on_tcp_a(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	on_tcp(arg, c, ev, true);
}

static void on_tcp_b(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	on_tcp(arg, c, ev, false);
}

/* TCP_STREAM, side A: fills bursts of pool buffers (the pattern with --verify). */
static int stream_send(struct lane *ln, struct flow *f, uint32_t seg)
{
	struct myrio_stack *s = ln->a;
	uint32_t room = myrio_tcp_send_space(f->c);
	unsigned n = room < BURST ? room : BURST, sent = 0;
	for (; sent < n; sent++) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
		if (!p)
			break;
		p->len = seg;
		if (ln->t->pf->o.verify) {
			uint8_t *d = myrio_pkt_data(p);
			for (uint32_t i = 0; i < seg; i++)
				d[i] = (uint8_t)((f->sent + i) % PATTERN);
		}
		if (myrio_tcp_send(f->c, p) < 0) {
			myrio_pkt_free(p);
			break;
		}
		f->sent += seg;
		add(&ln->bytes_sent, seg);
	}
	return (int)sent;
}

static int stream_recv(struct lane *ln, struct flow *f)
{
	struct myrio_pkt *p;
	int n = 0;
	while ((p = myrio_tcp_recv(f->c)) != NULL) {
		if (ln->t->pf->o.verify) {
			const uint8_t *d = myrio_pkt_data(p);
			uint64_t bad = 0;
			for (uint32_t i = 0; i < p->len; i++)
				bad += d[i] != (f->recvd + i) % PATTERN;
			if (bad)
				add(&ln->bad, bad);
		}
		f->recvd += p->len;
		add(&ln->bytes_recv, p->len);
		myrio_tcp_release(f->c, p);
		n++;
	}
	return n;
}

/* TCP_RR: every complete unit received makes this end owe the other one of its own. */
static int rr_work(struct lane *ln, struct flow *f)
{
	const struct perf_opts *o = &ln->t->pf->o;
	uint32_t in = f->a_side ? o->resp_size : o->req_size;
	uint32_t out = f->a_side ? o->req_size : o->resp_size;
	int n = 0;
	struct myrio_pkt *p;
	while ((p = myrio_tcp_recv(f->c)) != NULL) {
		f->partial += p->len;
		add(&ln->bytes_recv, p->len);
		myrio_tcp_release(f->c, p);
		n++;
	}
	for (; f->partial >= in; f->partial -= in) {
		if (f->a_side)
			add(&ln->trans, 1);
		f->owed += out;
	}
	uint32_t mss = myrio_tcp_mss(f->c);
	while (f->owed && (p = myrio_stack_pkt_alloc(f->a_side ? ln->a : ln->b))) {
		p->len = f->owed < mss ? (uint32_t)f->owed : mss;
		uint32_t len = p->len;
		if (myrio_tcp_send(f->c, p) < 0) {
			myrio_pkt_free(p);
			break;
		}
		f->owed -= len;
		add(&ln->bytes_sent, len);
		n++;
	}
	return n;
}

static void *lane_run(void *arg)
{
	struct lane *ln = arg;
	struct threads *t = ln->t;
	bool rr = t->pf->o.test == TCP_RR;
	uint32_t seg = 0;
	int ph;
	while ((ph = atomic_load_explicit(&t->phase, memory_order_acquire)) != PH_DONE) {
		myrio_stack_poll(ln->a);
		myrio_stack_poll(ln->b);
		for (unsigned i = 0; i < ln->nflows; i++) {
			struct flow *f = &ln->flows[i];
			if (rr) {
				if (ph != PH_CONNECT)
					rr_work(ln, f);
				continue;
			}
			if (!f->a_side) {
				stream_recv(ln, f);
				continue;
			}
			if (ph != PH_RUN)
				continue;
			if (!seg) {
				uint32_t mss = myrio_tcp_mss(f->c);
				uint32_t m = t->pf->o.msg_size;
				seg = m && m < mss ? m : mss;
			}
			stream_send(ln, f, seg);
		}
	}
	return NULL;
}

static int open_lanes(struct threads *t)
{
	struct perf *pf = t->pf;
	const char *da = pf->o.dev_a, *db = pf->o.dev_b;
	int rc;
	if (!da) {
		if ((rc = perf_open_model(pf, "eeprom_fw=rss")) < 0)
			return rc;
		if (pf->stepped) {
			fprintf(stderr, "myrio-perf: -T needs the model's thread, not 'stepped'\n");
			return -EINVAL;
		}
		da = "sim:sim0";
		db = "sim:sim1";
	}
	struct myrio_port_conf pc;
	perf_port_conf(pf, &pc);
	if ((rc = myrio_port_open_queues(&t->pa, da, &pc, (uint16_t)t->n)) < 0 ||
	    (rc = myrio_port_open_queues(&t->pb, db, &pc, (uint16_t)t->n)) < 0)
		return rc;
	if (myrio_port_queues(t->pa) != (int)t->n || myrio_port_queues(t->pb) != (int)t->n) {
		fprintf(stderr, "myrio-perf: the ports did not open %u queues\n", t->n);
		return -ENOTSUP;
	}
	struct myrio_port_info ia, ib;
	myrio_port_info(t->pa, &ia);
	myrio_port_info(t->pb, &ib);
	for (unsigned q = 0; q < t->n; q++) {
		struct lane *ln = &t->lane[q];
		ln->t = t;
		ln->q = (uint16_t)q;
		/* B's end of every connection may land on any lane */
		ln->cap = t->conns * (t->n + 1);
		if (!(ln->flows = calloc(ln->cap, sizeof(*ln->flows))))
			return -ENOMEM;
		struct myrio_stack_conf ca, cb;
		perf_stack_conf(pf, &ia, PERF_IP_A, t->conns, &ca);
		perf_stack_conf(pf, &ib, PERF_IP_B, t->conns, &cb);
		ca.max_tcp_conns = cb.max_tcp_conns = ln->cap + 8;
		ca.tcp_event = on_tcp_a;
		cb.tcp_event = on_tcp_b;
		ca.event_arg = cb.event_arg = ln;
		if ((rc = myrio_stack_create_queue(&ln->a, t->pa, ln->q, &ca,
						   q ? t->lane[0].a : NULL)) < 0 ||
		    (rc = myrio_stack_create_queue(&ln->b, t->pb, ln->q, &cb,
						   q ? t->lane[0].b : NULL)) < 0)
			return rc;
		struct myrio_tcp_listener *l;
		if ((rc = myrio_tcp_listen(ln->b, PERF_PORT, (int)ln->cap, NULL, &l)) < 0)
			return rc;
	}
	for (unsigned q = 0; q < t->n; q++)
		for (unsigned i = 0; i < t->conns; i++) {
			struct myrio_tcp_conn *c;
			if ((rc = myrio_tcp_connect(t->lane[q].a, PERF_IP_B, PERF_PORT, NULL, &c)) <
			    0)
				return rc;
		}
	return 0;
}

static void close_lanes(struct threads *t)
{
	for (unsigned q = 0; q < t->n; q++) {
		struct lane *ln = &t->lane[q];
		myrio_stack_destroy(ln->a);
		myrio_stack_destroy(ln->b);
		free(ln->flows);
	}
	myrio_port_close(t->pa);
	myrio_port_close(t->pb);
	myrio_sim_destroy(t->pf->sim);
	t->pf->sim = NULL;
}

static void wait_for(struct threads *t, bool (*cond)(struct threads *), double seconds)
{
	uint64_t end = perf_now_ns() + (uint64_t)(seconds * 1e9);
	while (!cond(t) && perf_now_ns() < end) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static bool all_established(struct threads *t)
{
	return SUM(t, established) == 2ull * t->n * t->conns;
}

static bool rr_started(struct threads *t)
{
	return SUM(t, trans) >= t->n * t->conns;
}

static bool all_arrived(struct threads *t)
{
	return SUM(t, bytes_recv) == SUM(t, bytes_sent);
}

static void print(struct threads *t, double elapsed, uint64_t recv, uint64_t trans, bool exact)
{
	struct perf *pf = t->pf;
	const struct perf_opts *o = &pf->o;
	double mbps = elapsed > 0 ? recv * 8 / elapsed / 1e6 : 0;
	double tps = elapsed > 0 ? trans / elapsed : 0;
	uint64_t sent = SUM(t, bytes_sent), got = SUM(t, bytes_recv);
	uint64_t bad = SUM(t, bad), wrong = SUM(t, wrong_stack);
	if (o->json) {
		printf("{\"test\": \"%s\", \"threads\": %u, \"connections\": %u, \"mtu\": %u, "
		       "\"elapsed_s\": %.4f, \"throughput_mbps\": %.3f, \"trans_per_s\": %.2f, "
		       "\"transactions\": %llu, \"bytes_sent\": %llu, \"bytes_received\": %llu, "
		       "\"exact\": %s, \"failed\": %llu, \"wrong_stack\": %llu, "
		       "\"verified\": %s, \"cpu_process_s\": %.6f, \"cpu_model_s\": %.6f}\n",
		       perf_test_name(o->test), t->n, t->n * t->conns, o->mtu, elapsed, mbps, tps,
		       (unsigned long long)trans, (unsigned long long)sent, (unsigned long long)got,
		       exact ? "true" : "false", (unsigned long long)bad, (unsigned long long)wrong,
		       o->verify && !bad && exact ? "true" : "false", pf->r.cpu_process,
		       pf->r.cpu_model);
		return;
	}
	printf("MYRIO-PERF %s, -T %u (a queue and a thread each), %u connections, %s, MTU %u\n",
	       perf_test_name(o->test), t->n, t->n * t->conns,
	       o->dev_a ? o->dev_a : "in-process model", o->mtu);
	if (o->test == TCP_RR)
		printf("%.2f s: %.2f trans/s (%.2f per thread)\n", elapsed, tps, tps / t->n);
	else
		printf("%.2f s: %.2f 10^6bits/s (%.2f per thread)\n", elapsed, mbps, mbps / t->n);
	printf("%llu bytes sent, %llu received%s; %llu failed, %llu connections on the wrong "
	       "stack; CPU: process %.2f s, model %.2f s\n",
	       (unsigned long long)sent, (unsigned long long)got, exact ? " (exact)" : "",
	       (unsigned long long)bad, (unsigned long long)wrong, pf->r.cpu_process,
	       pf->r.cpu_model);
}

int perf_threads(struct perf *pf, unsigned n, unsigned conns)
{
	if (pf->o.test != TCP_STREAM && pf->o.test != TCP_RR) {
		fprintf(stderr, "myrio-perf: -T runs TCP_STREAM and TCP_RR\n");
		return -EINVAL;
	}
	if (pf->o.irq || pf->o.copy || pf->o.pcap || pf->o.burst) {
		fprintf(stderr, "myrio-perf: -T polls busily, without --irq, --copy, --pcap, "
				"--burst\n");
		return -EINVAL;
	}
	static struct threads t;
	memset(&t, 0, sizeof(t));
	t.pf = pf;
	t.n = n;
	t.conns = conns;
	int rc = open_lanes(&t);
	unsigned started = 0;
	for (; rc == 0 && started < n; started++)
		if (pthread_create(&t.lane[started].th, NULL, lane_run, &t.lane[started]) != 0)
			rc = -EAGAIN;
	if (rc == 0) {
		wait_for(&t, all_established, 5.0);
		if (!all_established(&t)) {
			fprintf(stderr, "myrio-perf: %llu of %u connection ends within 5 s\n",
				(unsigned long long)SUM(&t, established), 2 * n * conns);
			rc = -ETIMEDOUT;
		}
	}
	double elapsed = 0;
	uint64_t recv = 0, trans = 0;
	bool exact = false;
	if (rc == 0) {
		atomic_store(&t.phase, PH_RUN);
		if (pf->o.test == TCP_RR)
			wait_for(&t, rr_started, 2.0);
		double proc0 = 0;
		uint64_t model0 = 0;
		bool model = pf->sim && myrio_sim_thread_cpu_ns(pf->sim, &model0) == 0;
		struct timespec ts;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		proc0 = ts.tv_sec + ts.tv_nsec / 1e9;
		uint64_t start = perf_now_ns(), recv0 = SUM(&t, bytes_recv),
			 trans0 = SUM(&t, trans);
		struct timespec len = {(time_t)pf->o.seconds,
				       (long)((pf->o.seconds - (time_t)pf->o.seconds) * 1e9)};
		nanosleep(&len, NULL);
		if (pf->o.test == TCP_STREAM)
			atomic_store(&t.phase, PH_DRAIN);
		recv = SUM(&t, bytes_recv) - recv0;
		trans = SUM(&t, trans) - trans0;
		elapsed = (perf_now_ns() - start) / 1e9;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		pf->r.cpu_process = ts.tv_sec + ts.tv_nsec / 1e9 - proc0;
		uint64_t model1 = 0;
		pf->r.cpu_model = model && myrio_sim_thread_cpu_ns(pf->sim, &model1) == 0
				      ? (double)(model1 - model0) / 1e9
				      : -1;
		if (pf->o.test == TCP_STREAM) {
			/* what was received within the time counts; the rest must still arrive */
			wait_for(&t, all_arrived, 10.0);
			exact = all_arrived(&t);
		} else {
			/* each connection has one transaction in flight: no total to compare */
			exact = true;
		}
	}
	atomic_store(&t.phase, PH_DONE);
	for (unsigned i = 0; i < started; i++)
		pthread_join(t.lane[i].th, NULL);
	if (elapsed > 0)
		print(&t, elapsed, recv, trans, exact);
	if (rc == 0 && (!exact || SUM(&t, bad) || SUM(&t, wrong_stack) || (!recv && !trans))) {
		fprintf(stderr, "myrio-perf: -T %u: %s\n", n,
			!exact ? "the bytes received are not the bytes sent"
			       : "failed bytes, errors or connections on the wrong stack");
		rc = -EIO;
	}
	close_lanes(&t);
	return rc;
}
