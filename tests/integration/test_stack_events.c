/* SPDX-License-Identifier: BSD-3-Clause */
/* The event model between two stacks on the pair port: WRITABLE after a dry transmit
 * pool, the stack's clock and application timers, the readiness set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "myrio/sim.h"
#include "stack_pair.h"
#include "tcp_lite/stack.h" /* the timerfd's deadline */
#include "test_pattern.h"

#define PORT 7100

/* ---- lost WRITABLE: many writers share a small transmit pool ---- */

#define NW 100
#define MSG (20u * 1000u)

struct writer {
	struct myrio_tcp_conn *c; /* on a (sender) */
	uint32_t sent;
	struct myrio_tcp_conn *rc; /* on b (receiver) */
	uint32_t rcvd;
	bool bad;
	unsigned writable;
};

static struct writer writers[NW];

/* The sender writes only when told it may: on CONNECTED and on WRITABLE. */
static void write_some(struct writer *w)
{
	static uint8_t buf[MSG];
	while (w->sent < MSG) {
		uint32_t n = MSG - w->sent;
		for (uint32_t i = 0; i < n; i++)
			buf[i] = test_pattern(w->sent + i + (uint64_t)(w - writers) * MSG);
		ssize_t k = myrio_tcp_write(w->c, buf, n);
		assert_true(k >= 0);
		if (k == 0)
			return;
		w->sent += (uint32_t)k;
	}
}

static void read_all(struct writer *w)
{
	uint8_t buf[4096];
	ssize_t k;
	while ((k = myrio_tcp_read(w->rc, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < k; i++)
			if (buf[i] !=
			    test_pattern(w->rcvd + (uint64_t)i + (uint64_t)(w - writers) * MSG))
				w->bad = true;
		w->rcvd += (uint32_t)k;
	}
}

static void accepted(struct myrio_tcp_conn *c)
{
	uint32_t lip, rip;
	uint16_t lport, rport, wport;
	myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
	for (unsigned i = 0; i < NW; i++) {
		myrio_tcp_addr(writers[i].c, &lip, &wport, &rip, &lport);
		if (wport == rport) {
			writers[i].rc = c;
			myrio_tcp_set_user(c, &writers[i]);
			read_all(&writers[i]);
			return;
		}
	}
	fail_msg("accepted a connection from no writer");
}

static void writers_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct writer *w = myrio_tcp_user(c);
	(void)arg;
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED: /* the writer whose local port is its remote one */
		accepted(c);
		break;
	case MYRIO_TCP_EV_CONNECTED:
		write_some(w);
		break;
	case MYRIO_TCP_EV_WRITABLE:
		w->writable++;
		write_some(w);
		break;
	case MYRIO_TCP_EV_READABLE:
		if (w)
			read_all(w);
		break;
	default:
		break;
	}
}

static void small_pool(struct myrio_stack_conf *c)
{
	c->tx_pool_size = 128;
	c->max_tcp_conns = 2 * NW;
	c->tcp_event = writers_event;
	c->delayed_ack_ms = 0;
}

static void writable_after_dry_pool(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:ev_pool", &(struct sp_opts){.tweak = small_pool}), 0);
	memset(writers, 0, sizeof(writers));
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, NW, NULL, &l), 0);
	for (unsigned i = 0; i < NW; i++)
		assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, PORT, &writers[i], &writers[i].c),
				 0);
	for (unsigned r = 0; r < 200000; r++) {
		sp_round(&h);
		unsigned done = 0;
		for (unsigned i = 0; i < NW; i++)
			done += writers[i].rcvd == MSG;
		if (done == NW)
			break;
	}
	unsigned stalled = 0, refused = 0;
	for (unsigned i = 0; i < NW; i++) {
		stalled += writers[i].rcvd != MSG;
		refused += writers[i].writable > 0;
		assert_false(writers[i].bad);
	}
	print_message("writers: %u of %u stalled, %u were refused and told WRITABLE\n", stalled, NW,
		      refused);
	assert_int_equal(stalled, 0);
	assert_true(refused > 0); /* the pool did run dry */
	for (unsigned i = 0; i < NW; i++) {
		myrio_tcp_close(writers[i].c);
		myrio_tcp_close(writers[i].rc);
	}
	sp_rounds(&h, 10); /* the closes go out */
	sp_close(&h);
}

