/* SPDX-License-Identifier: BSD-3-Clause */
/* The SIGBUS guard over client DMA mappings (see dma_guard.h for why it works this way).
 *
 * Everything the handler touches is async-signal-safe: atomics in a fixed table, mmap,
 * write to an eventfd, sigaction. The table is written only by the control thread, and a
 * slot is freed only after the model stopped touching its mapping (the unregistration
 * synchronised with the model loop), so a handler never races with the removal of the
 * slot it finds. */
#include "dma_guard.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/log.h"

/* The one process-wide pointer: a signal handler has no other way to its context. */
static struct simd_guard *process_guard;

/* A SIGBUS that is not ours: to whoever handled it before, else the default action. */
static void pass_on(struct simd_guard *g, int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *p = &g->previous;
	if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
		p->sa_sigaction(sig, si, uc);
		return;
	}
	if (!(p->sa_flags & SA_SIGINFO) && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
		return;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	/* A fault repeats when the access is retried on return; a sent signal does not. */
	if (si->si_code <= 0)
		raise(sig);
}

/* A consistent copy of a slot's range. */
static void read_range(struct simd_guard_slot *s, uintptr_t *start, uintptr_t *end)
{
	for (;;) {
		uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		*start = atomic_load_explicit(&s->start, memory_order_relaxed);
		*end = atomic_load_explicit(&s->end, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (!(seq & 1) && atomic_load_explicit(&s->seq, memory_order_relaxed) == seq)
			return;
	}
}

static struct simd_guard_slot *find(struct simd_guard *g, uintptr_t a, uintptr_t *start,
				    uintptr_t *end)
{
	unsigned top = atomic_load_explicit(&g->top, memory_order_acquire);
	for (unsigned i = 0; i < top; i++) {
		read_range(&g->slots[i], start, end);
		if (*start && a >= *start && a < *end)
			return &g->slots[i];
	}
	return NULL;
}

/* Control thread: a new range (start 0 frees the slot). */
static void write_range(struct simd_guard_slot *s, uintptr_t start, uintptr_t end)
{
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->start, start, memory_order_relaxed);
	atomic_store_explicit(&s->end, end, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	static const char failed[] =
	    "myrio-simd: SIGBUS in a client's DMA memory and cannot replace the mapping\n";
	struct simd_guard *g = process_guard;
	int saved_errno = errno;
	/* si_code > 0: raised by the kernel for an access, so si_addr is meaningful. */
	uintptr_t start = 0, end = 0;
	struct simd_guard_slot *s =
	    si->si_code > 0 ? find(g, (uintptr_t)si->si_addr, &start, &end) : NULL;
	/* Not ours; or replaced already and faulting again, which replacing cannot mend. */
	if (!s || atomic_load_explicit(&s->fault, memory_order_relaxed)) {
		pass_on(g, sig, si, uc);
		errno = saved_errno;
		return;
	}
	/* The whole region: a hugetlbfs mapping can only be replaced in whole huge pages,
	 * and its client is dropped anyway. */
	void *va = mmap((void *)start, end - start, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED) {
		ssize_t n = write(STDERR_FILENO, failed, sizeof(failed) - 1);
		(void)n;
		pass_on(g, sig, si, uc);
		errno = saved_errno;
		return;
	}
	atomic_store_explicit(&s->fault, (uintptr_t)si->si_addr, memory_order_release);
	uint64_t one = 1;
	ssize_t n = write(g->event_fd, &one, sizeof(one));
	(void)n; /* a full counter still reads as readable */
	errno = saved_errno;
}

int simd_guard_install(struct simd_guard *g)
{
	memset(g, 0, sizeof(*g));
	g->event_fd = -1;
	if (process_guard)
		return -EBUSY; /* one per process: the handler has one context */
	g->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->event_fd < 0)
		return -errno;
	process_guard = g;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &g->previous) != 0) {
		int rc = -errno;
		process_guard = NULL;
		close(g->event_fd);
		return rc;
	}
	/* A sanitizer may keep its own handler (ASan: allow_user_segv_handler=0). */
	struct sigaction now;
	if (sigaction(SIGBUS, NULL, &now) != 0 || !(now.sa_flags & SA_SIGINFO) ||
	    now.sa_sigaction != on_sigbus)
		log_warn("the SIGBUS handler did not take (a sanitizer's is in place?): a client "
			 "shrinking its DMA memory will kill the daemon. Under ASan run with "
			 "ASAN_OPTIONS=allow_user_segv_handler=1");
	g->installed = true;
	return 0;
}

void simd_guard_uninstall(struct simd_guard *g)
{
	if (g->installed) {
		sigaction(SIGBUS, &g->previous, NULL);
		process_guard = NULL;
		g->installed = false;
	}
	if (g->event_fd >= 0)
		close(g->event_fd);
	g->event_fd = -1;
}

int simd_guard_add(struct simd_guard *g, void *va, size_t len)
{
	unsigned top = atomic_load_explicit(&g->top, memory_order_relaxed), i;
	for (i = 0; i < top; i++)
		if (!atomic_load_explicit(&g->slots[i].start, memory_order_relaxed))
			break;
	if (i == SIMD_GUARD_SLOTS)
		return -ENOSPC;
	struct simd_guard_slot *s = &g->slots[i];
	atomic_store_explicit(&s->fault, 0, memory_order_relaxed);
	write_range(s, (uintptr_t)va, (uintptr_t)va + len);
	if (i == top)
		atomic_store_explicit(&g->top, top + 1, memory_order_release);
	return (int)i;
}

uintptr_t simd_guard_remove(struct simd_guard *g, int slot)
{
	struct simd_guard_slot *s = &g->slots[slot];
	uintptr_t fault = atomic_load_explicit(&s->fault, memory_order_acquire);
	write_range(s, 0, 0);
	atomic_store_explicit(&s->fault, 0, memory_order_relaxed);
	return fault;
}

uintptr_t simd_guard_fault(const struct simd_guard *g, int slot)
{
	return atomic_load_explicit(&g->slots[slot].fault, memory_order_acquire);
}
