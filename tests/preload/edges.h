/* SPDX-License-Identifier: BSD-3-Clause */
/* What the edge-case program's files share: the peer's commands, the check that ends a case,
 * and the ways to reach the peer. */
#ifndef PRELOAD_EDGES_H
#define PRELOAD_EDGES_H

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PEER_PORT 7000
#define CLOSED_PORT 7001 /* nothing listens there */

/* A connection's first byte: what the peer does with it. */
enum {
	CMD_ECHO = 'e',
	CMD_CLOSE = 'c',
	CMD_RESET = 'r',
	CMD_BACK = 'b',
	CMD_SLEEP = 's',
	CMD_MCAST = 'm',
	CMD_QUIT = 'q',
	CMD_UDP = 'u',	     /* then a port: "d" comes back in a datagram to it */
	CMD_FIN = 'f',	     /* "hello", then the end of the stream */
	CMD_FIN_RESET = 'F', /* "hello" and the end of the stream, a byte read, a reset */
};

extern int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s: ", __func__);                                             \
			printf(__VA_ARGS__);                                                       \
			printf(" (errno %s)\n", strerror(errno));                                  \
			failures++;                                                                \
			return;                                                                    \
		}                                                                                  \
	} while (0)

/* The peer's address (EDGES_PEER_IP, else 10.0.0.2) at port. */
struct sockaddr_in peer_addr(int port);
/* A connection to the peer that asked it cmd; -1 on failure. */
int dial(char cmd);
/* A UDP socket bound to port on any address; -1 on failure. */
int udp_bound(int port);
/* One byte from fd within 3 s; 0 when none came. */
char recv_byte(int fd);
/* Joins t within seconds (1), else cancels it and joins (0). */
int joined_within(pthread_t t, int seconds);
/* Runs stmt, a cancellation point of a thread that may be cancelled there. pthread_cancel
 * unwinds the thread's frames (a forced unwind) without the address sanitizer seeing it
 * (google/sanitizers#1399), so those frames' redzones stay poisoned, and the sanitizer's own
 * teardown of the thread, which runs on that stack next, reports an overflow in its
 * sigaltstack call that is not there. A cleanup handler makes the unwind go through
 * __pthread_unwind_next, which is declared noreturn: the instrumented code clears the
 * stack's shadow before such a call. */
void cancel_unwound(void *arg);
#define CANCEL_POINT(stmt)                                                                         \
	do {                                                                                       \
		pthread_cleanup_push(cancel_unwound, NULL);                                        \
		stmt;                                                                              \
		pthread_cleanup_pop(0);                                                            \
	} while (0)
/* Asks the peer for a datagram from a socket of its own to port: the connection that asked
 * (close it after), or -1. */
int ask_datagram(int port);
/* A one-byte exchange with the peer's echo on a new connection; 1 when it worked. */
int echo_once(void);
/* A blocking recv on fd with a 1 s timeout slept (used next to no CPU, *cpu s). */
int recv_sleeps(int fd, double *cpu);

/* edges_calls.c: the calls compared with the kernel's (run without the preload too) */
void udp_connect_unspec(void);
void epoll_pwait2_waits(void);
void tcp_msg_peek(void);
void tcp_bind_in_use(void);
void pollrdhup_with_data_queued(void);
void select_past_fd_setsize(void);
void signal_close_races_sleep(void);
void tcp_connect_unspec(void);
void tcp_peek_waitall(void);
void calls_race_close(void);
void shutdown_listener_ends_accept(void);
void signal_close_frees_at_once(void);
void udp_shutdown_as_kernel(void);
void sockopt_as_kernel(void);
void bad_buffers_efault(void);
void tcp_bind_port0_named(void);
void recv_flags_as_kernel(void);
void write_after_fin_then_reset(void);
void send_flags_refused(void);
void errno_kept_on_success(void);
void fdopen_fileno(void);

/* edges_efault.c: bad pointers other than data buffers (run without the preload too) */
void bad_addresses_efault(void);

/* edges_signals.c: signal handlers on the socket in use (run without the preload too) */
void signal_dup_close_stress(void);
void cancel_in_close(void);
/* edges_restart.c: SA_RESTART handlers during blocking calls (run without the preload too) */
void sa_restart_recv_goes_on(void);

/* edges_connect.c: connect again after a failed attempt (run without the preload too) */
void connect_again_after_refusal(void);

/* edges_cancel.c: a cancel pending when a blocking call is entered (run without the preload too) */
void cancel_pending_at_entry(void);

#endif
