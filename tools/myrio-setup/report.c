/* SPDX-License-Identifier: BSD-3-Clause */
/* The doctor's report lines: what is in place, and what to run for what is not. */
#include <stdarg.h>
#include <stdio.h>

#include "setup.h"

void setup_ok(struct setup_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("  ok   ", c->out);
	vfprintf(c->out, fmt, ap);
	fputc('\n', c->out);
	va_end(ap);
}

void setup_fix(struct setup_ctx *c, const char *fix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("  FIX  ", c->out);
	vfprintf(c->out, fmt, ap);
	fputc('\n', c->out);
	if (fix)
		fprintf(c->out, "       -> %s\n", fix);
	va_end(ap);
	c->problems++;
}