/* ---- the clock and application timers ---- */

#define MS 1000000ull

static void now_is_the_clock_of_the_last_poll(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:ev_clock", NULL), 0);
	h.now_ns = 5 * 1000 * MS + 123456789; /* 5123.456789 ms */
	myrio_stack_poll(h.a);
	assert_int_equal(myrio_stack_now_ns(h.a), h.now_ns);
	assert_int_equal(myrio_stack_now_ms(h.a), 5123);
	h.now_ns += 7 * MS; /* between polls the stack's time stands still */
	assert_int_equal(myrio_stack_now_ms(h.a), 5123);
	assert_int_equal(myrio_stack_clock_ns(h.a), h.now_ns);
	sp_close(&h);
}

struct retry {
	struct stack_pair *h;
	uint64_t timeout_ns, started_ns, fired_ns[8];
	unsigned fired, want;
};

static void retry_due(void *arg, struct myrio_stack *s)
{
	struct retry *r = arg;
	r->fired_ns[r->fired++] = r->h->now_ns;
	if (r->fired < r->want) /* as a client resends its request and waits again */
		assert_int_equal(myrio_timer_start(s, r->timeout_ns, retry_due, r, NULL), 0);
}

static void retry_timeout_comes_out_at_its_length(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:ev_retry", NULL), 0);
	h.now_ns += 333333; /* not on a millisecond */
	sp_round(&h);
	struct retry r = {.h = &h, .timeout_ns = 100 * MS, .started_ns = h.now_ns, .want = 5};
	assert_int_equal(myrio_timer_start(h.a, r.timeout_ns, retry_due, &r, NULL), 0);
	/* A program that sleeps until the next deadline and polls then is woken in time:
	 * never after the timer is due, and not often before (cascades of the wheel). */
	unsigned wakeups = 0;
	while (r.fired == 0) {
		uint64_t deadline = myrio_stack_next_deadline(h.a);
		assert_true(deadline <= r.started_ns + r.timeout_ns + MS);
		assert_true(deadline > h.now_ns - h.tick_ns);
		h.now_ns = deadline;
		myrio_stack_poll(h.a);
		wakeups++;
	}
	print_message("idle stack woken %u times for a 100 ms timer\n", wakeups);
	assert_true(wakeups <= 3);
	r.fired_ns[0] = h.now_ns; /* the poll's clock (retry_due saw the same) */
	while (r.fired < r.want && h.now_ns < r.started_ns + 2000 * MS)
		sp_round(&h);
	assert_int_equal(r.fired, r.want);
	uint64_t prev = r.started_ns;
	for (unsigned i = 0; i < r.want; i++) {
		uint64_t took = r.fired_ns[i] - prev;
		print_message("retry %u after %.3f ms\n", i, (double)took / MS);
		/* Never early; late by at most the tick and one poll round. */
		assert_true(took >= r.timeout_ns);
		assert_true(took <= r.timeout_ns + MS + h.tick_ns);
		prev = r.fired_ns[i];
	}
	sp_close(&h);
}

static unsigned fired_count;
static void count_due(void *arg, struct myrio_stack *s)
{
	(void)s;
	fired_count += arg ? 1 : 1000; /* a cancelled timer (arg NULL) must never run */
}

static void retry_start_short(void *arg, struct myrio_stack *s)
{
	assert_int_equal(myrio_timer_start(s, 20 * MS, count_due, arg, NULL), 0);
}

