/* SPDX-License-Identifier: BSD-3-Clause */
/* Model configuration: defaults and the spec string of include/myrio/sim.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "myrio/sim.h"
#include "sim/timing.h"
#include "util/log.h"

void myrio_sim_conf_init(struct myrio_sim_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->nics = 2;
	conf->link_bps = 10000000000ull;
	conf->rx_ring_entries = 512;
	conf->tx_ring_entries = 1024;
	conf->seed = 1;
	snprintf(conf->product_code, sizeof(conf->product_code), "10G-PCIE-8B-S");
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	if (errno || end == v || *end)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_prob(const char *v, double *out)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || *end || !(x >= 0 && x <= 1))
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_link(const char *v, uint64_t *bps)
{
	if (!strcasecmp(v, "unlimited") || !strcmp(v, "0")) {
		*bps = 0;
		return 0;
	}
	char *end;
	double x = strtod(v, &end);
	if (end == v || x <= 0)
		return -EINVAL;
	double mul = 1;
	if (!strcasecmp(end, "g"))
		mul = 1e9;
	else if (!strcasecmp(end, "m"))
		mul = 1e6;
	else if (!strcasecmp(end, "k"))
		mul = 1e3;
	else if (*end)
		return -EINVAL;
	*bps = (uint64_t)(x * mul);
	return *bps ? 0 : -EINVAL;
}

static int parse_one(struct myrio_sim_conf *c, char *tok)
{
	char *eq = strchr(tok, '=');
	const char *v = eq ? eq + 1 : NULL;
	if (eq)
		*eq = '\0';
	uint64_t u;
	if (!strcmp(tok, "stepped") && !v) {
		c->stepped = true;
	} else if (!strcmp(tok, "spin") && !v) {
		c->spin = true;
	} else if (!strcmp(tok, "high_rings") && !v) {
		c->high_rings = true;
	} else if (!strcmp(tok, "unaligned_rc") && !v) {
		c->unaligned_rc = true;
	} else if (!v) {
		return -EINVAL;
	} else if (!strcmp(tok, "nics")) {
		if (parse_u64(v, &u) || u == 0 || u > 64)
			return -EINVAL;
		c->nics = (unsigned)u;
	} else if (!strcmp(tok, "link")) {
		return parse_link(v, &c->link_bps);
	} else if (!strcmp(tok, "seed")) {
		return parse_u64(v, &c->seed);
	} else if (!strcmp(tok, "loss")) {
		return parse_prob(v, &c->faults.loss);
	} else if (!strcmp(tok, "reorder")) {
		return parse_prob(v, &c->faults.reorder);
	} else if (!strcmp(tok, "dup")) {
		return parse_prob(v, &c->faults.duplicate);
	} else if (!strcmp(tok, "corrupt")) {
		return parse_prob(v, &c->faults.corrupt);
	} else if (!strcmp(tok, "flap")) {
		unsigned p, d;
		char tail;
		if (sscanf(v, "%u/%u%c", &p, &d, &tail) != 2 || p == 0 || d >= p)
			return -EINVAL;
		c->faults.flap_period_ms = p;
		c->faults.flap_down_ms = d;
	} else if (!strcmp(tok, "rx_ring") || !strcmp(tok, "tx_ring")) {
		if (parse_u64(v, &u) || u < 8 || u > 4096 || (u & (u - 1)))
			return -EINVAL;
		if (tok[0] == 'r')
			c->rx_ring_entries = (uint32_t)u;
		else
			c->tx_ring_entries = (uint32_t)u;
	} else if (!strcmp(tok, "idle_ms")) {
		if (parse_u64(v, &u) || u == 0 || u > 3600000)
			return -EINVAL;
		c->idle_ms = (uint32_t)u;
	} else if (!strcmp(tok, "idle_spin_us")) {
		if (parse_u64(v, &u) || u > 1000000)
			return -EINVAL;
		c->idle_spin_us = (uint32_t)u;
	} else if (!strcmp(tok, "boot")) {
		if (parse_u64(v, &u) || u > 60000)
			return -EINVAL;
		c->boot_ms = (uint32_t)u;
	} else if (!strcmp(tok, "eeprom_fw")) {
		/* "1.4.N", "rss" (the RSS image) or "rss@1.4.N" */
		unsigned tiny;
		char tail;
		bool rss = !strncmp(v, "rss", 3);
		const char *num = rss ? v + 3 + (v[3] == '@') : v;
		if (rss && !*num) {
			snprintf(c->eeprom_fw, sizeof(c->eeprom_fw), "rss");
			return 0;
		}
		if ((rss && v[3] != '@') || sscanf(num, "1.4.%u%c", &tiny, &tail) != 1 ||
		    tiny > 999)
			return -EINVAL;
		snprintf(c->eeprom_fw, sizeof(c->eeprom_fw), "%s1.4.%u", rss ? "rss@" : "", tiny);
	} else if (!strcmp(tok, "timing")) {
		if (!sim_timing_find(v))
			return -EINVAL;
		snprintf(c->timing, sizeof(c->timing), "%s", v);
	} else if (!strcmp(tok, "pc")) {
		if (!*v || strlen(v) >= sizeof(c->product_code))
			return -EINVAL;
		snprintf(c->product_code, sizeof(c->product_code), "%s", v);
	} else {
		return -EINVAL;
	}
	return 0;
}

int myrio_sim_conf_parse(struct myrio_sim_conf *conf, const char *spec)
{
	if (!spec)
		return 0;
	char buf[512];
	if (strlen(spec) >= sizeof(buf)) {
		log_err("model spec string too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char orig[512];
		snprintf(orig, sizeof(orig), "%s", tok);
		if (parse_one(conf, tok) < 0) {
			log_err(
			    "model spec: cannot use '%s'; expected nics=N, link=10g|1g|unlimited|"
			    "BPS, stepped, spin, seed=N, loss=P, reorder=P, dup=P, corrupt=P, "
			    "flap=PERIOD_MS/DOWN_MS, rx_ring=N, tx_ring=N (powers of 2, 8..4096), "
			    "pc=CODE, boot=MS, high_rings, eeprom_fw=[rss@]1.4.N|rss, "
			    "unaligned_rc, idle_ms=MS, idle_spin_us=US, timing=none|myri10ge",
			    orig);
			return -EINVAL;
		}
	}
	return 0;
}
