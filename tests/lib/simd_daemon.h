/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting and stopping the model daemon (the real myrio-simd from the build tree) for
 * the tests, on a socket path unique to the test process so that parallel runs never
 * collide. */
#ifndef MYRIO_TEST_SIMD_DAEMON_H
#define MYRIO_TEST_SIMD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A window of echoes that stopped moving: true once got has not changed for 5 s (a lost
 * frame would stall the window for good). */
struct simd_progress {
	uint64_t got, at;
};
bool simd_stalled(struct simd_progress *pr, uint64_t got);

struct simd_daemon_proc {
	pid_t pid;
	char sock[108];
};

/* In a forked child: a test that dies (assertion, timeout) takes its children along, so
 * no daemon or spinning client outlives it. */
void simd_die_with_parent(void);
/* build/tests/test_x -> build/myrio-simd; $MYRIO_TEST_SIMD instead when set (a release
 * daemon for the tests of a ThreadSanitizer build: the model's own threads are not what
 * they look at, and an instrumented model is too slow for the driver's timeouts). */
void simd_daemon_path(char *out, size_t cap);
/* Waits until the daemon pid listens on path: 0, -ECHILD if it died, -ETIMEDOUT. */
int simd_wait_socket(const char *path, pid_t pid);
/* Starts myrio-simd --socket <unique> followed by the NULL-terminated args. */
int simd_daemon_start(struct simd_daemon_proc *d, const char *tag, const char *const *args);
/* SIGTERM; returns 0 when it exited 0 and removed its socket file. */
int simd_daemon_stop(struct simd_daemon_proc *d);
int simd_daemon_alive(const struct simd_daemon_proc *d);

#endif
