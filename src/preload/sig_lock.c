/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's lock: recursive, and safe for a signal handler to take on the thread it
 * interrupted at any instruction, that thread's lock and unlock included. pthread's
 * recursive mutex records its owner after taking the lock and forgets it before letting
 * go; a handler that lands in between finds the lock taken by "someone else" and waits
 * for its own thread forever. Here the lock word is the owner's thread id, set and cleared
 * by the one atomic operation that takes or frees the lock, and nested takes are counted
 * apart, so a handler either finds its thread the owner and nests, or waits as any other
 * thread does. Uncontended: one compare-and-swap to take, one exchange to free. */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

#define WAITERS 0x40000000u /* above any thread id (pid_max is at most 2^22) */

static __thread uint32_t my_tid;

static uint32_t self(void)
{
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	return my_tid;
}

void sig_lock(struct sig_lock *l)
{
	uint32_t me = self();
	if ((__atomic_load_n(&l->word, __ATOMIC_RELAXED) & ~WAITERS) == me) {
		l->nested++;
		return;
	}
	uint32_t want = me;
	for (;;) {
		uint32_t cur = 0;
		if (__atomic_compare_exchange_n(&l->word, &cur, want, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		if (!(cur & WAITERS) &&
		    !__atomic_compare_exchange_n(&l->word, &cur, cur | WAITERS, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue; /* it changed: look again */
		syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, cur | WAITERS, NULL, NULL, 0);
		/* others may still wait: whoever takes the lock after a wait frees it with a
		 * wake-up */
		want = me | WAITERS;
	}
}

void sig_unlock(struct sig_lock *l)
{
	if (l->nested) {
		l->nested--;
		return;
	}
	if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) & WAITERS)
		syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void sig_lock_forked(struct sig_lock *l)
{
	my_tid = 0; /* the child's thread has an id of its own */
	l->word = 0;
	l->nested = 0;
}
