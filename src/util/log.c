/* SPDX-License-Identifier: BSD-3-Clause */
/* The message sink behind every error libmyrio returns. */
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>

static void stderr_sink(enum myrio_log_level level, const char *msg, void *arg)
{
	(void)arg;
	static const char *const names[] = {"error", "warning", "info", "debug"};
	fprintf(stderr, "myrio: %s: %s\n", names[level], msg);
}

/* The one piece of process-wide state: set once by the application, read by everyone. */
static myrio_log_fn sink = stderr_sink;
static void *sink_arg;
static int max_level = -1; /* -1: not yet read from $MYRIO_LOG */

void myrio_log_set(myrio_log_fn fn, void *arg, enum myrio_log_level level)
{
	sink = fn ? fn : stderr_sink;
	sink_arg = arg;
	max_level = (int)level;
}

void myrio_log(enum myrio_log_level level, const char *fmt, ...)
{
	if (max_level < 0) {
		const char *env = getenv("MYRIO_LOG");
		max_level = env ? atoi(env) : MYRIO_LOG_WARN;
	}
	if ((int)level > max_level)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sink(level, msg, sink_arg);
}
