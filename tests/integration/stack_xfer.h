/* SPDX-License-Identifier: BSD-3-Clause */
/* Checked-pattern TCP transfers between the two stacks of a harness (stack_harness.h). */
#ifndef STACK_XFER_H
#define STACK_XFER_H

#include <time.h>

#include "stack_harness.h"

static inline double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct xfer {
	uint64_t total, sent, rcvd;
	uint64_t bad; /* first mismatching offset + 1 */
	struct myrio_tcp_conn *cli, *srv;
	bool zero_copy;
	bool hold; /* receiver stops reading */
	double secs;
};

static inline void pump_send(struct harness *h, struct xfer *x)
{
	struct myrio_stack *s = h->a;
	uint16_t mss = myrio_tcp_mss(x->cli);
	while (x->sent < x->total && myrio_tcp_send_space(x->cli) > 0) {
		uint32_t n = (uint32_t)(x->total - x->sent < mss ? x->total - x->sent : mss);
		if (x->zero_copy) {
			struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
			if (!p)
				break;
			uint8_t *d = myrio_pkt_data(p);
			for (uint32_t i = 0; i < n; i++)
				d[i] = test_pattern(x->sent + i);
			p->len = n;
			int rc = myrio_tcp_send(x->cli, p);
			if (rc < 0) {
				myrio_pkt_free(p);
				break;
			}
		} else {
			uint8_t buf[4096];
			for (uint32_t i = 0; i < n; i++)
				buf[i] = test_pattern(x->sent + i);
			ssize_t w = myrio_tcp_write(x->cli, buf, n);
			if (w <= 0)
				break;
			n = (uint32_t)w;
		}
		x->sent += n;
	}
}

/* Checks a received buffer against the pattern at x->rcvd, counts it and releases it. */
static inline void xfer_take(struct xfer *x, struct myrio_pkt *p)
{
	const uint8_t *d = myrio_pkt_data(p);
	for (uint32_t i = 0; i < p->len; i++)
		if (d[i] != test_pattern(x->rcvd + i) && !x->bad)
			x->bad = x->rcvd + i + 1;
	x->rcvd += p->len;
	myrio_tcp_release(x->srv, p);
}

static inline void pump_recv(struct xfer *x)
{
	if (!x->srv || x->hold)
		return;
	if (x->zero_copy) {
		struct myrio_pkt *p;
		while ((p = myrio_tcp_recv(x->srv)) != NULL)
			xfer_take(x, p);
	} else {
		uint8_t buf[3000];
		ssize_t r;
		while ((r = myrio_tcp_read(x->srv, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < r; i++)
				if (buf[i] != test_pattern(x->rcvd + (uint64_t)i) && !x->bad)
					x->bad = x->rcvd + (uint64_t)i + 1;
			x->rcvd += (uint64_t)r;
		}
	}
}

static inline struct myrio_tcp_conn *accepted_conn(struct harness *h)
{
	for (unsigned i = 0; i < h->nev; i++)
		if (h->ev[i].accepted)
			return h->ev[i].c;
	return NULL;
}

/* Connect A -> B:5001, send x->total bytes, half-close, check everything arrived intact
 * and both sides close cleanly. */
static inline void run_transfer(struct harness *h, struct xfer *x, uint64_t max_rounds)
{
	double t0 = wall();
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h->b, 5001, 8, NULL, &l), 0);
	assert_int_equal(myrio_tcp_connect(h->a, IP_B, 5001, NULL, &x->cli), 0);
	uint64_t r = 0;
	bool fin_sent = false;
	while (r++ < max_rounds) {
		h_round(h);
		if (!x->srv)
			x->srv = accepted_conn(h);
		if (myrio_tcp_state(x->cli) == MYRIO_TCP_ESTABLISHED && !fin_sent) {
			pump_send(h, x);
			if (x->sent == x->total) {
				assert_int_equal(myrio_tcp_shutdown(x->cli), 0);
				fin_sent = true;
			}
		}
		pump_recv(x);
		if (x->srv && myrio_tcp_eof(x->srv))
			break;
	}
	x->secs = wall() - t0;
	assert_non_null(x->srv);
	assert_int_equal(x->bad, 0);
	assert_int_equal(x->rcvd, x->total);
	assert_true(myrio_tcp_eof(x->srv));
	assert_int_equal(myrio_tcp_read(x->srv, (char[8]){0}, 8), 0);
	/* Passive close: B closes, A ends in TIME_WAIT, B in CLOSED. */
	myrio_tcp_close(x->srv);
	for (r = 0; r < 200000 && myrio_tcp_state(x->cli) != MYRIO_TCP_TIME_WAIT; r++)
		h_round(h);
	assert_int_equal(myrio_tcp_state(x->cli), MYRIO_TCP_TIME_WAIT);
	struct conn_ev *e = h_ev(h, x->cli);
	assert_int_equal(e->connected, 1);
	assert_int_equal(e->closed, 1);
	assert_int_equal(e->error, 0);
	assert_int_equal(myrio_tcp_unacked(x->cli), 0);
	myrio_tcp_close(x->cli);
	myrio_tcp_listener_close(l);
}

static inline void report(const char *what, struct harness *h, struct xfer *x)
{
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(h->a, &sa);
	myrio_stack_stats(h->b, &sb);
	printf("# %s: %llu bytes in %.2f s wall (%.0f MB/s, both stacks and the pattern check on "
	       "one thread), A segs out %llu retx %llu fast %llu rto %llu; B ooo %llu dup %llu "
	       "segs in %llu\n",
	       what, (unsigned long long)x->total, x->secs, (double)x->total / x->secs / 1e6,
	       (unsigned long long)sa.tcp_segs_out, (unsigned long long)sa.tcp_retransmits,
	       (unsigned long long)sa.tcp_fast_retransmits, (unsigned long long)sa.tcp_rto_expired,
	       (unsigned long long)sb.tcp_ooo_segs, (unsigned long long)sb.tcp_dup_segs,
	       (unsigned long long)sb.tcp_segs_in);
}

#endif
