/* SPDX-License-Identifier: BSD-3-Clause */
/* Two tcp_lite stacks on two NICs of a stepped device model joined by a cable: the whole
 * library (stack, port, myri10ge driver, model) in one deterministic process. The stacks'
 * clock is the model's virtual time, so timers, retransmissions and link flaps happen in
 * the same time line. Shared by the fault-injection and load tests.
 *
 * A transfer moves a checked byte pattern (the byte at stream offset i is test_pattern(i)) and
 * counts every byte, so a loss, duplication or reordering of data shows as a mismatch. */
#ifndef MODEL_PAIR_H
#define MODEL_PAIR_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrio/port.h"
#include "myrio/sim.h"
#include "link_pair.h"
#include "test_pattern.h"
#include "myrio/tcp_lite.h"
#include "sim/model.h"
#include "sim/nic.h" /* sim_world_now: the model's virtual time */
#include "port/port_ops.h"

#define MP_IP_A 0x0a000001u /* 10.0.0.1 on sim0 */
#define MP_IP_B 0x0a000002u /* 10.0.0.2 on sim1 */

struct mp_stream {
	struct myrio_tcp_conn *c;
	uint64_t sent, rcvd;  /* pattern bytes written / read and verified */
	uint64_t to_send;
	uint64_t bad;         /* bytes that did not match the pattern */
	bool connected, eof, closed, error;
	int err;
};

/* What a stack is bound to: the NIC's port, plus a model that keeps running while the
 * stack waits inside myrio_stack_destroy for its transmit buffers (it polls the port with
 * empty tx bursts). A stepped model only moves when stepped; a real NIC (or the threaded
 * model) runs on its own. */
struct mp_wrap {
	struct myrio_port port;
	struct myrio_port *inner;
	struct myrio_sim *w;
};

struct model_pair {
	struct link_pair link;
	struct myrio_sim *w;	    /* link.sim */
	struct myrio_port *pa, *pb; /* link.a, link.b */
	struct mp_wrap wa, wb;
	struct myrio_stack *a, *b;
	unsigned steps_per_round; /* model iterations (1 us each) between polls */
	struct mp_stream *streams; /* indexed by myrio_tcp_user - 1 */
	unsigned nstreams, max_streams;
	uint64_t accepted, connected, errors, closed;
	uint64_t want; /* bytes of the transfer mp_transfer started */
};


static inline uint64_t mp_clock(void *arg)
{
	struct model_pair *m = arg;
	return 1000000000ull + sim_world_now(m->w);
}

static inline struct mp_stream *mp_stream_of(struct model_pair *m, struct myrio_tcp_conn *c)
{
	uintptr_t u = (uintptr_t)myrio_tcp_user(c);
	if (u == 0 || u > m->nstreams)
		return NULL;
	return &m->streams[u - 1];
}

static inline struct mp_stream *mp_stream_new(struct model_pair *m, struct myrio_tcp_conn *c)
{
	if (m->nstreams == m->max_streams)
		return NULL;
	struct mp_stream *s = &m->streams[m->nstreams++];
	memset(s, 0, sizeof(*s));
	s->c = c;
	if (c)
		myrio_tcp_set_user(c, (void *)(uintptr_t)m->nstreams);
	return s;
}

static inline void mp_read(struct mp_stream *s)
{
	struct myrio_pkt *p;
	while ((p = myrio_tcp_recv(s->c)) != NULL) {
		const uint8_t *d = myrio_pkt_data(p);
		uint64_t bad0 = s->bad;
		for (uint32_t i = 0; i < p->len; i++)
			if (d[i] != test_pattern(s->rcvd + i))
				s->bad++;
		if (s->bad != bad0) /* say where, for the diagnosis */
			fprintf(stderr,
				"mp_read: %llu of %u bytes wrong in a segment at stream offset %llu\n",
				(unsigned long long)(s->bad - bad0), p->len,
				(unsigned long long)s->rcvd);
		s->rcvd += p->len;
		myrio_tcp_release(s->c, p);
	}
	if (myrio_tcp_eof(s->c))
		s->eof = true;
}

/* Writes the pattern while the stack takes it, in writes of up to chunk bytes (64 KiB at
 * most; the stack does not merge writes, so the chunk shapes the segments). */
