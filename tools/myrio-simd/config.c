/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-simd configuration parsing. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>

#include "util/log.h"

void simd_config_init(struct simd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", simd_socket_path(NULL));
	c->socket_mode = 0660;
	c->idle_s = SIMD_IDLE_DEFAULT_S;
	const struct group *g = getgrnam(SIMD_GROUP_DEFAULT);
	if (g) {
		c->group = (uint32_t)g->gr_gid;
		c->has_group = true;
	}
}

/* A group by name or number. */
static int parse_group(const char *v, uint32_t *gid)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*v && !*end && n < UINT32_MAX) {
		*gid = (uint32_t)n;
		return 0;
	}
	const struct group *g = getgrnam(v);
	if (!g)
		return -EINVAL;
	*gid = (uint32_t)g->gr_gid;
	return 0;
}

/* allow=uid:N+gid:N+...: numbers, or a group's name after gid:. */
static int parse_allow(const char *v, struct simd_nic_conf *n)
{
	char buf[256];
	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	char *save;
	for (char *e = strtok_r(buf, "+", &save); e; e = strtok_r(NULL, "+", &save)) {
		char *end;
		if (strncmp(e, "uid:", 4) == 0 && n->n_allow_uid < SIMD_ALLOW_MAX) {
			unsigned long u = strtoul(e + 4, &end, 10);
			if (!e[4] || *end || u >= UINT32_MAX)
				return -EINVAL;
			n->allow_uid[n->n_allow_uid++] = (uint32_t)u;
		} else if (strncmp(e, "gid:", 4) == 0 && n->n_allow_gid < SIMD_ALLOW_MAX) {
			if (parse_group(e + 4, &n->allow_gid[n->n_allow_gid]) < 0)
				return -EINVAL;
			n->n_allow_gid++;
		} else {
			return -EINVAL;
		}
	}
	return n->n_allow_uid + n->n_allow_gid ? 0 : -EINVAL;
}