static void timers_cancel_and_run_out(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:ev_cancel", NULL), 0);
	fired_count = 0;
	uint64_t keep, drop;
	assert_int_equal(myrio_timer_start(h.a, 5 * MS, count_due, &h, &keep), 0);
	assert_int_equal(myrio_timer_start(h.a, 5 * MS, count_due, NULL, &drop), 0);
	assert_int_equal(myrio_timer_cancel(h.a, drop), 0);
	assert_int_equal(myrio_timer_cancel(h.a, drop), -ENOENT);
	sp_rounds(&h, 10 * MS / h.tick_ns);
	assert_int_equal(fired_count, 1);
	assert_int_equal(myrio_timer_cancel(h.a, keep), -ENOENT); /* it ran */
	/* A stale id does not cancel the timer that took its record since. */
	uint64_t again;
	assert_int_equal(myrio_timer_start(h.a, 5 * MS, count_due, &h, &again), 0);
	assert_int_equal(myrio_timer_cancel(h.a, keep), -ENOENT);
	assert_int_equal(myrio_timer_cancel(h.a, drop), -ENOENT);
	sp_rounds(&h, 10 * MS / h.tick_ns);
	assert_int_equal(fired_count, 2);
	assert_int_equal(myrio_timer_cancel(h.a, 0), -ENOENT);
	assert_int_equal(myrio_timer_cancel(h.a, UINT64_MAX), -ENOENT);
	/* The table runs out with an error, and every pending timer still runs. */
	unsigned started = 0;
	int rc;
	while ((rc = myrio_timer_start(h.a, 1 * MS, count_due, &h, NULL)) == 0)
		started++;
	assert_int_equal(rc, -ENOBUFS);
	assert_int_equal(started, 64);
	sp_rounds(&h, 3 * MS / h.tick_ns);
	assert_int_equal(fired_count, 2 + 64);
	sp_close(&h);
}

/* ---- the waitable fd ---- */

static void real_clock(struct myrio_stack_conf *c)
{
	c->clock = NULL;
}

/* Waits up to 10 s (a bound for a broken fd, not a measurement) for fd. */
static bool readable(int fd, int timeout_ms)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	int n = epoll_wait(ep, &ev, 1, timeout_ms);
	close(ep);
	return n == 1;
}

/* The sleep protocol of tcp_lite.h: arm, poll once more, sleep. */
static bool arm_and_check(struct myrio_stack *s)
{
	assert_int_equal(myrio_stack_arm(s), 0);
	return myrio_stack_poll(s) > 0;
}

/* Sleeps on b's fd and polls until fired_count reaches want; returns the wake-ups. */
static unsigned sleep_until_fired(struct stack_pair *h, unsigned want)
{
	unsigned wakeups = 0;
	while (fired_count < want) {
		if (arm_and_check(h->b))
			continue;
		assert_true(readable(myrio_stack_fd(h->b), 10000));
		wakeups++;
		myrio_stack_poll(h->b);
	}
	assert_int_equal(fired_count, want);
	return wakeups;
}

static void waitable_fd_wakes_for_frames_and_timers(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:ev_fd", &(struct sp_opts){.tweak = real_clock}), 0);
	int fd = myrio_stack_fd(h.b);
	assert_true(fd >= 0);
	assert_int_equal(myrio_stack_fd(h.b), fd);
	struct myrio_udp_sock *ua, *ub;
	assert_int_equal(myrio_udp_open(h.a, 6000, NULL, &ua), 0);
	assert_int_equal(myrio_udp_open(h.b, 6001, NULL, &ub), 0);
	struct myrio_port_info ib;
	assert_int_equal(myrio_port_info(h.pb, &ib), 0);
	assert_int_equal(myrio_arp_add_static(h.a, SP_IP_B, ib.mac), 0); /* one frame per send */
	for (int i = 0; i < 10; i++) /* the announcements at create */
		sp_round(&h);

	/* Idle: nothing wakes the fd. */
	assert_false(arm_and_check(h.b));
	assert_false(readable(fd, 0));

	/* A frame for b wakes it. */
	assert_int_equal(myrio_udp_sendto_copy(ua, "wake", 4, SP_IP_B, 6001), 0);
	myrio_stack_poll(h.a);
	assert_true(readable(fd, 10000));
	myrio_stack_poll(h.b);
	struct myrio_pkt *p = myrio_udp_recv(ub, NULL, NULL);
	assert_non_null(p);
	myrio_pkt_free(p);

	/* A frame that came before the arm: the poll after it finds it. */
	assert_int_equal(myrio_udp_sendto_copy(ua, "early", 5, SP_IP_B, 6001), 0);
	myrio_stack_poll(h.a);
	assert_true(arm_and_check(h.b));
	p = myrio_udp_recv(ub, NULL, NULL);
	assert_non_null(p);
	myrio_pkt_free(p);

	/* A timer wakes it (perhaps after an early wake-up or two: the wheel's cascades). */
	fired_count = 0;
	assert_int_equal(myrio_timer_start(h.b, 20 * MS, count_due, &h, NULL), 0);
	assert_true(sleep_until_fired(&h, 1) <= 3);

	/* A timer started by the poll between arm and sleep moves the deadline earlier. */
	assert_int_equal(myrio_timer_start(h.b, 10000 * MS, count_due, &h, NULL), 0);
	assert_int_equal(myrio_stack_arm(h.b), 0);
	assert_int_equal(myrio_timer_start(h.b, 0, retry_start_short, &h, NULL), 0);
	myrio_stack_poll(h.b); /* runs retry_start_short: a 20 ms timer */
	assert_true(readable(myrio_stack_fd(h.b), 10000));
	myrio_stack_poll(h.b);
	assert_true(sleep_until_fired(&h, 2) <= 3);

	myrio_udp_close(ua);
	myrio_udp_close(ub);
	sp_close(&h);
}

