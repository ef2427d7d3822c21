/* SPDX-License-Identifier: BSD-3-Clause */
/* Checked-pattern TCP transfers from stack a to stack b of a two-stack harness
 * (stack_pair.h), pumped by the test between rounds rather than by events. */
#ifndef MYRIO_TEST_STACK_XFER_H
#define MYRIO_TEST_STACK_XFER_H

#include <stdbool.h>
#include <stdint.h>

#include "stack_pair.h"

struct xfer {
	uint64_t total, sent, rcvd;
	uint64_t bad; /* first mismatching offset + 1 */
	struct myrio_tcp_conn *cli, *srv;
	bool zero_copy;
	bool hold; /* receiver stops reading */
	double secs;
};

/* Sends the pattern on x->cli while the connection takes it, in segments of an MSS. */
void xfer_send(struct stack_pair *sp, struct xfer *x);
/* Checks a received buffer against the pattern at x->rcvd, counts it and releases it. */
void xfer_take(struct xfer *x, struct myrio_pkt *p);
void xfer_recv(struct xfer *x); /* reads and checks what x->srv has */
/* Connect a -> b:5001, send x->total bytes, half-close, check everything arrived intact
 * and both sides close cleanly. */
void xfer_run(struct stack_pair *sp, struct xfer *x, uint64_t max_rounds);
void xfer_report(const char *what, struct stack_pair *sp, const struct xfer *x);

#endif
