/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats: a port's per-queue counters (DIR_qN_NAME: rx_q0_packets, irq_q3_updates)
 * as one table, a row per queue and a column per counter, with the totals, instead of a
 * line each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define MAX_QUEUES 64
#define MAX_COLUMNS 16

bool stats_queue_counter(const char *name, unsigned *queue, char *column, size_t len)
{
	const char *u = strchr(name, '_');
	if (!u || u[1] != 'q' || u[2] < '0' || u[2] > '9')
		return false;
	char *end;
	unsigned long q = strtoul(u + 2, &end, 10);
	if (*end != '_' || !end[1] || q >= MAX_QUEUES)
		return false;
	*queue = (unsigned)q;
	snprintf(column, len, "%.*s%s", (int)(u - name + 1), name, end + 1);
	return true;
}

struct table {
	unsigned nq, ncol;
	char col[MAX_COLUMNS][40];
	uint64_t v[MAX_QUEUES][MAX_COLUMNS];
	double rate[MAX_QUEUES][MAX_COLUMNS];
};

static int column(struct table *t, const char *c)
{
	for (unsigned i = 0; i < t->ncol; i++)
		if (!strcmp(t->col[i], c))
			return (int)i;
	if (t->ncol == MAX_COLUMNS)
		return -1;
	snprintf(t->col[t->ncol], sizeof(t->col[0]), "%s", c);
	return (int)t->ncol++;
}

unsigned stats_print_queues(FILE *f, unsigned n, const char *const *names, const uint64_t *values,
			    const uint64_t *prev, double dt)
{
	struct table *t = calloc(1, sizeof(*t));
	if (!t)
		return 0;
	unsigned shown = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned q;
		char c[40];
		int k;
		if (!stats_queue_counter(names[i], &q, c, sizeof(c)) || (k = column(t, c)) < 0)
			continue;
		t->v[q][k] = values[i];
		if (prev && dt > 0)
			t->rate[q][k] = (double)(values[i] - prev[i]) / dt;
		t->nq = q + 1 > t->nq ? q + 1 : t->nq;
		shown++;
	}
	if (shown) {
		fprintf(f, "    %-8s", "queue");
		for (unsigned k = 0; k < t->ncol; k++)
			fprintf(f, " %*s", k < 4 ? 16 : 12, t->col[k]);
		fputc('\n', f);
		uint64_t sum[MAX_COLUMNS] = {0};
		for (unsigned q = 0; q <= t->nq; q++) {
			if (q < t->nq)
				fprintf(f, "    %-8u", q);
			else
				fprintf(f, "    %-8s", "total");
			for (unsigned k = 0; k < t->ncol; k++) {
				uint64_t v = q < t->nq ? t->v[q][k] : sum[k];
				sum[k] += q < t->nq ? v : 0;
				fprintf(f, " %*llu", k < 4 ? 16 : 12, (unsigned long long)v);
			}
			fputc('\n', f);
		}
		if (prev && dt > 0) { /* packets per second of each queue */
			int rx = column(t, "rx_packets"), tx = column(t, "tx_packets");
			for (unsigned q = 0; q < t->nq && rx >= 0 && tx >= 0; q++)
				fprintf(f, "    %-8u %16.0f rx/s %16.0f tx/s\n", q, t->rate[q][rx],
					t->rate[q][tx]);
		}
	}
	free(t);
	return shown;
}
