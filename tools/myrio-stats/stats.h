/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats: what its parts share. */
#ifndef MYRIO_STATS_H
#define MYRIO_STATS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "myrio/publish.h"

enum stats_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROMETHEUS };

struct stats_opts {
	double interval; /* seconds between reports */
	long count;	 /* reports, < 0: until a signal */
	bool all;	 /* zero counters too (text) */
	enum stats_format format;
};

extern volatile sig_atomic_t stats_stop;

double stats_now(void);
/* Sleeps until t (stats_now) or a signal. */
void stats_sleep_until(double t);

/* Opens DEVICE and reports its counters (the device must be free). */
int stats_device(const char *device, const struct stats_opts *o);
/* Reports the counters process pid publishes, without touching its ports. */
int stats_attach(int pid, const struct stats_opts *o);

/* Whether name is a per-queue counter (DIR_qN_NAME): its queue and its column (DIR_NAME). */
bool stats_queue_counter(const char *name, unsigned *queue, char *column, size_t len);
/* The per-queue counters among names/values as a table with the totals (and each queue's
 * packets per second when prev, the values dt seconds before, is given); returns how many
 * it showed. */
unsigned stats_print_queues(FILE *f, unsigned n, const char *const *names, const uint64_t *values,
			    const uint64_t *prev, double dt);

/* One snapshot in JSON (one line) or the Prometheus text format. */
void stats_print_json(FILE *f, const struct myrio_published *p, double age_s);
void stats_print_prometheus(FILE *f, const struct myrio_published *p);

#endif
