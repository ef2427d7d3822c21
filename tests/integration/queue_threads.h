/* SPDX-License-Identifier: BSD-3-Clause */
/* Two ports of NQ queues on the threaded model, joined by its cable, and one thread per
 * queue pair (queue q of both ports) sending and receiving numbered frames both ways. A
 * frame names the queue it was meant for (its flow hashes there), its direction and its
 * sequence number; its bytes are a function of those. The receiver checks every byte, the
 * queue, and that sequence numbers only grow (nothing duplicated, nothing reordered); gaps
 * are counted (frames lost), and once `strict` is set gaps fail the test. */
#ifndef QUEUE_THREADS_H
#define QUEUE_THREADS_H

#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "myrio/myrio.h"

#define QT_NQ 4
#define QT_IP_A 0x0a000001u
#define QT_IP_B 0x0a000002u
#define QT_HDR 64u /* Ethernet, IPv4, TCP ports, then the frame's own header */

struct qt_dir {
	struct myrio_port *from, *to;
	uint16_t sport, dport; /* a flow that hashes to the queue at the receiver */
	uint32_t next_seq;     /* sender's */
	uint32_t last_seq;     /* receiver's: the last seen + 1 (0: none yet) */
	uint64_t sent, gaps, bad;
	_Atomic uint64_t received; /* read by the main thread too */
	uint32_t strict_from;	   /* receiver: no gap allowed from this sequence on */
	uint64_t heard_ms;	   /* ms: when the receiver last got a frame of this direction */
};

struct qt_ctx;
struct qt_queue {
	struct qt_ctx *c;
	uint16_t q;
	struct myrio_pool *pool[2]; /* a's and b's, this thread's */
	struct qt_dir dir[2];	    /* 0: a -> b, 1: b -> a */
	uint64_t wrong_queue;
	bool strict_seen;
	char why[160]; /* first failure */
};

struct qt_ctx {
	struct myrio_sim *w;
	struct myrio_port *a, *b;
	uint8_t mac[2][6];
	struct qt_queue qs[QT_NQ];
	pthread_t th[QT_NQ];
	_Atomic bool stop;
	_Atomic bool strict; /* gaps fail from now on */
	/* b streams to a without a window, as a peer that never waits (market data over
	 * UDP): frames keep arriving at a whatever a sends */
	bool b_streams;
};

static inline uint64_t qt_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline uint8_t qt_byte(unsigned q, unsigned d, uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + q * 17u + d * 101u);
}

static inline uint32_t qt_len(uint32_t seq)
{
	return 80u + (seq * 37u) % 400u;
}

/* A source port whose flow from `from` lands on queue q of `to` (source = the remote end). */
static inline uint16_t qt_flow(struct myrio_port *to, uint32_t sip, uint32_t dip, uint16_t q,
			       uint16_t dport, uint16_t start)
{
	for (uint32_t sp = start; sp < 65535; sp++)
		if (myrio_port_rss_flow_queue(to, 6, htonl(sip), htonl(dip), htons((uint16_t)sp),
					      htons(dport), NULL) == q)
			return (uint16_t)sp;
	return 0;
}

/* Ethernet, IPv4 and the ports of a flow (what RSS hashes; addresses and ports in host
 * order), zeros up to QT_HDR. */
static inline void qt_headers(uint8_t *f, const uint8_t dst[6], const uint8_t src[6], uint8_t proto,
			      uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport)
{
	memset(f, 0, QT_HDR);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = proto;
	uint32_t s = htonl(sip), t = htonl(dip);
	memcpy(f + 26, &s, 4);
	memcpy(f + 30, &t, 4);
	uint16_t sp = htons(sport), dp = htons(dport);
	memcpy(f + 34, &sp, 2);
	memcpy(f + 36, &dp, 2);
}

static inline void qt_build(struct qt_ctx *c, struct qt_queue *qq, unsigned d, struct myrio_pkt *p,
			    uint32_t seq)
{
	struct qt_dir *dir = &qq->dir[d];
	uint8_t *f = myrio_pkt_data(p);
	uint32_t len = qt_len(seq);
	qt_headers(f, c->mac[!d], c->mac[d], 6, d ? QT_IP_B : QT_IP_A, d ? QT_IP_A : QT_IP_B,
		   dir->sport, dir->dport);
	f[54] = (uint8_t)qq->q;
	f[55] = (uint8_t)d;
	memcpy(f + 56, &seq, 4);
	for (uint32_t i = QT_HDR; i < len; i++)
		f[i] = qt_byte(qq->q, d, seq, i);
	p->len = len;
}

