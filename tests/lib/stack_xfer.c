/* SPDX-License-Identifier: BSD-3-Clause */
/* Pumped checked-pattern transfers between the harness's stacks (stack_xfer.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>
#include <stdio.h>

#include "stack_xfer.h"
#include "test_pattern.h"
#include "wall_clock.h"

void xfer_send(struct stack_pair *sp, struct xfer *x)
{
	uint16_t mss = myrio_tcp_mss(x->cli);
	while (x->sent < x->total && myrio_tcp_send_space(x->cli) > 0) {
		uint32_t n = (uint32_t)(x->total - x->sent < mss ? x->total - x->sent : mss);
		if (x->zero_copy) {
			struct myrio_pkt *p = myrio_stack_pkt_alloc(sp->a);
			if (!p)
				break;
			test_pattern_fill(myrio_pkt_data(p), n, x->sent);
			p->len = n;
			if (myrio_tcp_send(x->cli, p) < 0) {
				myrio_pkt_free(p);
				break;
			}
		} else {
			uint8_t buf[4096];
			test_pattern_fill(buf, n, x->sent);
			ssize_t w = myrio_tcp_write(x->cli, buf, n);
			if (w <= 0)
				break;
			n = (uint32_t)w;
		}
		x->sent += n;
	}
}

/* Counts n bytes received at x->rcvd, noting the first that is not the pattern. */
static void check(struct xfer *x, const uint8_t *d, size_t n)
{
	size_t first = 0;
	if (test_pattern_check(d, n, x->rcvd, &first) && !x->bad)
		x->bad = x->rcvd + first + 1;
	x->rcvd += n;
}

void xfer_take(struct xfer *x, struct myrio_pkt *p)
{
	check(x, myrio_pkt_data(p), p->len);
	myrio_tcp_release(x->srv, p);
}

void xfer_recv(struct xfer *x)
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
		while ((r = myrio_tcp_read(x->srv, buf, sizeof(buf))) > 0)
			check(x, buf, (size_t)r);
	}
}

void xfer_run(struct stack_pair *sp, struct xfer *x, uint64_t max_rounds)
{
	double t0 = wall_s();
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(sp->b, 5001, 8, NULL, &l), 0);
	assert_int_equal(myrio_tcp_connect(sp->a, SP_IP_B, 5001, NULL, &x->cli), 0);
	uint64_t r = 0;
	bool fin_sent = false;
	while (r++ < max_rounds) {
		sp_round(sp);
		if (!x->srv)
			x->srv = sp_accepted_conn(sp);
		if (myrio_tcp_state(x->cli) == MYRIO_TCP_ESTABLISHED && !fin_sent) {
			xfer_send(sp, x);
			if (x->sent == x->total) {
				assert_int_equal(myrio_tcp_shutdown(x->cli), 0);
				fin_sent = true;
			}
		}
		xfer_recv(x);
		if (x->srv && myrio_tcp_eof(x->srv))
			break;
	}
	x->secs = wall_s() - t0;
	assert_non_null(x->srv);
	assert_int_equal(x->bad, 0);
	assert_int_equal(x->rcvd, x->total);
	assert_true(myrio_tcp_eof(x->srv));
	assert_int_equal(myrio_tcp_read(x->srv, (char[8]){0}, 8), 0);
	/* Passive close: b closes, a ends in TIME_WAIT, b in CLOSED. */
	myrio_tcp_close(x->srv);
	for (r = 0; r < 200000 && myrio_tcp_state(x->cli) != MYRIO_TCP_TIME_WAIT; r++)
		sp_round(sp);
	assert_int_equal(myrio_tcp_state(x->cli), MYRIO_TCP_TIME_WAIT);
	struct sp_conn_ev *e = sp_ev(sp, x->cli);
	assert_non_null(e);
	assert_int_equal(e->connected, 1);
	assert_int_equal(e->closed, 1);
	assert_int_equal(e->error, 0);
	assert_int_equal(myrio_tcp_unacked(x->cli), 0);
	myrio_tcp_close(x->cli);
	myrio_tcp_listener_close(l);
}

void xfer_report(const char *what, struct stack_pair *sp, const struct xfer *x)
{
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(sp->a, &sa);
	myrio_stack_stats(sp->b, &sb);
	printf("# %s: %llu bytes in %.2f s wall (%.0f MB/s, both stacks and the pattern check on "
	       "one thread), A segs out %llu retx %llu fast %llu rto %llu; B ooo %llu dup %llu "
	       "segs in %llu\n",
	       what, (unsigned long long)x->total, x->secs, (double)x->total / x->secs / 1e6,
	       (unsigned long long)sa.tcp_segs_out, (unsigned long long)sa.tcp_retransmits,
	       (unsigned long long)sa.tcp_fast_retransmits, (unsigned long long)sa.tcp_rto_expired,
	       (unsigned long long)sb.tcp_ooo_segs, (unsigned long long)sb.tcp_dup_segs,
	       (unsigned long long)sb.tcp_segs_in);
}
