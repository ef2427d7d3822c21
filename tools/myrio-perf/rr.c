/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP_RR and UDP_RR: A sends a request, B answers with a response, A counts a transaction
 * and sends the next request. --burst N keeps N more transactions in flight (netperf -b).
 *
 * Each end is the same machine: it counts the bytes (TCP) or datagrams (UDP) that arrive,
 * and every complete unit makes it owe the other end a unit of its own.
 */
#include <errno.h>
#include <string.h>

#include "perf.h"

struct rr_end {
	uint32_t in_size, out_size; /* bytes of a unit received, of a unit sent */
	uint64_t partial;	    /* TCP: bytes of the unit being received */
	uint64_t owed;		    /* bytes (TCP) or datagrams (UDP) still to send */
	uint64_t units;		    /* complete units received */
};

struct rr {
	struct rr_end a, b;
	uint64_t last_progress;
};

static int tcp_end_work(struct perf *pf, struct perf_side *side, struct rr_end *e)
{
	int n = 0;
	struct myrio_pkt *p;
	while ((p = myrio_tcp_recv(side->conn)) != NULL) {
		e->partial += p->len;
		myrio_tcp_release(side->conn, p);
		n++;
	}
	while (e->partial >= e->in_size) {
		e->partial -= e->in_size;
		e->units++;
		e->owed += e->out_size;
	}
	uint32_t mss = myrio_tcp_mss(side->conn);
	while (e->owed) {
		p = myrio_stack_pkt_alloc(side->stack);
		if (!p)
			break;
		p->len = e->owed < mss ? (uint32_t)e->owed : mss;
		uint32_t len = p->len;
		if (myrio_tcp_send(side->conn, p) < 0) {
			myrio_pkt_free(p);
			break;
		}
		e->owed -= len;
		n++;
	}
	return n;
}

static int udp_end_work(struct perf *pf, struct perf_side *side, struct rr_end *e, uint32_t peer_ip,
			uint16_t peer_port)
{
	int n = 0;
	struct myrio_pkt *p;
	while ((p = myrio_udp_recv(side->udp, NULL, NULL)) != NULL) {
		myrio_pkt_free(p);
		e->units++;
		e->owed++;
		n++;
	}
	while (e->owed) {
		p = myrio_stack_pkt_alloc(side->stack);
		if (!p)
			break;
		p->len = e->out_size;
		if (myrio_udp_sendto(side->udp, p, peer_ip, peer_port) < 0) {
			myrio_pkt_free(p);
			break;
		}
		e->owed--;
		n++;
	}
	return n;
}

static int work_a(struct perf *pf)
{
	struct rr *rr = pf->test;
	uint64_t before = rr->a.units;
	int n = pf->o.test == TCP_RR ? tcp_end_work(pf, &pf->a, &rr->a)
				     : udp_end_work(pf, &pf->a, &rr->a, PERF_IP_B, PERF_PORT);
	pf->r.trans += rr->a.units - before;
	if (pf->o.test == UDP_RR) {
		/* A lost datagram would stop the ping-pong: after 50 ms of silence, resend. */
		uint64_t now = n ? perf_now_ns() : 0;
		if (n)
			rr->last_progress = now;
		else if ((now = perf_now_ns()) - rr->last_progress > 50000000ull) {
			rr->a.owed++;
			pf->r.send_errors++;
			rr->last_progress = now;
		}
	}
	return n;
}

static int work_b(struct perf *pf)
{
	struct rr *rr = pf->test;
	return pf->o.test == TCP_RR ? tcp_end_work(pf, &pf->b, &rr->b)
				    : udp_end_work(pf, &pf->b, &rr->b, PERF_IP_A, PERF_PORT + 1);
}

static bool first_done(struct perf *pf)
{
	return ((struct rr *)pf->test)->a.units > 0;
}

int perf_rr(struct perf *pf)
{
	static struct rr rr;
	memset(&rr, 0, sizeof(rr));
	pf->test = &rr;
	uint32_t req = pf->o.req_size ? pf->o.req_size : 1;
	uint32_t resp = pf->o.resp_size ? pf->o.resp_size : 1;
	rr.a = (struct rr_end){.in_size = resp, .out_size = req};
	rr.b = (struct rr_end){.in_size = req, .out_size = resp};
	int rc;
	if (pf->o.test == UDP_RR) {
		if (req > pf->o.mtu - 28 || resp > pf->o.mtu - 28) {
			fprintf(stderr, "myrio-perf: UDP_RR sizes must fit one datagram (%u)\n",
				pf->o.mtu - 28);
			return -EINVAL;
		}
		if ((rc = myrio_udp_open(pf->a.stack, PERF_PORT + 1, NULL, &pf->a.udp)) < 0 ||
		    (rc = myrio_udp_open(pf->b.stack, PERF_PORT, NULL, &pf->b.udp)) < 0)
			return rc;
		rr.a.owed = 1; /* the rest once addresses are resolved: ARP queues are short */
	} else {
		if ((rc = perf_tcp_connect(pf)) < 0)
			return rc;
		rr.a.owed = req;
		struct myrio_tcp_conn_stats cs;
		myrio_tcp_conn_stats(pf->b.conn, &cs);
		pf->r.rcv_sock = cs.rcv_wnd;
		pf->r.snd_sock = myrio_tcp_send_space(pf->a.conn) * myrio_tcp_mss(pf->a.conn);
	}
	/* Warm up (ARP, first transactions) for 100 ms, then measure. */
	pf->work_a = work_a;
	pf->work_b = work_b;
	rr.last_progress = perf_now_ns();
	if (!perf_settle(pf, first_done, 2.0)) {
		fprintf(stderr, "myrio-perf: the first transaction did not complete within 2 s\n");
		return -ETIMEDOUT;
	}
	rr.a.owed += (uint64_t)(pf->o.test == UDP_RR ? 1 : req) * pf->o.burst;
	perf_settle(pf, NULL, 0.1);
	pf->r.trans = 0;
	pf->r.send_errors = 0;
	uint64_t sent0 = rr.b.units, recv0 = rr.a.units;
	rc = perf_run(pf, pf->o.seconds, NULL, perf_test_name(pf->o.test));
	pf->r.msgs_sent = rr.b.units - sent0;
	pf->r.msgs_recv = rr.a.units - recv0;
	pf->r.bytes_sent = pf->r.msgs_sent * req;
	pf->r.bytes_recv = pf->r.msgs_recv * resp;
	pf->work_a = pf->work_b = NULL;
	if (pf->r.trans == 0) {
		fprintf(stderr, "myrio-perf: no transaction completed\n");
		rc = -EIO;
	}
	return rc;
}