static inline void qt_fail(struct qt_queue *qq, const char *what, uint32_t seq)
{
	if (!qq->why[0])
		snprintf(qq->why, sizeof(qq->why), "queue %u: %s (seq %u)", qq->q, what, seq);
}

/* A frame received on queue qq->q of dir d's receiver. */
static inline void qt_check(struct qt_ctx *c, struct qt_queue *qq, unsigned d,
			    const struct myrio_pkt *p)
{
	struct qt_dir *dir = &qq->dir[d];
	const uint8_t *f = myrio_pkt_data(p);
	uint32_t seq;
	if (p->len < QT_HDR) {
		dir->bad++;
		qt_fail(qq, "a runt", 0);
		return;
	}
	memcpy(&seq, f + 56, 4);
	if (f[54] != qq->q || f[55] != d) {
		qq->wrong_queue++;
		qt_fail(qq, "a frame of another queue or direction", seq);
		return;
	}
	bool ok = p->len == qt_len(seq);
	for (uint32_t i = QT_HDR; ok && i < p->len; i++)
		ok = f[i] == qt_byte(qq->q, d, seq, i);
	if (!ok) {
		dir->bad++;
		qt_fail(qq, "bytes not as sent", seq);
		return;
	}
	if (dir->last_seq && seq < dir->last_seq) {
		dir->bad++;
		qt_fail(qq, "a frame twice or out of order", seq);
		return;
	}
	if (seq != dir->last_seq) {
		dir->gaps += seq - dir->last_seq;
		if (qq->strict_seen && dir->last_seq >= dir->strict_from)
			qt_fail(qq, "frames lost after the recovery", seq);
	}
	dir->last_seq = seq + 1;
	atomic_fetch_add_explicit(&dir->received, 1, memory_order_relaxed);
}

static inline void qt_send(struct qt_ctx *c, struct qt_queue *qq, unsigned d, unsigned n)
{
	struct qt_dir *dir = &qq->dir[d];
	struct myrio_pkt *pk[16];
	unsigned k = 0;
	while (k < n && k < 16 && (pk[k] = myrio_pkt_alloc(qq->pool[d])))
		qt_build(c, qq, d, pk[k], dir->next_seq + k), k++;
	uint16_t took = myrio_tx_burst_queue(dir->from, qq->q, pk, (uint16_t)k);
	for (unsigned i = took; i < k; i++)
		myrio_pkt_free(pk[i]); /* not taken: their numbers are used again */
	dir->next_seq += took;
	dir->sent += took;
}

static inline unsigned qt_receive(struct qt_ctx *c, struct qt_queue *qq, unsigned d)
{
	struct myrio_pkt *pk[32];
	uint16_t n = myrio_rx_burst_queue(qq->dir[d].to, qq->q, pk, 32);
	for (uint16_t i = 0; i < n; i++) {
		qt_check(c, qq, d, pk[i]);
		myrio_pkt_free(pk[i]);
	}
	if (n)
		qq->dir[d].heard_ms = qt_ms();
	return n;
}

/* A queue pair's thread: sends a few frames each way, receives, until told to stop; then
 * receives what is still on its way. */
static inline void *qt_worker(void *arg)
{
	struct qt_queue *qq = arg;
	struct qt_ctx *c = qq->c;
	qq->dir[0].heard_ms = qq->dir[1].heard_ms = qt_ms();
	while (!atomic_load(&c->stop)) {
		if (!qq->strict_seen && atomic_load(&c->strict)) {
			qq->strict_seen = true;
			for (unsigned d = 0; d < 2; d++)
				qq->dir[d].strict_from = qq->dir[d].next_seq;
		}
		/* A window of 256 frames each way. Lost frames open it again after a quiet
		 * moment of their own direction (they show as a gap when the next one
		 * arrives): frames lost in a reset can fill a window, and the other
		 * direction, still arriving, must not keep it shut. */
		uint64_t now = qt_ms();
		for (unsigned d = 0; d < 2; d++) {
			struct qt_dir *dir = &qq->dir[d];
			if (now - dir->heard_ms > 20 || (d == 1 && c->b_streams) ||
			    dir->sent - atomic_load(&dir->received) - dir->gaps < 256)
				qt_send(c, qq, d, 8);
		}
		if (qt_receive(c, qq, 0) + qt_receive(c, qq, 1) == 0)
			sched_yield();
	}
	uint64_t until = qt_ms() + 2000;
	while (qt_ms() < until) {
		bool all = true;
		for (unsigned d = 0; d < 2; d++)
			all = all && atomic_load(&qq->dir[d].received) + qq->dir[d].gaps >=
					 qq->dir[d].sent;
		if (all)
			break;
		if (!qt_receive(c, qq, 0) && !qt_receive(c, qq, 1))
			sched_yield();
		myrio_tx_burst_queue(qq->dir[0].from, qq->q, NULL, 0);
		myrio_tx_burst_queue(qq->dir[1].from, qq->q, NULL, 0);
	}
	return NULL;
}