/* Two stacks on the stepped clock, b with its waitable fd, past the announcements. */
static void open_stepped_with_fd(struct stack_pair *h, const char *link)
{
	assert_int_equal(sp_open(h, link, NULL), 0);
	assert_true(myrio_stack_fd(h->b) >= 0);
	sp_rounds(h, 10); /* the announcements at create */
	fired_count = 0;
}

/* The same on the stepped clock, which stands still within a poll: the deadline the poll
 * moves earlier is that of the timer it started, and so is the timerfd's. */
static void timer_started_by_poll_moves_deadline(void **state)
{
	(void)state;
	struct stack_pair h;
	open_stepped_with_fd(&h, "pair:ev_rearm");
	assert_int_equal(myrio_timer_start(h.b, 10000 * MS, count_due, &h, NULL), 0);
	assert_int_equal(myrio_stack_arm(h.b), 0);
	uint64_t far = h.b->timer_deadline;
	assert_int_equal(myrio_timer_start(h.b, 0, retry_start_short, &h, NULL), 0);
	h.now_ns += MS;	       /* past the millisecond it is due in */
	myrio_stack_poll(h.b); /* runs retry_start_short: a 20 ms timer */
	assert_int_equal(myrio_stack_now_ns(h.b), h.now_ns);
	uint64_t due = (h.now_ns + 20 * MS + MS - 1) / MS * MS; /* up to the wheel's ms */
	assert_true(far > due);
	assert_int_equal(h.b->timer_deadline, due);
	struct itimerspec left;
	assert_int_equal(timerfd_gettime(h.b->timer_fd, &left), 0);
	assert_int_equal(left.it_value.tv_sec, 0);
	assert_true(left.it_value.tv_nsec <= (long)(due - h.now_ns)); /* real time: only less */
	/* The stepped clock at it: the short timer runs, the long one waits. */
	h.now_ns = due;
	myrio_stack_poll(h.b);
	assert_int_equal(fired_count, 1);
	sp_close(&h);
}

/* A sleep ends before the timer is due (a frame): the next arm leaves the pending timer
 * alone, and it still fires. A timer that fired but did not run yet (the stepped
 * clock stands before it) is set again by the next arm, or the sleeper would miss it. */