static inline void mp_write_chunks(struct mp_stream *s, size_t chunk)
{
	static uint8_t buf[65536];
	if (chunk > sizeof(buf))
		chunk = sizeof(buf);
	while (s->sent < s->to_send) {
		uint64_t left = s->to_send - s->sent;
		size_t n = left < chunk ? (size_t)left : chunk;
		for (size_t i = 0; i < n; i++)
			buf[i] = test_pattern(s->sent + i);
		ssize_t w = myrio_tcp_write(s->c, buf, n);
		if (w <= 0)
			break;
		s->sent += (uint64_t)w;
	}
}

static inline void mp_write(struct mp_stream *s)
{
	mp_write_chunks(s, 8192);
}

static inline void mp_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct model_pair *m = arg;
	struct mp_stream *s = mp_stream_of(m, c);
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED:
		m->accepted++;
		s = mp_stream_new(m, c);
		if (!s) {
			myrio_tcp_abort(c);
			return;
		}
		s->connected = true;
		break;
	case MYRIO_TCP_EV_CONNECTED:
		m->connected++;
		if (s) {
			s->connected = true;
			mp_write(s);
		}
		break;
	case MYRIO_TCP_EV_READABLE:
		if (s)
			mp_read(s);
		break;
	case MYRIO_TCP_EV_WRITABLE:
		if (s)
			mp_write(s);
		break;
	case MYRIO_TCP_EV_CLOSED:
		m->closed++;
		if (s) {
			s->closed = true;
			s->c = NULL;
		}
		myrio_tcp_close(c);
		break;
	case MYRIO_TCP_EV_ERROR:
		m->errors++;
		if (s) {
			s->error = true;
			s->err = myrio_tcp_error(c);
			s->c = NULL;
		}
		myrio_tcp_close(c);
		break;
	}
}

static inline struct myrio_port *mp_inner(struct myrio_port *p)
{
	return ((struct mp_wrap *)p)->inner;
}

static inline uint16_t mp_w_rx(struct myrio_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	return mp_inner(p)->ops->rx_burst(mp_inner(p), pkts, n);
}

static inline uint16_t mp_w_tx(struct myrio_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	if (n == 0)
		myrio_sim_step(((struct mp_wrap *)p)->w, 5);
	return mp_inner(p)->ops->tx_burst(mp_inner(p), pkts, n);
}

static inline int mp_w_pool(struct myrio_port *p, uint32_t count, uint32_t len,
			    struct myrio_pool **out)
{
	return mp_inner(p)->ops->pool_create(mp_inner(p), count, len, out);
}

static inline int mp_w_link(struct myrio_port *p)
{
	return mp_inner(p)->ops->link(mp_inner(p));
}

static inline int mp_w_info(struct myrio_port *p, struct myrio_port_info *info)
{
	return mp_inner(p)->ops->info(mp_inner(p), info);
}

static inline int mp_w_stats(struct myrio_port *p, struct myrio_port_stats *st)
{
	return mp_inner(p)->ops->stats(mp_inner(p), st);
}

static inline void mp_w_rx_mismatch(struct myrio_port *p)
{
	if (mp_inner(p)->ops->rx_mismatch)
		mp_inner(p)->ops->rx_mismatch(mp_inner(p));
}

static const struct myrio_port_ops mp_wrap_ops = {
	.rx_burst = mp_w_rx,
	.tx_burst = mp_w_tx,
	.pool_create = mp_w_pool,
	.link = mp_w_link,
	.info = mp_w_info,
	.stats = mp_w_stats,
	.rx_mismatch = mp_w_rx_mismatch,
};

static inline struct myrio_port *mp_wrap_port(struct mp_wrap *w, struct myrio_port *inner,
					      struct myrio_sim *sim)
{
	w->port.ops = &mp_wrap_ops;
	snprintf(w->port.device, sizeof(w->port.device), "%s", inner->device);
	w->inner = inner;
	w->w = sim;
	return &w->port;
}

/* spec: model spec string ("stepped" is added); tweak may change both stack
 * configurations; port_conf may be NULL. Returns 0 or a negative errno. */
