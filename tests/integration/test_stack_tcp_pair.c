/* TCP between two stacks over the in-memory pair port: byte-exact transfers with a checked
 * pattern, on a clean link and with loss, reordering and duplication; closes, refused
 * connections, slow readers. MYRIO_TEST_BYTES sets the transfer size (e.g. 1G). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include "stack_harness.h"

static double wall(void)
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

static void pump_send(struct harness *h, struct xfer *x)
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
				d[i] = pattern(x->sent + i);
			p->len = n;
			int rc = myrio_tcp_send(x->cli, p);
			if (rc < 0) {
				myrio_pkt_free(p);
				break;
			}
		} else {
			uint8_t buf[4096];
			for (uint32_t i = 0; i < n; i++)
				buf[i] = pattern(x->sent + i);
			ssize_t w = myrio_tcp_write(x->cli, buf, n);
			if (w <= 0)
				break;
			n = (uint32_t)w;
		}
		x->sent += n;
	}
}

static void pump_recv(struct xfer *x)
{
	if (!x->srv || x->hold)
		return;
	if (x->zero_copy) {
		struct myrio_pkt *p;
		while ((p = myrio_tcp_recv(x->srv)) != NULL) {
			const uint8_t *d = myrio_pkt_data(p);
			for (uint32_t i = 0; i < p->len; i++)
				if (d[i] != pattern(x->rcvd + i) && !x->bad)
					x->bad = x->rcvd + i + 1;
			x->rcvd += p->len;
			myrio_tcp_release(x->srv, p);
		}
	} else {
		uint8_t buf[3000];
		ssize_t r;
		while ((r = myrio_tcp_read(x->srv, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < r; i++)
				if (buf[i] != pattern(x->rcvd + (uint64_t)i) && !x->bad)
					x->bad = x->rcvd + (uint64_t)i + 1;
			x->rcvd += (uint64_t)r;
		}
	}
}

static struct myrio_tcp_conn *accepted_conn(struct harness *h)
{
	for (unsigned i = 0; i < h->nev; i++)
		if (h->ev[i].accepted)
			return h->ev[i].c;
	return NULL;
}

/* Connect A -> B:5001, send x->total bytes, half-close, check everything arrived intact
 * and both sides close cleanly. */
static void run_transfer(struct harness *h, struct xfer *x, uint64_t max_rounds)
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

static void report(const char *what, struct harness *h, struct xfer *x)
{
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(h->a, &sa);
	myrio_stack_stats(h->b, &sb);
	printf("# %s: %llu bytes in %.2f s wall (%.0f MB/s, both stacks and the pattern check on "
	       "one thread), A segs out %llu retx %llu fast %llu rto %llu; B ooo %llu dup %llu "
	       "segs in %llu\n",
	       what, (unsigned long long)x->total, x->secs, (double)x->total / x->secs / 1e6,
	       (unsigned long long)sa.tcp_segs_out,
	       (unsigned long long)sa.tcp_retransmits, (unsigned long long)sa.tcp_fast_retransmits,
	       (unsigned long long)sa.tcp_rto_expired, (unsigned long long)sb.tcp_ooo_segs,
	       (unsigned long long)sb.tcp_dup_segs, (unsigned long long)sb.tcp_segs_in);
}

static void transfer_clean_zero_copy(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "clean", NULL, NULL, NULL), 0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 16u << 20), .zero_copy = true};
	run_transfer(&h, &x, 50000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_int_equal(sa.tcp_retransmits, 0);
	assert_true(sa.tcp_csum_offload > 0);
	report("clean", &h, &x);
	h_close(&h);
}

static void transfer_copying_api_no_offload(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "copy", "?nocsum", "?nocsum", NULL), 0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 16u << 20) / 4 + 12345,
			 .zero_copy = false};
	run_transfer(&h, &x, 50000000);
	struct myrio_stack_stats sb;
	myrio_stack_stats(h.b, &sb);
	assert_int_equal(sb.tcp_csum_offload, 0);
	assert_true(sb.tcp_csum_sw > 0);
	h_close(&h);
}

static void faulty_conf(struct myrio_stack_conf *c)
{
	c->delayed_ack_ms = 0;
}

static void transfer_with_loss_reorder_dup(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "lossy", "?loss=0.01,reorder=0.01,dup=0.01,seed=3",
				"?loss=0.01,reorder=0.01,dup=0.01,seed=4", faulty_conf),
			 0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 16u << 20) / 2, .zero_copy = true};
	run_transfer(&h, &x, 100000000);
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(h.a, &sa);
	myrio_stack_stats(h.b, &sb);
	assert_true(sa.tcp_retransmits > 0);
	assert_true(sa.tcp_fast_retransmits > 0);
	assert_true(sb.tcp_ooo_segs > 0);
	assert_true(sb.tcp_dup_segs > 0);
	report("1% loss+reorder+dup", &h, &x);
	h_close(&h);
}

