/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-simd's state: the model world it hosts, the NICs and who is attached to them. The
 * model runs on its own thread (sim_world_start); the daemon's thread only serves the
 * socket, so no request ever sits on the data path. */
#ifndef MYRIO_SIMD_DAEMON_H
#define MYRIO_SIMD_DAEMON_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "dma_guard.h"

struct sim_nic;
struct sim_endpoint;
struct myrio_sim;
struct simd_client;

/* Log lines a source may add: a burst, then one per LOG_WINDOW, the rest counted. */
struct simd_log_budget {
	uint64_t window_start; /* ns */
	unsigned lines;
	uint64_t suppressed;
};

struct simd_nic {
	struct sim_nic *nic;
	const struct simd_nic_conf *conf;
	struct sim_endpoint *ep;     /* when cabled to tap:/packet:, owned by the world */
	struct simd_client *owner;   /* attached application, or NULL */
	uint64_t attaches, refusals; /* since the daemon started */
};

/* A DMA region an application registered: its memory mapped here too. */
struct simd_region {
	uint64_t iova, len;
	void *va;
	int guard; /* its slot in the SIGBUS guard */
};

struct simd_client {
	int fd;
	pid_t pid; /* from SO_PEERCRED, not from anything the client says */
	uid_t uid;
	gid_t gids[33]; /* primary and supplementary groups, from the kernel too */
	unsigned ngids;
	uint64_t last_ns; /* its last request (idle timeout while unattached) */
	struct simd_nic *nic; /* attached NIC or NULL */
	struct simd_region regions[SIMD_MAX_REGIONS];
	unsigned nregions;
	uint64_t mapped_bytes;
	uint64_t requests, errors;
	struct simd_log_budget log; /* its refusals */
	/* The first region whose file shrank under the model: the client is to be dropped. */
	bool shrank;
	uint64_t shrank_iova, shrank_len, shrank_off;
};

struct simd_daemon {
	struct simd_config conf;
	struct myrio_sim *sim;
	struct simd_nic nics[SIMD_MAX_NICS];
	unsigned nnics;
	int listen_fd;
	int signal_fd;
	struct simd_client *clients[SIMD_MAX_CLIENTS];
	uint64_t bad_requests; /* refused requests, all clients */
	uint64_t refused_connections;
	struct simd_log_budget conn_log;
	uint64_t shrink_drops; /* clients dropped for shrinking their DMA memory */
	struct simd_guard guard;
};

/* world.c: the model world the configuration describes, started. */
int simd_world_build(struct simd_daemon *d);
void simd_world_destroy(struct simd_daemon *d);
struct simd_nic *simd_daemon_nic(struct simd_daemon *d, const char *name);

/* server.c */
int simd_serve(struct simd_daemon *d); /* until SIGINT/SIGTERM */

/* status.c */
int simd_status_report(struct simd_daemon *d, char *buf, size_t cap);
int simd_status_client(const char *socket_path);

#endif
