/* SPDX-License-Identifier: BSD-3-Clause */
/* One end of a model cable that is not a model NIC: a TAP device, an AF_PACKET socket on
 * an existing interface, another process through shared memory. The cable (link-rate
 * model, fault injection) sits between the NIC and the endpoint exactly as between two
 * NICs. Endpoints never block. */
#ifndef MYRIO_SIM_ENDPOINT_H
#define MYRIO_SIM_ENDPOINT_H

#include <stdint.h>

struct sim_endpoint;

/* Frames a Myri-10G can carry (no FCS): a header at least, at most a 9400-byte MTU with a
 * VLAN tag; an endpoint drops and counts anything else. */
#define SIM_EP_MIN_FRAME 14
#define SIM_EP_MAX_FRAME (9400 + 18)

typedef void (*sim_emit_fn)(void *ctx, const uint8_t *frame, uint32_t len);

struct sim_endpoint_ops {
	/* A frame (no FCS) leaves the cable at this end. May drop, and counts it. */
	void (*deliver)(struct sim_endpoint *ep, const uint8_t *frame, uint32_t len);
	/* Frames entering the cable from this end: calls emit for each, at most max;
	 * returns how many. */
	unsigned (*poll)(struct sim_endpoint *ep, sim_emit_fn emit, void *ctx, unsigned max);
	/* An fd that is readable when poll has work, so an idle model can sleep; or -1. */
	int (*fd)(struct sim_endpoint *ep);
	void (*destroy)(struct sim_endpoint *ep);
};

struct sim_endpoint {
	const struct sim_endpoint_ops *ops;
	char name[32];
	uint64_t rx_frames, tx_frames, drops;
	/* The index a NIC cabled to this end takes for its default address: 1 at the second
	 * end of a cable between two processes' models (shm:NAME/1), so the two differ. */
	unsigned nic_index;
};

int sim_endpoint_tap_open(const char *ifname, struct sim_endpoint **out);
int sim_endpoint_packet_open(const char *ifname, struct sim_endpoint **out);
/* "NAME/0" or "NAME/1": one end of a cable to another process through shared memory
 * (endpoint_shm.c); its fd is -1, so a model using it must spin or be stepped. */
int sim_endpoint_shm_open(const char *spec, struct sim_endpoint **out);

#endif
