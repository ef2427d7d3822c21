/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats' machine-readable outputs: JSON and the Prometheus text exposition format. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

/* A JSON string body: quote, backslash and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* {"pid":N,"program":"...","age_s":X,"groups":{"port sim:sim0":{"rx_packets":N,...},...}} */
void stats_print_json(FILE *f, const struct myrio_published *p, double age_s)
{
	fprintf(f, "{\"pid\":%d,\"program\":", p->pid);
	json_str(f, p->program);
	fprintf(f, ",\"age_s\":%.3f,\"groups\":{", age_s);
	const char *group = NULL;
	for (unsigned i = 0; i < p->n; i++) {
		const struct myrio_published_counter *c = &p->counters[i];
		if (!group || strcmp(c->group, group) != 0) {
			if (group)
				fputs("},", f);
			group = c->group;
			json_str(f, group);
			fputs(":{", f);
		} else {
			fputc(',', f);
		}
		json_str(f, c->name);
		fprintf(f, ":%llu", (unsigned long long)c->value);
	}
	fputs(group ? "}}}\n" : "}}\n", f);
}

/* A label value: backslash, quote and newline escaped (exposition format). */
static void label(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '\\' || s[i] == '"')
			fprintf(f, "\\%c", s[i]);
		else if (s[i] == '\n')
			fputs("\\n", f);
		else
			fputc(s[i], f);
	}
}

/* One sample per counter: myrio_NAME{pid,program,kind,instance} VALUE, where a group
 * "port simd:nic1" is kind "port", instance "simd:nic1". Counter names are C identifiers,
 * valid metric names as they are. */
void stats_print_prometheus(FILE *f, const struct myrio_published *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		const struct myrio_published_counter *c = &p->counters[i];
		const char *sp = strchr(c->group, ' ');
		size_t kind_len = sp ? (size_t)(sp - c->group) : strlen(c->group);
		fputs("myrio_", f);
		for (const char *k = c->name; *k; k++) /* a metric name is [a-zA-Z0-9_:] */
			fputc(isalnum((unsigned char)*k) ? *k : '_', f);
		fprintf(f, "{pid=\"%d\",program=\"", p->pid);
		label(f, p->program, sizeof(p->program));
		fputs("\",kind=\"", f);
		label(f, c->group, kind_len);
		fputs("\",instance=\"", f);
		label(f, sp ? sp + 1 : "", sizeof(c->group));
		fprintf(f, "\"} %llu\n", (unsigned long long)c->value);
	}
}