static inline int mp_open(struct model_pair *m, const char *spec, unsigned max_streams,
			  void (*tweak)(struct myrio_stack_conf *),
			  const struct myrio_port_conf *port_conf)
{
	memset(m, 0, sizeof(*m));
	m->steps_per_round = 20;
	m->max_streams = max_streams;
	m->streams = calloc(max_streams ? max_streams : 1, sizeof(*m->streams));
	char link[256];
	snprintf(link, sizeof(link), "sim:%s", spec ? spec : "");
	int rc = link_pair_open(&m->link, link, NULL, NULL, port_conf);
	if (rc < 0)
		return rc;
	m->w = m->link.sim;
	m->pa = m->link.a;
	m->pb = m->link.b;
	struct myrio_stack_conf c;
	myrio_stack_conf_init(&c);
	c.netmask = 0xffffff00u;
	c.clock = mp_clock;
	c.clock_arg = m;
	c.tcp_event = mp_event;
	c.event_arg = m;
	c.time_wait_ms = 1000;
	c.seed = 7;
	if (tweak)
		tweak(&c);
	c.ip = MP_IP_A;
	rc = myrio_stack_create(&m->a, mp_wrap_port(&m->wa, m->pa, m->w), &c);
	if (rc < 0)
		return rc;
	c.ip = MP_IP_B;
	c.seed = 8;
	return myrio_stack_create(&m->b, mp_wrap_port(&m->wb, m->pb, m->w), &c);
}

/* Static ARP entries both ways: no SYN waits for a resolution (the ARP queue is short). */
static inline int mp_static_arp(struct model_pair *m)
{
	struct myrio_port_info ia, ib;
	int rc = myrio_port_info(m->pa, &ia);
	if (rc == 0)
		rc = myrio_port_info(m->pb, &ib);
	if (rc == 0)
		rc = myrio_arp_add_static(m->a, MP_IP_B, ib.mac);
	if (rc == 0)
		rc = myrio_arp_add_static(m->b, MP_IP_A, ia.mac);
	return rc;
}

static inline void mp_round(struct model_pair *m)
{
	link_pair_step(&m->link, m->steps_per_round);
	myrio_stack_poll(m->a);
	myrio_stack_poll(m->b);
}

/* Runs rounds until done(m) or max_rounds; returns true when done. */
static inline bool mp_run_until(struct model_pair *m, bool (*done)(struct model_pair *),
				uint64_t max_rounds)
{
	for (uint64_t r = 0; r < max_rounds; r++) {
		if (done(m))
			return true;
		mp_round(m);
	}
	return done(m);
}

/* One transfer from a to b: a listener on b's port, a connection from a with bytes to
 * send; b's accepted stream is the pair's second (mp_receiver once it exists). */
static inline struct mp_stream *mp_transfer(struct model_pair *m, uint16_t port, uint64_t bytes)
{
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(m->b, port, 16, NULL, &l), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(m->a, MP_IP_B, port, NULL, &c), 0);
	struct mp_stream *s = mp_stream_new(m, c);
	s->to_send = bytes;
	m->want = bytes;
	return s;
}

static inline struct mp_stream *mp_receiver(struct model_pair *m)
{
	return m->nstreams >= 2 ? &m->streams[1] : NULL;
}

/* mp_run_until conditions for the transfer (or any error). */
static inline bool mp_quarter_received(struct model_pair *m)
{
	struct mp_stream *r = mp_receiver(m);
	return (r && r->rcvd >= m->want / 4) || m->errors;
}

static inline bool mp_all_received(struct model_pair *m)
{
	struct mp_stream *r = mp_receiver(m);
	return (r && r->rcvd >= m->want) || m->errors || m->streams[0].error;
}

/* Every byte sent and received once, in order, uncorrupted; no connection failed. */
static inline void mp_check_intact(struct model_pair *m, struct mp_stream *tx)
{
	struct mp_stream *rx = mp_receiver(m);
	assert_non_null(rx);
	assert_int_equal(m->errors, 0);
	assert_int_equal(tx->sent, m->want);
	assert_int_equal(rx->rcvd, m->want); /* nothing lost, nothing duplicated */
	assert_int_equal(rx->bad, 0);	      /* in order, uncorrupted */
}

/* Resets what is still open and lets the RSTs go out while the model still runs. */
static inline void mp_close(struct model_pair *m)
{
	for (unsigned i = 0; i < m->nstreams; i++)
		if (m->streams[i].c) {
			myrio_tcp_abort(m->streams[i].c);
			m->streams[i].c = NULL;
		}
	for (int i = 0; i < 200 && m->a && m->b; i++)
		mp_round(m);

	if (m->a)
		myrio_stack_destroy(m->a);
	if (m->b)
		myrio_stack_destroy(m->b);
	link_pair_close(&m->link);
	free(m->streams);
	memset(m, 0, sizeof(*m));
}

#endif
