/* SPDX-License-Identifier: BSD-3-Clause */
/* The timing wheel against a plain list: random deadlines from now to beyond the top
 * level, some moved or removed, the clock run forward in steps from 1 ms to hours. Every
 * timer fires once, in the first run that reaches its deadline, never before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tcp_lite/timer_wheel.h"

#define N 4000

struct item {
	struct tw_timer t;
	uint64_t when; /* 0: not armed */
	unsigned fired;
};

static struct item items[N];
static uint64_t run_now;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fire(struct tw_timer *t, void *arg)
{
	(void)arg;
	struct item *it = (struct item *)t;
	it->fired++;
}

/* A deadline from the past to 60 days ahead, most of them within TCP's ranges. */
static uint64_t deadline(uint64_t *s, uint64_t now)
{
	switch (rnd(s) % 6) {
	case 0:
		return now > 10 ? now - rnd(s) % 10 : now;
	case 1:
		return now + rnd(s) % 256;
	case 2:
		return now + rnd(s) % 65536;
	case 3:
		return now + rnd(s) % (1ull << 24);
	case 4:
		return now + rnd(s) % (1ull << 32);
	default:
		return now + (1ull << 32) + rnd(s) % (1ull << 33);
	}
}

static void check_after_run(uint64_t now)
{
	for (unsigned i = 0; i < N; i++) {
		struct item *it = &items[i];
		if (!it->when)
			continue;
		if (it->when <= now) {
			assert_int_equal(it->fired, 1); /* checked after every run: the first */
			assert_false(tw_pending(&it->t));
			it->when = 0;
		} else {
			assert_int_equal(it->fired, 0);
			assert_true(tw_pending(&it->t));
		}
	}
}

static void matches_a_plain_list(void **state)
{
	(void)state;
	uint64_t seed = 0x1234567;
	struct timer_wheel *w = calloc(1, sizeof(*w));
	uint64_t now = 1000003;
	tw_init(w, now);
	uint64_t armed = 0;
	for (int round = 0; round < 400; round++) {
		for (int k = 0; k < 50; k++) {
			struct item *it = &items[rnd(&seed) % N];
			if (it->when && rnd(&seed) % 4 == 0) {
				tw_del(w, &it->t);
				it->when = 0;
				continue;
			}
			if (!it->when)
				armed++;
			it->when = deadline(&seed, now);
			if (it->when == 0)
				it->when = 1;
			it->fired = 0;
			tw_add(w, &it->t, it->when);
		}
		uint64_t step;
		switch (rnd(&seed) % 5) {
		case 0:
			step = 1;
			break;
		case 1:
			step = rnd(&seed) % 300;
			break;
		case 2:
			step = rnd(&seed) % 70000;
			break;
		case 3:
			step = rnd(&seed) % (1ull << 25);
			break;
		default:
			step = rnd(&seed) % (1ull << 34);
		}
		now += step;
		run_now = now;
		tw_run(w, now, fire, NULL);
		check_after_run(now);
	}
	uint64_t left = 0;
	for (unsigned i = 0; i < N; i++)
		left += items[i].when != 0;
	assert_int_equal(w->pending, left);
	assert_true(armed > 10000);
	free(w);
}

/* Timers that add themselves again from fire, due at once or later: each run fires each
 * at most once per millisecond it passes, and the run ends. */
static unsigned refires;
static struct timer_wheel *rw;

static void fire_again(struct tw_timer *t, void *arg)
{
	(void)arg;
	refires++;
	tw_add(rw, t, t->when); /* past: goes to the next millisecond */
}

static void refiring_from_fire_moves_to_the_next_millisecond(void **state)
{
	(void)state;
	rw = calloc(1, sizeof(*rw));
	tw_init(rw, 10);
	struct tw_timer t = {0};
	tw_add(rw, &t, 10);
	run_now = 10;
	tw_run(rw, 10, fire_again, NULL);
	assert_int_equal(refires, 1);
	run_now = 15;
	tw_run(rw, 15, fire_again, NULL);
	assert_int_equal(refires, 6); /* ms 11..15 */
	assert_true(tw_pending(&t));
	tw_del(rw, &t);
	assert_int_equal(rw->pending, 0);
	free(rw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(matches_a_plain_list),
	    cmocka_unit_test(refiring_from_fire_moves_to_the_next_millisecond),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
