/* myrio-simd's configuration: the NICs it hosts, where their cables go, the model's
 * settings and the socket, from the command line and/or a config file (same words). */
#ifndef MYRIO_SIMD_CONFIG_H
#define MYRIO_SIMD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "bus/simd_proto.h"
#include "myrio/sim.h"

#define SIMD_MAX_NICS 32
#define SIMD_MAX_CLIENTS 64 /* connections */
#define SIMD_CABLE_MAX 64

struct simd_nic_conf {
	char name[SIMD_NAME_MAX];
	uint8_t mac[6];
	bool has_mac;
	char cable[SIMD_CABLE_MAX]; /* "" (unplugged), "NIC", "tap:IFNAME", "packet:IFNAME" */
	struct myrio_sim_faults faults;
	bool has_faults;
};

struct simd_config {
	char socket_path[108];
	unsigned socket_mode; /* permission bits for the socket file; 0 = leave to umask */
	char model_spec[512]; /* for myrio_sim_conf_parse: link=, seed=, spin, rx_ring=... */
	struct simd_nic_conf nics[SIMD_MAX_NICS];
	unsigned nnics;
};

void simd_config_init(struct simd_config *c);
/* One setting: key "socket", "mode", "model", "link", "seed", "spin" or "nic" with its value.
 * Returns 0 or -EINVAL after logging what is wrong. */
int simd_config_set(struct simd_config *c, const char *key, const char *value);
/* A file of "key value" lines; '#' starts a comment. */
int simd_config_load(struct simd_config *c, const char *path);
/* After all settings: defaults (nic0 <-> nic1 when no NIC is named), MACs, cable
 * symmetry (a NIC cabled to another must not be cabled elsewhere). */
int simd_config_finish(struct simd_config *c);
/* Index of the NIC named name, or -1. */
int simd_config_find(const struct simd_config *c, const char *name);

#endif
