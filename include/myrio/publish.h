/* SPDX-License-Identifier: BSD-3-Clause */
/* A running program's counters, readable by other processes (docs/observability.md).
 *
 * Every port a process opens, and every tcp_lite stack, publishes its counters into a
 * read-only shared-memory segment of the process, /dev/shm/myrio.PID: copied from the poll
 * (myrio_rx_burst) at most every 100 ms, never per packet. `myrio-stats --pid PID` or
 * `--name PROGRAM` reads it without opening the port. MYRIO_PUBLISH=0 in the environment
 * turns publishing off.
 */
#ifndef MYRIO_PUBLISH_H
#define MYRIO_PUBLISH_H

#include <stdint.h>

#include "myrio/port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A source of counters: fills up to n names (if names is not NULL) and values (if values is
 * not NULL), returns how many it has. */
typedef int (*myrio_counters_fn)(void *arg, struct myrio_xstat_name *names, uint64_t *values,
				 unsigned n);

/* Adds a source under group ("port sim:sim0", "stack 10.0.0.2"); returns a handle > 0 for
 * myrio_publish_remove, or a negative errno. Its counters are copied by the thread that added
 * it, from its polls, or by myrio_publish_now. Ports and stacks add themselves. */
int myrio_publish_add(const char *group, myrio_counters_fn fn, void *arg);
/* The same for a source whose counters belong to whoever polls port: they are copied by the
 * thread that calls myrio_rx_burst on it (at most every 100 ms), never by another, so a port
 * opened on one thread and polled on another publishes what the poller sees. */
int myrio_publish_add_port(struct myrio_port *port, const char *group, myrio_counters_fn fn,
			   void *arg);
/* The same for counters that belong to whoever polls queue of port (myrio_rx_burst_queue):
 * copied by that thread only. A stack on queue 1 of a port adds its counters so. */
int myrio_publish_add_queue(struct myrio_port *port, uint16_t queue, const char *group,
			    myrio_counters_fn fn, void *arg);
void myrio_publish_remove(int handle);
/* Copies, now, the counters of the sources the calling thread added with myrio_publish_add
 * (the poll does it on its own). */
void myrio_publish_now(void);

/* Reading another process's counters. */
struct myrio_published_counter {
	char group[64];
	char name[MYRIO_XSTAT_NAME_LEN];
	uint64_t value;
};

struct myrio_published {
	int pid;
	char program[64];
	uint64_t updated_ns; /* CLOCK_MONOTONIC of the last copy */
	unsigned n;
	struct myrio_published_counter *counters; /* n of them */
};

/* A consistent snapshot of what pid publishes (-ENOENT: nothing; -EPROTO: not a segment of
 * this format). Free it with myrio_published_free. */
int myrio_published_read(int pid, struct myrio_published *out);
void myrio_published_free(struct myrio_published *p);
/* The pids of running processes that publish, whose program name is program (NULL: any);
 * returns how many were found (at most max filled). */
int myrio_published_find(const char *program, int *pids, unsigned max);

#ifdef __cplusplus
}
#endif
#endif
