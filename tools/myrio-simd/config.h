/* SPDX-License-Identifier: BSD-3-Clause */
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
#define SIMD_MAX_CLIENTS_PER_UID 8 /* connections one user may hold */
#define SIMD_ALLOW_MAX 8	   /* uids and gids in one NIC's allow list */
#define SIMD_IDLE_DEFAULT_S 10	   /* an unattached connection is closed after */
#define SIMD_GROUP_DEFAULT "myrio" /* the socket's group, when it exists */

struct simd_nic_conf {
	char name[SIMD_NAME_MAX];
	uint8_t mac[6];
	bool has_mac;
	char cable[SIMD_CABLE_MAX]; /* "" (unplugged), "NIC", "tap:IFNAME", "packet:IFNAME" */
	struct myrio_sim_faults faults;
	bool has_faults;
	uint64_t link_bps; /* "link=RATE": its cable's rate, instead of --link; when has_link */
	bool has_link;
	char timing[16]; /* "timing=PROFILE": its own timing (src/sim/timing.h); "" = --model's */
	/* Who may attach (besides root): "allow=uid:N+gid:N+..." in the NIC's spec. Without
	 * one, every admitted user may, except on a tap:/packet: cable (raw frames of a
	 * host interface): root only there. */
	uint32_t allow_uid[SIMD_ALLOW_MAX], allow_gid[SIMD_ALLOW_MAX];
	unsigned n_allow_uid, n_allow_gid;
};

struct simd_config {
	char socket_path[108];
	unsigned socket_mode; /* permission bits for the socket file (default 0660) */
	uint32_t group;	      /* the socket's group, admitted; when has_group */
	bool has_group;
	unsigned idle_s;      /* an unattached connection idle this long is closed; 0: never */
	char model_spec[512]; /* for myrio_sim_conf_parse: link=, seed=, spin, rx_ring=... */
	struct simd_nic_conf nics[SIMD_MAX_NICS];
	unsigned nnics;
};

void simd_config_init(struct simd_config *c);
/* One setting: key "socket", "mode", "group", "idle", "model", "link", "seed", "spin" or "nic"
 * with its value.
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
