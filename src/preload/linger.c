/* SPDX-License-Identifier: BSD-3-Clause */
/* Connections the program closed before the peer had all of them (data, or just the FIN):
 * while the process runs the stack keeps delivering them, as the kernel does; at exit the
 * process waits for them, since nobody sends them again once it is gone. The engine lock is
 * held throughout.
 *
 * The exit's wait, per connection (docs/preload.md):
 * - until the peer acknowledged our data and FIN, at most MYRIO_EXIT_LINGER_MS (60 s):
 *   the peer's program may be reading to the end of the stream;
 * - at most EXIT_PEER_CLOSED_MS when the peer closed too and only our FIN is left: a peer
 *   that is a program like this one may have exited already, and nothing will answer;
 * - once our FIN is acknowledged, up to EXIT_FIN_WAIT_2_MS more for the peer's FIN, to
 *   acknowledge it, as the kernel's orphan in FIN_WAIT_2 does (else that peer's FIN goes
 *   unanswered and it waits as above);
 * - beyond its bound a connection is reset, so its peer learns that the stream ended short
 *   instead of waiting for an end that will never come. The reset carries the sequence
 *   number after what was sent, which a peer that did not get it all answers with a
 *   challenge ACK (RFC 5961 §3.2); the stack answers that with the reset the peer takes, so
 *   the process keeps answering a moment (engine_exit). */
#include "preload.h"

#define LINGER_MAX 1024
#define EXIT_PEER_CLOSED_MS 5000
#define EXIT_FIN_WAIT_2_MS 1000

static struct lingering {
	struct myrio_tcp_conn *c;
	uint64_t fin_acked_ms; /* at exit: when its FIN was seen acknowledged (0: not yet) */
} lingering[LINGER_MAX];
static unsigned nlinger;
static uint64_t exit_ms; /* when the exit's wait began; 0 while the program runs */
static bool exit_reset;	 /* a connection was reset at exit */

void linger_add(struct myrio_tcp_conn *c, bool shutdown)
{
	if (shutdown)
		myrio_tcp_shutdown(c);
	myrio_tcp_shutdown_read(c); /* data sent after close() resets, as the kernel's */
	if (nlinger == LINGER_MAX) {
		myrio_tcp_close(c); /* the stack still finishes it while the process runs */
		return;
	}
	lingering[nlinger++] = (struct lingering){.c = c};
}

enum fate { KEEP, DONE, RESET };

/* At exit, for a connection not finished yet. */
static enum fate exit_fate(struct lingering *l, enum myrio_tcp_state st, uint64_t now,
			   uint32_t linger_ms)
{
	uint64_t waited = now - exit_ms;
	if (st == MYRIO_TCP_FIN_WAIT_2) {
		if (!l->fin_acked_ms)
			l->fin_acked_ms = now;
		return now - l->fin_acked_ms < EXIT_FIN_WAIT_2_MS ? KEEP : DONE;
	}
	bool peer_closed = st == MYRIO_TCP_CLOSING || st == MYRIO_TCP_LAST_ACK;
	if (peer_closed && myrio_tcp_unacked(l->c) <= 1 && waited >= EXIT_PEER_CLOSED_MS)
		return RESET; /* the FIN alone (one sequence number) is left */
	return waited < linger_ms ? KEEP : RESET;
}

bool linger_check(uint64_t now_ms, uint32_t exit_linger_ms)
{
	for (unsigned i = 0; i < nlinger;) {
		struct lingering *l = &lingering[i];
		char sink[512];
		while (myrio_tcp_read(l->c, sink, sizeof sink) > 0)
			; /* after close, data from the peer goes nowhere */
		/* Delivered once the peer acknowledged the FIN, not just the data: a process that
		 * exits with its FIN unacknowledged cannot send it again, and a peer waiting for
		 * the end of the stream (nuttcp's control connection) waits for ever. */
		enum myrio_tcp_state st = myrio_tcp_state(l->c);
		enum fate f =
		    myrio_tcp_error(l->c) || st == MYRIO_TCP_CLOSED || st == MYRIO_TCP_TIME_WAIT
			? DONE
		    : !exit_ms ? (st == MYRIO_TCP_FIN_WAIT_2 ? DONE : KEEP)
			       : exit_fate(l, st, now_ms, exit_linger_ms);
		if (f == KEEP) {
			i++;
			continue;
		}
		if (f == RESET) {
			preload_log("exit: a closed connection still unacknowledged after %llu ms: "
				    "reset",
				    (unsigned long long)(now_ms - exit_ms));
			myrio_tcp_abort(l->c);
			exit_reset = true;
		} else
			myrio_tcp_close(l->c);
		*l = lingering[--nlinger];
	}
	return nlinger != 0;
}

void linger_exit_begin(uint64_t now_ms)
{
	exit_ms = now_ms ? now_ms : 1;
}

bool linger_exit_reset(void)
{
	return exit_reset;
}

/* How many connections are still delivering (engine_progress asks on every poll). */
unsigned linger_count(void)
{
	return nlinger;
}