static void arm_keeps_a_pending_timer_and_sets_a_fired_one_again(void **state)
{
	(void)state;
	struct stack_pair h;
	open_stepped_with_fd(&h, "pair:ev_keep");
	assert_int_equal(myrio_timer_start(h.b, 20 * MS, count_due, &h, NULL), 0);
	assert_false(arm_and_check(h.b));
	uint64_t due = h.b->timer_deadline;
	assert_true(due != UINT64_MAX);
	assert_false(arm_and_check(h.b)); /* the same deadline, still pending */
	assert_int_equal(h.b->timer_deadline, due);
	/* the timerfd itself: the model's own interrupts may wake the stack's fd too */
	assert_true(readable(h.b->timer_fd, 10000)); /* real time reached it */
	myrio_stack_poll(h.b);			     /* the stepped clock did not: nothing runs */
	assert_int_equal(fired_count, 0);
	assert_false(arm_and_check(h.b)); /* takes the expiry: must set the timer again */
	assert_true(readable(h.b->timer_fd, 10000));
	h.now_ns = due;
	myrio_stack_poll(h.b);
	assert_int_equal(fired_count, 1);
	sp_close(&h);
}

/* A sender whose send ring is full: a poll that pushes frames into room the NIC freed,
 * only to fill the ring again, reports no work (polling on moves nothing more), the
 * waitable fd does not fire at once for the frames still waiting, and the NIC's send
 * completions interrupt the sleeper. */
static void full_send_ring_is_no_work_and_completions_wake(void **state)
{
	(void)state;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.irq = true;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "sim:tx_ring=64", &(struct sp_opts){.port_conf = &pc}), 0);
	int fd = myrio_stack_fd(h.a);
	assert_true(fd >= 0);
	int irq = myrio_port_irq_fd_queue(h.pa, 0);
	assert_true(irq >= 0);
	struct myrio_udp_sock *ua;
	assert_int_equal(myrio_udp_open(h.a, 6000, NULL, &ua), 0);
	struct myrio_port_info ib;
	assert_int_equal(myrio_port_info(h.pb, &ib), 0);
	assert_int_equal(myrio_arp_add_static(h.a, SP_IP_B, ib.mac), 0);
	sp_rounds(&h, 10); /* the announcements at create */

	/* The model stands still: the ring and then the stack's batch fill, and sends are
	 * refused. */
	int rc = 0;
	for (int i = 0; i < 1000 && rc == 0; i++)
		rc = myrio_udp_sendto_copy(ua, "full", 4, SP_IP_B, 6001);
	assert_int_equal(rc, -EAGAIN);
	struct myrio_stack_stats st;
	myrio_stack_stats(h.a, &st);
	assert_int_equal(myrio_stack_poll(h.a), 0);

	/* The NIC sends a few and reports them done: the next poll fills the room again. */
	myrio_sim_step(h.sim, 1);
	uint64_t before = st.tx_frames;
	assert_int_equal(myrio_stack_poll(h.a), 0);
	myrio_stack_stats(h.a, &st);
	assert_true(st.tx_frames > before);
	assert_true(h.a->ntx > 0);

	/* Sleeping: the frames left wait for completions, not for a timer due now. */
	assert_false(arm_and_check(h.a));
	assert_true(h.a->timer_deadline > myrio_stack_now_ns(h.a));
	assert_false(readable(irq, 0));
	bool woken = false;
	for (int i = 0; i < 1000 && !woken; i++) {
		myrio_sim_step(h.sim, 1);
		woken = readable(irq, 0);
	}
	assert_true(woken);
	assert_true(readable(fd, 0));
	before = st.tx_frames;
	myrio_stack_poll(h.a);
	myrio_stack_stats(h.a, &st);
	assert_true(st.tx_frames > before);

	myrio_udp_close(ua);
	sp_close(&h);
}

static void no_interrupts_no_fd(void **state)
{
	(void)state;
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:ev_nofd", NULL), 0);
	assert_int_equal(myrio_stack_arm(h.a), -EBADF);
	sp_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(writable_after_dry_pool),
	    cmocka_unit_test(now_is_the_clock_of_the_last_poll),
	    cmocka_unit_test(retry_timeout_comes_out_at_its_length),
	    cmocka_unit_test(timers_cancel_and_run_out),
	    cmocka_unit_test(waitable_fd_wakes_for_frames_and_timers),
	    cmocka_unit_test(timer_started_by_poll_moves_deadline),
	    cmocka_unit_test(arm_keeps_a_pending_timer_and_sets_a_fired_one_again),
	    cmocka_unit_test(full_send_ring_is_no_work_and_completions_wake),
	    cmocka_unit_test(no_interrupts_no_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
