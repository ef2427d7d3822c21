/* SPDX-License-Identifier: BSD-3-Clause */
/* Application timers: one-shot, cancellable, on the stack's timer wheel, fired from the
 * poll. Their records are preallocated (conf.max_timers); an id carries the record's
 * generation, so cancelling a timer that already fired finds nothing to cancel rather than
 * a newer timer in the same record. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "tcp_lite/stack.h"

struct app_timer {
	struct tw_timer tw;
	myrio_timer_fn fn;
	void *arg;
	uint32_t gen;
	uint32_t next_free; /* index + 1 of the next free record, 0 = none */
};

int app_timers_init(struct myrio_stack *s)
{
	uint32_t n = s->conf.max_timers;
	s->timers = calloc(n ? n : 1, sizeof(*s->timers));
	if (!s->timers)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		s->timers[i].tw.owner = TW_OWNER_APP;
		s->timers[i].next_free = i + 2 <= n ? i + 2 : 0;
	}
	s->timer_free = n ? 1 : 0;
	return 0;
}

void app_timers_fini(struct myrio_stack *s)
{
	free(s->timers);
	s->timers = NULL;
}

static void release(struct myrio_stack *s, struct app_timer *t)
{
	t->gen++;
	t->next_free = s->timer_free;
	s->timer_free = (uint32_t)(t - s->timers) + 1;
}

/* The wheel's tick at which a deadline in clock nanoseconds is due: the first millisecond
 * that starts at or after it (the stack's ms count is the clock's plus one). */
static uint64_t tick_of(uint64_t due_ns)
{
	return (due_ns + 999999) / 1000000 + 1;
}

int myrio_timer_start(struct myrio_stack *s, uint64_t delay_ns, myrio_timer_fn fn, void *arg,
		      uint64_t *id)
{
	if (!fn)
		return -EINVAL;
	if (!s->timer_free)
		return -ENOBUFS;
	if (delay_ns > UINT64_MAX >> 2) /* 146 years: past that, a sum that cannot wrap */
		delay_ns = UINT64_MAX >> 2;
	uint64_t due = s->conf.clock(s->conf.clock_arg) + delay_ns;
	struct app_timer *t = &s->timers[s->timer_free - 1];
	s->timer_free = t->next_free;
	t->fn = fn;
	t->arg = arg;
	tw_add(&s->wheel, &t->tw, tick_of(due));
	if (id)
		*id = (uint64_t)t->gen << 32 | (uint64_t)(t - s->timers + 1);
	return 0;
}

int myrio_timer_cancel(struct myrio_stack *s, uint64_t id)
{
	uint32_t idx = (uint32_t)id;
	if (idx == 0 || idx > s->conf.max_timers)
		return -ENOENT;
	struct app_timer *t = &s->timers[idx - 1];
	if (t->gen != (uint32_t)(id >> 32) || !tw_pending(&t->tw))
		return -ENOENT;
	tw_del(&s->wheel, &t->tw);
	release(s, t);
	return 0;
}

void app_timer_due(struct myrio_stack *s, struct tw_timer *tw)
{
	struct app_timer *t = (struct app_timer *)((char *)tw - offsetof(struct app_timer, tw));
	myrio_timer_fn fn = t->fn;
	void *arg = t->arg;
	release(s, t); /* before the call: fn may start timers, this one's record included */
	fn(arg, s);
}