static void transfer_with_heavy_loss_delayed_ack(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "heavy", "?loss=0.05,seed=7", "?loss=0.05,seed=8", NULL), 0);
	struct xfer x = {.total = 2u << 20, .zero_copy = true};
	run_transfer(&h, &x, 100000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_true(sa.tcp_retransmits > 0);
	report("5% loss", &h, &x);
	h_close(&h);
}

static void no_sack_no_ts_conf(struct myrio_stack_conf *c)
{
	c->sack = false;
	c->timestamps = false;
	c->window_scale = false;
	c->rcv_buf = 64 * 1024;
}

static void transfer_newreno_without_options(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "plain", "?loss=0.01,seed=11", "?loss=0.01,seed=12",
				no_sack_no_ts_conf),
			 0);
	struct xfer x = {.total = 4u << 20, .zero_copy = true};
	run_transfer(&h, &x, 100000000);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(x.cli, &cs);
	assert_int_equal(cs.sack_blocks_rcvd, 0);
	report("NewReno, no options", &h, &x);
	h_close(&h);
}

static void slow_reader_closes_window_then_resumes(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "slow", NULL, NULL, NULL), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, 5002, 4, NULL, &l), 0);
	struct xfer x = {.total = 2u << 20, .zero_copy = true, .hold = true};
	assert_int_equal(myrio_tcp_connect(h.a, IP_B, 5002, NULL, &x.cli), 0);
	for (int r = 0; r < 200000; r++) {
		h_round(&h);
		if (!x.srv)
			x.srv = accepted_conn(&h);
		if (myrio_tcp_state(x.cli) == MYRIO_TCP_ESTABLISHED)
			pump_send(&h, &x);
	}
	/* Receiver held everything: the sender stopped at the window and probes it. */
	struct myrio_tcp_conn_stats cs, ss;
	myrio_tcp_conn_stats(x.cli, &cs);
	myrio_tcp_conn_stats(x.srv, &ss);
	assert_true(ss.rcv_wnd < ss.mss); /* not even one more segment fits */
	assert_true(cs.zero_window_probes > 0);
	assert_true(ss.bytes_in <= 256 * 1024);
	assert_true(ss.bytes_in >= 200 * 1024);
	x.hold = false;
	for (int r = 0; r < 2000000 && x.rcvd < x.total; r++) {
		h_round(&h);
		pump_send(&h, &x);
		pump_recv(&x);
	}
	assert_int_equal(x.rcvd, x.total);
	assert_int_equal(x.bad, 0);
	myrio_tcp_abort(x.cli);
	for (int r = 0; r < 100; r++)
		h_round(&h);
	assert_int_equal(myrio_tcp_state(x.srv), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(x.srv), -ECONNRESET);
	assert_int_equal(h_ev(&h, x.srv)->error, 1);
	myrio_tcp_close(x.srv);
	myrio_tcp_listener_close(l);
	h_close(&h);
}

static void connect_to_closed_port_is_refused(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "refused", NULL, NULL, NULL), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(h.a, IP_B, 9, NULL, &c), 0);
	h_rounds(&h, 100);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(c), -ECONNREFUSED);
	assert_int_equal(h_ev(&h, c)->error, 1);
	struct myrio_stack_stats sb;
	myrio_stack_stats(h.b, &sb);
	assert_int_equal(sb.tcp_resets_sent, 1);
	myrio_tcp_close(c);
	h_close(&h);
}

static void connect_times_out_without_peer(void **state)
{
	struct harness h;
	assert_int_equal(h_open(&h, "timeout", "?loss=1", NULL, NULL), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(h.a, IP_B, 80, NULL, &c), 0);
	/* 1+2+4+...+64 s of SYN retries at 20 us per round */
	for (uint64_t r = 0; r < 10000000 && myrio_tcp_state(c) != MYRIO_TCP_CLOSED; r++) {
		myrio_stack_poll(h.a);
		myrio_stack_poll(h.b);
		h.now_ns += 1000000; /* 1 ms */
	}
	assert_int_equal(myrio_tcp_error(c), -ETIMEDOUT);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(c, &cs);
	assert_int_equal(cs.retransmits, 6);
	myrio_tcp_close(c);
	h_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(transfer_clean_zero_copy),
		cmocka_unit_test(transfer_copying_api_no_offload),
		cmocka_unit_test(transfer_with_loss_reorder_dup),
		cmocka_unit_test(transfer_with_heavy_loss_delayed_ack),
		cmocka_unit_test(transfer_newreno_without_options),
		cmocka_unit_test(slow_reader_closes_window_then_resumes),
		cmocka_unit_test(connect_to_closed_port_is_refused),
		cmocka_unit_test(connect_times_out_without_peer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
