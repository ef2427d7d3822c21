/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters written by one thread and read by any: a queue's thread counts, the stats
 * functions and the publisher read from theirs. C11 atomics with relaxed order, so a reader
 * never races with the writer and never sees a torn value (32-bit targets), and the writer
 * pays what a plain increment costs: a load and a store, no locked instruction. Relaxed is
 * enough: a counter orders nothing else. A counter with writers on several threads needs them
 * one at a time (a lock, or the recovery that holds every queue out of its gate): the load
 * and store are not one indivisible addition. */
#ifndef MYRIO_UTIL_COUNTER_H
#define MYRIO_UTIL_COUNTER_H

#include <stdatomic.h>
#include <stdint.h>

typedef _Atomic uint64_t counter64;
typedef _Atomic uint32_t counter32;

static inline uint64_t counter_read(const counter64 *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static inline void counter_set(counter64 *c, uint64_t v)
{
	atomic_store_explicit(c, v, memory_order_relaxed);
}

/* By the counter's one writer. */
static inline void counter_add(counter64 *c, uint64_t n)
{
	counter_set(c, counter_read(c) + n);
}

/* 32-bit values copied from the NIC (its status block's counters, the link state). */
static inline uint32_t counter32_read(const counter32 *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static inline void counter32_set(counter32 *c, uint32_t v)
{
	atomic_store_explicit(c, v, memory_order_relaxed);
}

#endif
