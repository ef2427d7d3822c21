/* SPDX-License-Identifier: BSD-3-Clause */
/* The layout of a shared-memory cable (endpoint_shm.c), for the endpoint and its tests.
 *
 * A file of shm_open holds a header and two rings of frame slots, one per direction:
 * ring d carries the frames end d sends. Each ring has one producer (its end) and one
 * consumer (the other end); the indices run free (32 bits, wrapping) and the slot is the
 * index modulo SHM_SLOTS. The producer publishes head with release after filling a slot,
 * the consumer publishes tail with release after copying one out. Everything in the file
 * may be written by the other process at any time: neither end trusts what it reads. */
#ifndef MYRIO_SIM_ENDPOINT_SHM_H
#define MYRIO_SIM_ENDPOINT_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "sim/endpoint.h"

#define SHM_MAGIC 0x4d595348u /* "MYSH" */
#define SHM_VERSION 1u
#define SHM_SLOTS 256u /* per direction, a power of 2 */

struct shm_slot {
	uint32_t len;
	uint8_t data[SIM_EP_MAX_FRAME];
};

struct shm_ring {
	_Alignas(64) _Atomic uint32_t head; /* written by the producer */
	_Alignas(64) _Atomic uint32_t tail; /* written by the consumer */
	_Alignas(64) struct shm_slot slot[SHM_SLOTS];
};

struct shm_header {
	_Atomic uint32_t magic; /* stored last by the end that creates the file */
	uint32_t version, slots, max_frame;
	uint64_t size; /* of the whole file */
	_Atomic uint32_t claimed[2]; /* an end is taken by one process */
};

struct shm_cable {
	_Alignas(64) struct shm_header hdr;
	struct shm_ring ring[2];
};

#endif
