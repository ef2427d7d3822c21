/* SPDX-License-Identifier: BSD-3-Clause */
/* The hierarchical timing wheel of timer_wheel.h. */
#include "tcp_lite/timer_wheel.h"

#include <string.h>

#define TW_MASK (TW_SLOTS - 1)

void tw_init(struct timer_wheel *w, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	w->now = now;
}

static void mark_used(struct timer_wheel *w, unsigned slot)
{
	w->used[slot / 64] |= 1ull << (slot % 64);
}

static void mark_empty(struct timer_wheel *w, unsigned slot)
{
	w->used[slot / 64] &= ~(1ull << (slot % 64));
}

/* The lowest level whose slot of when is less than a turn ahead of the clock. */
static unsigned slot_of(const struct timer_wheel *w, uint64_t when)
{
	if (when < w->now)
		when = w->now;
	for (unsigned level = 0; level < TW_LEVELS; level++) {
		unsigned shift = TW_BITS * level;
		if ((when >> shift) - (w->now >> shift) < TW_SLOTS)
			return level * TW_SLOTS + (unsigned)((when >> shift) & TW_MASK);
	}
	unsigned shift = TW_BITS * (TW_LEVELS - 1);
	return (TW_LEVELS - 1) * TW_SLOTS + (unsigned)(((w->now >> shift) + TW_MASK) & TW_MASK);
}

void tw_del(struct timer_wheel *w, struct tw_timer *t)
{
	if (!t->pprev)
		return;
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	if (!w->slots[t->slot])
		mark_empty(w, t->slot);
	t->next = NULL;
	t->pprev = NULL;
	w->pending--;
}

void tw_add(struct timer_wheel *w, struct tw_timer *t, uint64_t when)
{
	tw_del(w, t);
	unsigned slot = slot_of(w, when);
	t->when = when;
	t->slot = (uint16_t)slot;
	t->next = w->slots[slot];
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = &w->slots[slot];
	w->slots[slot] = t;
	mark_used(w, slot);
	w->pending++;
}

/* Detaches a slot's list: its timers stay pending (and removable) in *list. */
static void take(struct timer_wheel *w, unsigned slot, struct tw_timer **list)
{
	*list = w->slots[slot];
	w->slots[slot] = NULL;
	mark_empty(w, slot);
	if (*list)
		(*list)->pprev = list;
}

static struct tw_timer *pop(struct timer_wheel *w, struct tw_timer **list)
{
	struct tw_timer *t = *list;
	if (!t)
		return NULL;
	*list = t->next;
	if (*list)
		(*list)->pprev = list;
	t->next = NULL;
	t->pprev = NULL;
	w->pending--;
	return t;
}

/* At the start of a level-0 turn: the slot of each higher level whose turn starts now
 * moves down (a level-2 slot only when level 1 wrapped, and so on). */
static void cascade(struct timer_wheel *w, uint64_t tick)
{
	for (unsigned level = 1; level < TW_LEVELS; level++) {
		unsigned index = (unsigned)((tick >> (TW_BITS * level)) & TW_MASK);
		struct tw_timer *list, *t;
		take(w, level * TW_SLOTS + index, &list);
		while ((t = pop(w, &list)) != NULL)
			tw_add(w, t, t->when);
		if (index != 0)
			break;
	}
}

/* The first non-empty slot of a level at or after index from, TW_SLOTS if none. */
static unsigned next_used(const struct timer_wheel *w, unsigned level, unsigned from)
{
	const uint64_t *used = w->used + level * (TW_SLOTS / 64);
	while (from < TW_SLOTS) {
		uint64_t bits = used[from / 64] >> (from % 64);
		if (bits)
			return from + (unsigned)__builtin_ctzll(bits);
		from = (from | 63) + 1;
	}
	return TW_SLOTS;
}

/* The first tick after tick at which a slot fires or cascades: per level, the start of
 * its next non-empty slot in the current turn, or else, if it holds any timer (for its
 * next turn), the end of the turn. The slots in between are all empty. */
static uint64_t next_event(const struct timer_wheel *w, uint64_t tick)
{
	uint64_t best = UINT64_MAX;
	for (unsigned level = 0; level < TW_LEVELS; level++) {
		unsigned shift = TW_BITS * level;
		unsigned index = (unsigned)((tick >> shift) & TW_MASK);
		unsigned j = next_used(w, level, index + 1);
		if (j == TW_SLOTS && next_used(w, level, 0) == TW_SLOTS)
			continue; /* level empty */
		uint64_t t = ((tick >> shift) - index + j) << shift;
		if (t < best)
			best = t;
	}
	return best;
}

uint64_t tw_next(const struct timer_wheel *w)
{
	if (w->pending == 0)
		return UINT64_MAX;
	uint64_t next = next_event(w, w->now - 1);
	return next < w->now ? w->now : next;
}

void tw_run(struct timer_wheel *w, uint64_t now, void (*fire)(struct tw_timer *, void *), void *arg)
{
	while (w->now <= now) {
		if (w->pending == 0) {
			w->now = now + 1; /* nothing to fire or cascade on the way */
			return;
		}
		uint64_t tick = w->now;
		unsigned index = (unsigned)(tick & TW_MASK);
		if (index == 0)
			cascade(w, tick);
		struct tw_timer *list, *t;
		take(w, index, &list);
		w->now = tick + 1; /* what fire adds for now or earlier goes to the next slot */
		while ((t = pop(w, &list)) != NULL)
			fire(t, arg);
		/* Skip the empty slots, of every level, up to the next that fires or
		 * cascades. */
		uint64_t next = next_event(w, tick);
		if (next > w->now)
			w->now = next <= now ? next : now + 1;
	}
}
