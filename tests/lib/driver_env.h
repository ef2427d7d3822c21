/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-up for the driver's integration tests: a model world (stepped or threaded), two
 * ports joined by its cable, and frames whose every byte and order are checked (the
 * payload of frame seq is the byte pattern at seq << 16). */
#ifndef MYRIO_TEST_DRIVER_ENV_H
#define MYRIO_TEST_DRIVER_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "myrio/myrio.h"

struct env {
	struct myrio_sim *sim;
	bool stepped;
	bool irq; /* ports opened with conf.irq (set after env_world) */
	struct myrio_port *a, *b;
	struct myrio_pool *pool_a, *pool_b;
	struct myrio_port_info ia, ib;
	uint32_t seq_tx[2], seq_rx[2]; /* per direction: 0 = a->b, 1 = b->a */
};

/* A driver attribute of port p ("fw_version", "serial"...), "" if it has none; the text
 * stays valid for the next three calls. */
const char *env_attr(struct myrio_port *p, const char *name);
/* A driver counter of port p by name; UINT64_MAX if it has none of that name. */
uint64_t env_xstat(struct myrio_port *p, const char *name);
/* Lets the model work: a few firmware-loop iterations, or a yield to its thread. */
void env_pump(struct env *e);
int env_world(struct env *e, const char *spec);
int env_open(struct env *e, uint32_t mtu);
/* Waits (pumping the model) until the transmit pools are whole again. */
bool env_drain_tx(struct env *e);
void env_close_ports(struct env *e);
void env_destroy(struct env *e);
/* Waits for the link state to become known and returns it. */
int env_link(struct env *e, struct myrio_port *p, int want);
void env_fill(uint8_t *f, uint32_t len, uint32_t seq, const uint8_t *dst, const uint8_t *src);
/* Checks a received frame against what frame number seq of that size must contain. */
bool env_check(const struct myrio_pkt *p, uint32_t len, uint32_t seq, const uint8_t *dst,
	       const uint8_t *src);
/* Sends count frames from one port to the other, sizes from len_of(i), receives and checks
 * them all in order. Returns the number received correctly in order (count on success). */
uint32_t env_transfer(struct env *e, int dir, uint32_t count, uint32_t (*len_of)(uint32_t i));

#endif
