/* SPDX-License-Identifier: BSD-3-Clause */
/* Driver arguments: "key=value,key=value" (myrio_port_conf.driver_args) into the settings a
 * driver declares. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/port_ops.h"
#include "util/log.h"

static void list_keys(const struct myrio_driver_arg *keys, char *out, size_t len)
{
	size_t at = 0;
	out[0] = '\0';
	for (const struct myrio_driver_arg *k = keys; k->key && at < len; k++)
		at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", k->key);
}

static int set_value(const char *who, const struct myrio_driver_arg *k, const char *v, size_t n)
{
	char text[4096];
	if (n >= sizeof(text)) {
		log_err("%s: driver argument %s: value too long", who, k->key);
		return -EINVAL;
	}
	memcpy(text, v, n);
	text[n] = '\0';
	if (k->str) {
		if (n >= k->str_len) {
			log_err("%s: driver argument %s: value longer than %zu bytes", who, k->key,
				k->str_len - 1);
			return -EINVAL;
		}
		memcpy(k->str, text, n + 1);
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long x = strtoull(text, &end, 0);
	unsigned long long max = k->flag ? 1 : UINT32_MAX;
	if (n == 0 || *end || errno || text[0] == '-' || x > max) {
		log_err("%s: driver argument %s=%s: expected %s", who, k->key, text,
			k->flag ? "0 or 1" : "a number up to 4294967295");
		return -EINVAL;
	}
	if (k->flag)
		*k->flag = x != 0;
	else
		*k->u32 = (uint32_t)x;
	return 0;
}

int myrio_driver_args_parse(const char *who, const char *args, const struct myrio_driver_arg *keys)
{
	for (const char *p = args; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t item = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', item);
		const struct myrio_driver_arg *k = keys;
		while (eq && k->key &&
		       (strlen(k->key) != (size_t)(eq - p) ||
			memcmp(k->key, p, (size_t)(eq - p)) != 0))
			k++;
		if (!eq || !k->key) {
			char known[256];
			list_keys(keys, known, sizeof(known));
			log_err(
			    "%s: driver argument '%.*s' not understood: expected key=value with "
			    "a key among: %s",
			    who, (int)item, p, known[0] ? known : "(none: this driver takes none)");
			return -EINVAL;
		}
		int rc = set_value(who, k, eq + 1, item - (size_t)(eq + 1 - p));
		if (rc < 0)
			return rc;
		p += item + (comma ? 1 : 0);
	}
	return 0;
}