int simd_config_find(const struct simd_config *c, const char *name)
{
	for (unsigned i = 0; i < c->nnics; i++)
		if (strcmp(c->nics[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return (mac[0] & 1) ? -EINVAL : 0; /* a NIC's own address is never multicast */
}

static int parse_prob(const char *s, double *p)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.0 && v <= 1.0))
		return -EINVAL;
	*p = v;
	return 0;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= SIMD_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

/* A NIC item in the model's own syntax ("link=10g"), parsed by the model into mc. */
static int model_item(const char *item, struct myrio_sim_conf *mc)
{
	myrio_sim_conf_init(mc);
	return myrio_sim_conf_parse(mc, item);
}

/* One "key=value" item of a --nic spec. */
static int nic_item(struct simd_nic_conf *n, const char *item)
{
	const char *eq = strchr(item, '=');
	if (!eq)
		return -EINVAL;
	size_t klen = (size_t)(eq - item);
	const char *v = eq + 1;
	double *prob = NULL;
#define KEY(k) (klen == strlen(k) && strncmp(item, k, klen) == 0)
	if (KEY("mac")) {
		n->has_mac = true;
		return parse_mac(v, n->mac);
	}
	if (KEY("cable")) {
		if (!*v || strlen(v) >= sizeof(n->cable))
			return -EINVAL;
		snprintf(n->cable, sizeof(n->cable), "%s", v);
		return 0;
	}
	if (KEY("allow"))
		return parse_allow(v, n);
	struct myrio_sim_conf mc;
	if (KEY("link")) { /* the model's own syntax for a rate, parsed by the model */
		if (model_item(item, &mc) < 0)
			return -EINVAL;
		n->link_bps = mc.link_bps;
		n->has_link = true;
		return 0;
	}
	if (KEY("timing")) { /* a profile name, checked by the model */
		if (model_item(item, &mc) < 0)
			return -EINVAL;
		snprintf(n->timing, sizeof(n->timing), "%s", mc.timing);
		return 0;
	}
	if (KEY("flap")) {
		unsigned period, down;
		char tail;
		if (sscanf(v, "%u/%u%c", &period, &down, &tail) != 2 || down >= period)
			return -EINVAL;
		n->faults.flap_period_ms = period;
		n->faults.flap_down_ms = down;
		n->has_faults = true;
		return 0;
	}
	if (KEY("loss"))
		prob = &n->faults.loss;
	else if (KEY("reorder"))
		prob = &n->faults.reorder;
	else if (KEY("dup") || KEY("duplicate"))
		prob = &n->faults.duplicate;
	else if (KEY("corrupt"))
		prob = &n->faults.corrupt;
#undef KEY
	if (!prob)
		return -EINVAL;
	n->has_faults = true;
	return parse_prob(v, prob);
}

/* NAME[,mac=XX:XX:XX:XX:XX:XX][,cable=NIC|tap:IF|packet:IF][,link=RATE][,timing=PROFILE]
 * [,loss=P][,reorder=P][,dup=P][,corrupt=P][,flap=PERIOD_MS/DOWN_MS] */
static int add_nic(struct simd_config *c, const char *spec)
{
	char buf[512];
	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save, *name = strtok_r(buf, ",", &save);
	if (!name || !valid_name(name)) {
		log_err("--nic %s: a NIC name is 1 to %d letters, digits, '-', '_' or '.'", spec,
			SIMD_NAME_MAX - 1);
		return -EINVAL;
	}
	if (simd_config_find(c, name) >= 0) {
		log_err("--nic %s: NIC %s named twice", spec, name);
		return -EINVAL;
	}
	if (c->nnics == SIMD_MAX_NICS) {
		log_err("--nic %s: at most %d NICs", spec, SIMD_MAX_NICS);
		return -EINVAL;
	}
	struct simd_nic_conf *n = &c->nics[c->nnics];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	for (char *item; (item = strtok_r(NULL, ",", &save));) {
		if (nic_item(n, item) < 0) {
			log_err("--nic %s: bad item '%s' (expected mac=XX:XX:XX:XX:XX:XX, "
				"cable=NIC|tap:IFNAME|packet:IFNAME, link=RATE, timing=none|myri10ge, "
				"loss=P, reorder=P, "
				"dup=P, corrupt=P with 0 <= P <= 1, flap=PERIOD_MS/DOWN_MS, "
				"allow=uid:N+gid:N...)",
				spec, item);
			return -EINVAL;
		}
	}
	c->nnics++;
	return 0;
}

static int append_spec(struct simd_config *c, const char *item)
{
	size_t used = strlen(c->model_spec);
	int n = snprintf(c->model_spec + used, sizeof(c->model_spec) - used, "%s%s",
			 used ? "," : "", item);
	if (n < 0 || (size_t)n >= sizeof(c->model_spec) - used) {
		log_err("model settings too long");
		return -EINVAL;
	}
	return 0;
}

int simd_config_set(struct simd_config *c, const char *key, const char *value)
{
	char item[300];
	if (strcmp(key, "spin") == 0)
		return append_spec(c, "spin");
	if (!value || !*value) {
		log_err("%s: needs a value", key);
		return -EINVAL;
	}
	if (strcmp(key, "socket") == 0) {
		if (strlen(value) >= sizeof(c->socket_path)) {
			log_err("socket path too long (at most %zu bytes): %s",
				sizeof(c->socket_path) - 1, value);
			return -EINVAL;
		}
		snprintf(c->socket_path, sizeof(c->socket_path), "%s", value);
		return 0;
	}
	if (strcmp(key, "mode") == 0) {
		char *end;
		unsigned long m = strtoul(value, &end, 8);
		if (*end || m == 0 || m > 0777) {
			log_err("mode %s: expected octal permission bits such as 0660", value);
			return -EINVAL;
		}
		c->socket_mode = (unsigned)m;
		return 0;
	}
	if (strcmp(key, "group") == 0) {
		if (parse_group(value, &c->group) < 0) {
			log_err("group %s: no such group", value);
			return -EINVAL;
		}
		c->has_group = true;
		return 0;
	}
	if (strcmp(key, "idle") == 0) {
		char *end;
		unsigned long sec = strtoul(value, &end, 10);
		if (*end || sec > 86400) {
			log_err("idle %s: expected seconds (0: never)", value);
			return -EINVAL;
		}
		c->idle_s = (unsigned)sec;
		return 0;
	}
	if (strcmp(key, "model") == 0)
		return append_spec(c, value);
	if (strcmp(key, "link") == 0 || strcmp(key, "seed") == 0) {
		if (strlen(value) > 256)
			return -EINVAL;
		snprintf(item, sizeof(item), "%s=%s", key, value);
		return append_spec(c, item);
	}
	if (strcmp(key, "nic") == 0)
		return add_nic(c, value);
	log_err("unknown setting '%s' (socket, mode, group, idle, model, link, seed, spin, nic)",
		key);
	return -EINVAL;
}

int simd_config_load(struct simd_config *c, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		int rc = -errno;
		log_err("cannot read config file %s: %s", path, strerror(-rc));
		return rc;
	}
	char line[1024];
	unsigned lineno = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *save, *key = strtok_r(line, " \t\r\n", &save);
		if (!key)
			continue;
		char *value = strtok_r(NULL, " \t\r\n", &save);
		char *extra = strtok_r(NULL, " \t\r\n", &save);
		if (extra) {
			log_err("%s:%u: one value per line (write NIC settings as "
				"nic NAME,cable=...,loss=...)",
				path, lineno);
			rc = -EINVAL;
			break;
		}
		rc = simd_config_set(c, key, value);
		if (rc < 0)
			log_err("%s:%u: invalid line", path, lineno);
	}
	fclose(f);
	return rc;
}