/* The threaded model of spec, and a port conf on it. */
static inline int qt_world(struct myrio_sim **w, const char *spec, struct myrio_port_conf *pc)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (myrio_sim_conf_parse(&sc, spec) < 0 || myrio_sim_create(w, &sc) < 0)
		return -1;
	myrio_port_conf_init(pc);
	pc->sim = *w;
	return 0;
}

/* Opens both ports with NQ queues ("watchdog_ms=..." etc. in args), makes each queue's
 * pools and flows. */
static inline int qt_open(struct qt_ctx *c, const char *world, const char *args)
{
	memset(c, 0, sizeof(*c));
	struct myrio_port_conf pc;
	if (qt_world(&c->w, world, &pc) < 0)
		return -1;
	pc.driver_args = args;
	if (myrio_port_open_queues(&c->a, "sim:sim0", &pc, QT_NQ) < 0 ||
	    myrio_port_open_queues(&c->b, "sim:sim1", &pc, QT_NQ) < 0)
		return -1;
	struct myrio_port_info info;
	myrio_port_info(c->a, &info);
	memcpy(c->mac[0], info.mac, 6);
	myrio_port_info(c->b, &info);
	memcpy(c->mac[1], info.mac, 6);
	for (uint16_t q = 0; q < QT_NQ; q++) {
		struct qt_queue *qq = &c->qs[q];
		qq->c = c;
		qq->q = q;
		if (myrio_port_pool_create(c->a, 512, 2048, &qq->pool[0]) < 0 ||
		    myrio_port_pool_create(c->b, 512, 2048, &qq->pool[1]) < 0)
			return -1;
		qq->dir[0].from = qq->dir[1].to = c->a;
		qq->dir[0].to = qq->dir[1].from = c->b;
		qq->dir[0].dport = 5001;
		qq->dir[1].dport = 5002;
		qq->dir[0].sport = qt_flow(c->b, QT_IP_A, QT_IP_B, q, 5001, 20000);
		qq->dir[1].sport = qt_flow(c->a, QT_IP_B, QT_IP_A, q, 5002, 30000);
		if (!qq->dir[0].sport || !qq->dir[1].sport)
			return -1;
	}
	return 0;
}

static inline int qt_start(struct qt_ctx *c)
{
	for (uint16_t q = 0; q < QT_NQ; q++)
		if (pthread_create(&c->th[q], NULL, qt_worker, &c->qs[q]) != 0)
			return -1;
	return 0;
}

static inline void qt_join(struct qt_ctx *c)
{
	atomic_store(&c->stop, true);
	for (uint16_t q = 0; q < QT_NQ; q++)
		pthread_join(c->th[q], NULL);
}

static inline void qt_close(struct qt_ctx *c)
{
	for (uint16_t q = 0; q < QT_NQ; q++)
		for (unsigned d = 0; d < 2; d++)
			if (c->qs[q].pool[d]) {
				myrio_port_tx_drain(d ? c->b : c->a, c->qs[q].pool[d], 1000);
				myrio_pool_destroy(c->qs[q].pool[d]);
			}
	myrio_port_close(c->b);
	myrio_port_close(c->a);
	myrio_sim_destroy(c->w);
}

/* Frames received on every queue, both ways. */
static inline uint64_t qt_received(struct qt_ctx *c)
{
	uint64_t n = 0;
	for (unsigned q = 0; q < QT_NQ; q++)
		n +=
		    atomic_load(&c->qs[q].dir[0].received) + atomic_load(&c->qs[q].dir[1].received);
	return n;
}

#endif
