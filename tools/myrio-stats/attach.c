/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats --pid/--name: reports what a running program publishes, read from its
 * segment, with per-second rates computed between two reads. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

static double mono_s(uint64_t ns)
{
	return ns / 1e9;
}

/* The value of (group, name) in the previous snapshot; false if it had none. */
static bool previous(const struct myrio_published *p, const struct myrio_published_counter *c,
		     unsigned hint, uint64_t *v)
{
	if (hint < p->n && strcmp(p->counters[hint].name, c->name) == 0 &&
	    strcmp(p->counters[hint].group, c->group) == 0) {
		*v = p->counters[hint].value;
		return true;
	}
	for (unsigned i = 0; i < p->n; i++)
		if (strcmp(p->counters[i].name, c->name) == 0 &&
		    strcmp(p->counters[i].group, c->group) == 0) {
			*v = p->counters[i].value;
			return true;
		}
	return false;
}

/* The per-queue counters of the group that ends before counter end, as a table. */
static void group_queues(const struct myrio_published *cur, const struct myrio_published *prev,
			 double dt, unsigned start, unsigned end)
{
	unsigned n = end - start;
	const char **names = calloc(n ? n : 1, sizeof(*names));
	uint64_t *v = calloc(n ? n : 1, sizeof(*v)), *before = calloc(n ? n : 1, sizeof(*v));
	bool have_prev = prev != NULL;
	for (unsigned i = 0; names && v && before && i < n; i++) {
		const struct myrio_published_counter *c = &cur->counters[start + i];
		names[i] = c->name;
		v[i] = c->value;
		have_prev = have_prev && previous(prev, c, start + i, &before[i]);
	}
	if (names && v && before)
		stats_print_queues(stdout, n, names, v, have_prev ? before : NULL, dt);
	free(names);
	free(v);
	free(before);
}

static void print_text(const struct myrio_published *cur, const struct myrio_published *prev,
		       double dt, double age, bool all, bool first)
{
	printf("%s%s (pid %d), counters copied %.1f s ago\n", first ? "" : "\n", cur->program,
	       cur->pid, age);
	const char *group = "";
	unsigned group_start = 0;
	for (unsigned i = 0; i < cur->n; i++) {
		const struct myrio_published_counter *c = &cur->counters[i];
		if (strcmp(c->group, group) != 0) {
			if (i)
				group_queues(cur, prev, dt, group_start, i);
			group = c->group;
			group_start = i;
			printf("  %-36s %20s %14s\n", group, "value", "per second");
		}
		uint64_t before;
		unsigned q;
		char col[40];
		if ((!c->value && !all) || stats_queue_counter(c->name, &q, col, sizeof(col)))
			continue;
		if (prev && dt > 0 && previous(prev, c, i, &before)) {
			uint64_t d = c->value - before;
			if (c->value < before && before <= UINT32_MAX)
				d = (uint32_t)d; /* a NIC counter of 32 bits wrapped */
			printf("    %-34s %20llu %14.0f\n", c->name, (unsigned long long)c->value,
			       d / dt);
		} else {
			printf("    %-34s %20llu %14s\n", c->name, (unsigned long long)c->value,
			       "-");
		}
	}
	if (cur->n)
		group_queues(cur, prev, dt, group_start, cur->n);
	fflush(stdout);
}

int stats_attach(int pid, const struct stats_opts *o)
{
	struct myrio_published prev = {0}, cur;
	bool have_prev = false;
	for (long i = 0; !stats_stop && (o->count < 0 || i < o->count); i++) {
		if (i)
			stats_sleep_until(stats_now() + o->interval);
		if (stats_stop)
			break;
		int rc = myrio_published_read(pid, &cur);
		if (rc < 0) {
			fprintf(stderr, "myrio-stats: pid %d: %s\n", pid,
				rc == -ENOENT	? "publishes no counters (not a libmyrio program, "
						  "ended, or MYRIO_PUBLISH=0)"
				: rc == -EPROTO ? "its segment is not in the format of this version"
						: strerror(-rc));
			myrio_published_free(&prev);
			return 1;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double age = ts.tv_sec + ts.tv_nsec / 1e9 - mono_s(cur.updated_ns);
		if (o->format == FORMAT_JSON) {
			stats_print_json(stdout, &cur, age);
		} else if (o->format == FORMAT_PROMETHEUS) {
			if (i)
				putchar('\n');
			stats_print_prometheus(stdout, &cur);
		} else {
			double dt =
			    have_prev ? mono_s(cur.updated_ns) - mono_s(prev.updated_ns) : 0;
			print_text(&cur, have_prev ? &prev : NULL, dt, age, o->all, i == 0);
		}
		fflush(stdout);
		myrio_published_free(&prev);
		prev = cur;
		have_prev = true;
	}
	myrio_published_free(&prev);
	return 0;
}
