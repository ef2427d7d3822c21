/* SPDX-License-Identifier: BSD-3-Clause */
/* A hierarchical timing wheel (Varghese and Lauck, "Hashed and Hierarchical Timing Wheels",
 * scheme 7) over a millisecond clock: adding, moving and removing a timer are O(1), and
 * running the clock forward costs O(1) per millisecond passed plus O(levels) per timer that
 * fires, whatever the number of timers pending.
 *
 * Level L has TW_SLOTS slots of 2^(TW_BITS * L) ms each. A timer sits in the lowest level
 * whose slot of its deadline is at most TW_SLOTS - 1 slots ahead of the clock; when the
 * clock reaches the start of that slot, its timers move down a level ("cascade"), until
 * level 0 fires them in their exact millisecond. Deadlines beyond the top level's reach
 * (49 days) are filed at its farthest slot and filed again when that comes. */
#ifndef MYRIO_TCP_LITE_TIMER_WHEEL_H
#define MYRIO_TCP_LITE_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define TW_BITS 8
#define TW_SLOTS (1u << TW_BITS)
#define TW_LEVELS 4

struct tw_timer {
	struct tw_timer *next, **pprev; /* pprev NULL: not pending */
	uint64_t when;			/* deadline, ms */
	uint16_t slot;			/* level * TW_SLOTS + index, while pending */
	uint8_t owner;			/* what fire is given: a TW_OWNER_ value of the user's */
};

struct timer_wheel {
	uint64_t now; /* the next millisecond to run: every deadline before it has fired */
	uint32_t pending;
	struct tw_timer *slots[TW_LEVELS * TW_SLOTS];
	uint64_t used[TW_LEVELS * TW_SLOTS / 64]; /* bit per non-empty slot */
};

void tw_init(struct timer_wheel *w, uint64_t now);

static inline bool tw_pending(const struct tw_timer *t)
{
	return t->pprev != 0;
}

/* Files t (pending or not) to fire at when; a deadline already past fires at the next run. */
void tw_add(struct timer_wheel *w, struct tw_timer *t, uint64_t when);
void tw_del(struct timer_wheel *w, struct tw_timer *t);

/* The first tick at or after the wheel's clock at which a timer may fire (a cascade counts,
 * so it can be early, never late); UINT64_MAX when nothing is pending. */
uint64_t tw_next(const struct timer_wheel *w);

/* Runs the clock up to now included: fire(t, arg) for each timer due, once, in deadline
 * order to the millisecond, t no longer pending (fire may add it again). */
void tw_run(struct timer_wheel *w, uint64_t now, void (*fire)(struct tw_timer *, void *),
	    void *arg);

#endif
