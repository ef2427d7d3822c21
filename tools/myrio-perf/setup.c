/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening the two sides: the in-process model (or two given devices), ports and stacks. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"

uint64_t perf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct perf_side *side = arg;
	if ((ev == MYRIO_TCP_EV_ACCEPTED || ev == MYRIO_TCP_EV_CONNECTED) && !side->conn)
		side->conn = c;
	else if ((ev == MYRIO_TCP_EV_CLOSED || ev == MYRIO_TCP_EV_ERROR) && c == side->conn)
		side->closed = true;
}

/* Sleeping on interrupts: streams batch 200 us of frames per wake-up (the service demand
 * the published tables imply needs it); request/response waits for each answer, so its
 * interrupts come at once. Busy polling needs none. */
static uint32_t default_coal_us(const struct perf_opts *o)
{
	if (!o->irq)
		return 0;
	return o->test == TCP_RR || o->test == UDP_RR ? 0 : 200;
}

/* A stepped model's stacks run on model time, so that a run's timers (delayed ACKs,
 * retransmissions) do not depend on how fast the host steps it; 1 s on, as a clock that
 * starts at 0 would make "at 0" ambiguous. */
static uint64_t model_clock(void *sim)
{
	return 1000000000ull + myrio_sim_now_ns(sim);
}

void perf_port_conf(struct perf *pf, struct myrio_port_conf *pc)
{
	myrio_port_conf_init(pc);
	pc->mtu = pf->o.mtu;
	pc->sim = pf->sim;
	pc->irq = pf->o.irq;
	pc->intr_coal_us =
	    pf->o.coal_us != PERF_COAL_DEFAULT ? pf->o.coal_us : default_coal_us(&pf->o);
	pf->coal_us = pc->intr_coal_us;
}

void perf_stack_conf(struct perf *pf, const struct myrio_port_info *info, uint32_t ip,
		     uint32_t conns, struct myrio_stack_conf *sc)
{
	/* Never more packets in flight than the NIC's send ring holds (one descriptor per
	 * tx_boundary a frame touches, §5.4): a full ring would drop. */
	uint32_t b = info->tx_boundary; /* 0: no boundary, one descriptor a frame */
	uint32_t descs = b ? (info->max_frame + b - 1) / b + 1 : 1;
	uint32_t in_flight = info->tx_ring_entries / descs;
	/* With coalesced interrupts the NIC reports send completions late, so the ring holds
	 * frames TCP already saw acknowledged: keep half the ring for them. */
	if (pf->coal_us)
		in_flight /= 2;
	myrio_stack_conf_init(sc);
	if (pf->o.test == TCP_RR || pf->o.test == UDP_RR)
		myrio_stack_conf_latency(sc);
	sc->ip = ip;
	sc->netmask = 0xffffff00u;
	sc->timestamps = pf->o.timestamps;
	sc->tso = pf->o.tso;
	sc->rcv_buf = 4u << 20;
	/* the connections of one stack share its queue's send ring */
	sc->snd_queue_segs = conns > 1 && in_flight / conns ? in_flight / conns : in_flight;
	sc->tx_pool_size = in_flight < 64 ? 64 : in_flight; /* UDP: an empty pool paces */
	if (pf->o.test != UDP_STREAM)
		sc->tx_pool_size += 1024;
	if (pf->stepped) {
		sc->clock = model_clock;
		sc->clock_arg = pf->sim;
	}
}

static int open_side(struct perf *pf, struct perf_side *side, const char *dev, uint32_t ip)
{
	struct myrio_port_conf pc;
	perf_port_conf(pf, &pc);
	int rc = myrio_port_open(&side->port, dev, &pc);
	if (rc < 0)
		return rc;
	myrio_port_info(side->port, &side->info);
	side->irq_fd = -1;
	if (pf->o.irq) {
		side->irq_fd = myrio_port_irq_fd(side->port);
		if (side->irq_fd < 0) {
			fprintf(stderr,
				"myrio-perf: %s has no interrupt eventfd: --irq needs one\n", dev);
			return side->irq_fd;
		}
	}
	struct myrio_stack_conf sc;
	perf_stack_conf(pf, &side->info, ip, 1, &sc);
	sc.tcp_event = on_tcp;
	sc.event_arg = side;
	return myrio_stack_create(&side->stack, side->port, &sc);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int perf_open_model(struct perf *pf, const char *extra)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	int rc = myrio_sim_conf_parse(&sc, pf->o.sim_spec);
	if (rc == 0)
		rc = myrio_sim_conf_parse(&sc, extra);
	if (rc < 0) {
		fprintf(stderr, "myrio-perf: bad model options '%s'\n", pf->o.sim_spec);
		return rc;
	}
	if (sc.stepped && pf->o.irq) {
		fprintf(stderr, "myrio-perf: a stepped model raises no interrupts\n");
		return -EINVAL;
	}
	pf->stepped = sc.stepped;
	return myrio_sim_create(&pf->sim, &sc);
}

int perf_open(struct perf *pf)
{
	const char *da = pf->o.dev_a, *db = pf->o.dev_b;
	/* The model's thread is the NIC: give it the first CPU and this thread the last (the
	 * model thread inherits its creator's CPU set). */
	bool pin_cpus = !da && pf->o.pin && pf->ncpus > 1;
	if (pin_cpus)
		pin(0);
	if (!da) {
		int rc = perf_open_model(pf, NULL);
		if (rc < 0)
			return rc;
		da = "sim:sim0";
		db = "sim:sim1";
	}
	if (pin_cpus)
		pin(pf->ncpus - 1);
	int rc = open_side(pf, &pf->a, da, PERF_IP_A);
	if (rc == 0)
		rc = open_side(pf, &pf->b, db, PERF_IP_B);
	if (rc == 0 && pf->o.pcap)
		rc = myrio_port_capture_start(pf->a.port, pf->o.pcap);
	return rc;
}

static void close_side(struct perf_side *s)
{
	if (s->conn)
		myrio_tcp_abort(s->conn);
	if (s->udp)
		myrio_udp_close(s->udp);
	myrio_stack_destroy(s->stack);
	myrio_port_close(s->port);
	memset(s, 0, sizeof(*s));
}

void perf_close(struct perf *pf)
{
	close_side(&pf->a);
	close_side(&pf->b);
	myrio_sim_destroy(pf->sim);
	pf->sim = NULL;
}

static bool both_connected(struct perf *pf)
{
	return pf->a.conn && pf->b.conn && myrio_tcp_state(pf->a.conn) == MYRIO_TCP_ESTABLISHED;
}

int perf_tcp_connect(struct perf *pf)
{
	struct myrio_tcp_listener *l;
	struct myrio_tcp_conn *c;
	int rc = myrio_tcp_listen(pf->b.stack, PERF_PORT, 4, NULL, &l);
	if (rc == 0)
		rc = myrio_tcp_connect(pf->a.stack, PERF_IP_B, PERF_PORT, NULL, &c);
	if (rc < 0)
		return rc;
	bool ok = perf_settle(pf, both_connected, 5.0);
	myrio_tcp_listener_close(l);
	if (!ok) {
		fprintf(stderr, "myrio-perf: TCP connection not established within 5 s\n");
		return -ETIMEDOUT;
	}
	return 0;
}
