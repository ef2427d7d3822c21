/* SPDX-License-Identifier: BSD-3-Clause */
/* Survives a client that shrinks a DMA file after registering it.
 *
 * A memfd is sealed against shrinking when it allows sealing, but a hugetlbfs file or an
 * unsealable memfd can be truncated by its owner at any time, and the model thread's next
 * access to the lost pages raises SIGBUS. The guard keeps a table of the client mappings,
 * readable from a signal handler; its SIGBUS handler recognises a fault inside one of them,
 * replaces the whole mapping with zero-filled anonymous memory (MAP_FIXED, same address)
 * so that the faulting access completes, flags the region and wakes the daemon's control
 * loop through an eventfd, which then drops the client. Nothing is added to the model's
 * data path, and the model is never interrupted half-way (a frame from the guilty client
 * reaches its peer with zeros where the lost bytes were). A SIGBUS anywhere else goes to
 * the handler that was there before (the default: a core dump; or a sanitizer's).
 */
#ifndef MYRIO_SIMD_DMA_GUARD_H
#define MYRIO_SIMD_DMA_GUARD_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SIMD_GUARD_SLOTS (SIMD_MAX_CLIENTS * SIMD_MAX_REGIONS)

/* Written by the control thread only, read by the handler on any thread: a sequence
 * count (odd while the slot changes) keeps a reader from pairing the start of a freed
 * region with the end of the next one. */
struct simd_guard_slot {
	_Atomic uint32_t seq;
	_Atomic uintptr_t start, end; /* [start, end); start 0: free */
	_Atomic uintptr_t fault;      /* the first faulting address, 0 while none */
};

struct simd_guard {
	struct simd_guard_slot slots[SIMD_GUARD_SLOTS];
	_Atomic unsigned top;	   /* every slot in use is below */
	int event_fd;		   /* readable after a recovered fault */
	struct sigaction previous; /* SIGBUS elsewhere goes there */
	bool installed;
};

/* Installs the SIGBUS handler; before the model thread starts. */
int simd_guard_install(struct simd_guard *g);
void simd_guard_uninstall(struct simd_guard *g);

/* A client mapping, before the model may touch it: the slot, or -ENOSPC. */
int simd_guard_add(struct simd_guard *g, void *va, size_t len);
/* Once the model can no longer touch it (unregistered, synchronised), before munmap.
 * Returns the address that faulted in it, or 0. */
uintptr_t simd_guard_remove(struct simd_guard *g, int slot);
/* The address that faulted in the slot's mapping, or 0. */
uintptr_t simd_guard_fault(const struct simd_guard *g, int slot);

#endif