static int check_cables(struct simd_config *c)
{
	for (unsigned i = 0; i < c->nnics; i++) {
		struct simd_nic_conf *n = &c->nics[i];
		if (!n->cable[0] || strncmp(n->cable, "tap:", 4) == 0 ||
		    strncmp(n->cable, "packet:", 7) == 0) {
			const char *ifname = strchr(n->cable, ':');
			if (ifname && (!ifname[1] || strlen(ifname + 1) >= 16)) {
				log_err("NIC %s: cable=%s needs an interface name of 1 to 15 "
					"characters",
					n->name, n->cable);
				return -EINVAL;
			}
			continue;
		}
		int peer = simd_config_find(c, n->cable);
		if (peer < 0 || (unsigned)peer == i) {
			log_err("NIC %s: cable=%s names no other NIC (use another NIC's name, "
				"tap:IFNAME or packet:IFNAME)",
				n->name, n->cable);
			return -EINVAL;
		}
		struct simd_nic_conf *p = &c->nics[peer];
		if (!p->cable[0]) {
			snprintf(p->cable, sizeof(p->cable), "%s",
				 n->name); /* cables are symmetric */
		} else if (strcmp(p->cable, n->name) != 0) {
			log_err("NIC %s: cabled to %s, but %s's cable goes to %s", n->name,
				n->cable, p->name, p->cable);
			return -EINVAL;
		}
	}
	return 0;
}

int simd_config_finish(struct simd_config *c)
{
	if (c->nnics == 0) {
		add_nic(c, "nic0,cable=nic1");
		add_nic(c, "nic1");
	}
	for (unsigned i = 0; i < c->nnics; i++) {
		struct simd_nic_conf *n = &c->nics[i];
		if (!n->has_mac) {
			/* Locally administered, Myricom-like: 02:60:dd:00:00:<index+1>. */
			const uint8_t mac[6] = {0x02, 0x60, 0xdd, 0x00, 0x00, (uint8_t)(i + 1)};
			memcpy(n->mac, mac, 6);
		}
		for (unsigned j = 0; j < i; j++)
			if (memcmp(c->nics[j].mac, n->mac, 6) == 0) {
				log_err("NICs %s and %s have the same MAC address", c->nics[j].name,
					n->name);
				return -EINVAL;
			}
	}
	struct myrio_sim_conf mc;
	myrio_sim_conf_init(&mc);
	if (c->model_spec[0] && myrio_sim_conf_parse(&mc, c->model_spec) < 0) {
		log_err("bad model settings '%s'", c->model_spec);
		return -EINVAL;
	}
	if (mc.stepped) {
		log_err("the daemon runs the model on its own thread: 'stepped' is for tests only");
		return -EINVAL;
	}
	return check_cables(c);
}
