/* SPDX-License-Identifier: BSD-3-Clause */
/* What tests take from the environment (their sizes, so that a run can be made longer by
 * hand) and the heap in use (memory per connection; nothing allocated on the data path). */
#ifndef MYRIO_TEST_ENV_H
#define MYRIO_TEST_ENV_H

#include <stddef.h>
#include <stdint.h>

/* The variable's number (strtoul base 0), or dflt when unset or empty. */
unsigned env_u(const char *name, unsigned dflt);
/* The variable's size in bytes, with an optional K, M or G suffix (powers of 1024). */
uint64_t env_bytes(const char *name, uint64_t dflt);
size_t heap_used(void);
/* Moves this process into a network namespace of its own (nothing it creates leaks or
 * collides), or exits 77 (skipped) without root. */
void test_private_netns(void);

#endif
