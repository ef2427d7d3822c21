/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the stack lives: MYRIO_DEVICE, MYRIO_IP (A.B.C.D/LEN), MYRIO_GW, MYRIO_MTU,
 * MYRIO_SPIN and the table sizes (MYRIO_MAX_TCP, _LISTEN, _UDP) from the environment
 * (myrio-run sets the first ones from its options), else the same keys in the file
 * MYRIO_CONFIG names (default /etc/myrio/preload.conf), one "KEY=VALUE" a line, '#'
 * starting a comment. The environment wins. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

static int parse_ip(const char *s, uint32_t *ip, uint32_t *mask)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%s", s);
	char *slash = strchr(buf, '/');
	unsigned len = 24;
	if (slash) {
		*slash = '\0';
		char *end;
		unsigned long l = strtoul(slash + 1, &end, 10);
		if (*end || l < 1 || l > 32)
			return -1;
		len = (unsigned)l;
	}
	struct in_addr a;
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	if (mask)
		*mask = len == 32 ? 0xffffffffu : ~(0xffffffffu >> len);
	return 0;
}

/* A table size: 1 to 1,000,000 (a bound on what a typo can make the stack allocate). */
static int parse_max(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v < 1 || v > 1000000)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int apply(struct preload_conf *conf, const char *key, const char *val)
{
	if (!strcmp(key, "MYRIO_DEVICE"))
		snprintf(conf->device, sizeof conf->device, "%s", val);
	else if (!strcmp(key, "MYRIO_IP"))
		return parse_ip(val, &conf->ip, &conf->netmask);
	else if (!strcmp(key, "MYRIO_GW"))
		return parse_ip(val, &conf->gateway, NULL);
	else if (!strcmp(key, "MYRIO_MTU"))
		conf->mtu = (uint32_t)strtoul(val, NULL, 10);
	else if (!strcmp(key, "MYRIO_SPIN"))
		conf->spin = strcmp(val, "0") != 0;
	else if (!strcmp(key, "MYRIO_SPIN_US"))
		conf->spin_us = (uint32_t)strtoul(val, NULL, 10);
	else if (!strcmp(key, "MYRIO_EXIT_LINGER_MS"))
		conf->exit_linger_ms = (uint32_t)strtoul(val, NULL, 10);
	else if (!strcmp(key, "MYRIO_MAX_TCP"))
		return parse_max(val, &conf->max_tcp);
	else if (!strcmp(key, "MYRIO_MAX_LISTEN"))
		return parse_max(val, &conf->max_listen);
	else if (!strcmp(key, "MYRIO_MAX_UDP"))
		return parse_max(val, &conf->max_udp);
	return 0;
}

static const char *const keys[] = {"MYRIO_DEVICE",
				   "MYRIO_IP",
				   "MYRIO_GW",
				   "MYRIO_MTU",
				   "MYRIO_SPIN",
				   "MYRIO_SPIN_US",
				   "MYRIO_EXIT_LINGER_MS",
				   "MYRIO_MAX_TCP",
				   "MYRIO_MAX_LISTEN",
				   "MYRIO_MAX_UDP"};

static void load_file(struct preload_conf *conf)
{
	const char *path = getenv("MYRIO_CONFIG");
	FILE *f = fopen(path ? path : "/etc/myrio/preload.conf", "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "#\r\n")] = '\0';
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		char *key = line + strspn(line, " \t"), *val = eq + 1 + strspn(eq + 1, " \t");
		key[strcspn(key, " \t")] = '\0';
		val[strcspn(val, " \t")] = '\0';
		if (apply(conf, key, val) < 0)
			preload_log("bad %s in the config file: %s", key, val);
	}
	fclose(f);
}

int preload_conf_load(struct preload_conf *conf)
{
	memset(conf, 0, sizeof *conf);
	conf->spin_us =
	    sysconf(_SC_NPROCESSORS_ONLN) >= PRELOAD_SPIN_MIN_CPUS ? PRELOAD_SPIN_US : 0;
	conf->exit_linger_ms = PRELOAD_EXIT_LINGER_MS;
	conf->max_tcp = PRELOAD_MAX_TCP;
	conf->max_listen = PRELOAD_MAX_LISTEN;
	conf->max_udp = PRELOAD_MAX_UDP;
	load_file(conf);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = getenv(keys[i]);
		if (v && apply(conf, keys[i], v) < 0) {
			preload_log("bad %s: %s", keys[i], v);
			return -1;
		}
	}
	if (!conf->device[0] || !conf->ip) {
		preload_log_once("no device or address (MYRIO_DEVICE, MYRIO_IP or myrio-run "
				 "--device/--ip): sockets go to the kernel");
		return -1;
	}
	return 0;
}
