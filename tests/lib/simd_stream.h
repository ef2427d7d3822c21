/* SPDX-License-Identifier: BSD-3-Clause */
/* The honest client of the daemon tests: numbered frames of 60..1514 bytes whose payload
 * is the byte pattern at an offset given by their number, sent at most window ahead of
 * their echoes, each echo checked in order and byte-exact. */
#ifndef MYRIO_TEST_SIMD_STREAM_H
#define MYRIO_TEST_SIMD_STREAM_H

#include <stdatomic.h>
#include <stdint.h>

#include "myrio/myrio.h"

#define SIMD_FRAME_ETHERTYPE 0x88b5
#define SIMD_STREAM_BURST 32

uint32_t simd_frame_len(uint64_t k);
/* Frame number k of len bytes from src to dst. */
void simd_frame_fill(uint8_t *f, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		     uint64_t k);
/* Streams from port (whose MAC is mac) to the echo at echo_mac until *stop, counting the
 * echoes checked in *verified. 0, or 12 for an echo not as sent, 14 for a stall; who names
 * the client in the message. */
int simd_stream_check(struct myrio_port *port, struct myrio_pool *pool, const uint8_t mac[6],
		      const uint8_t echo_mac[6], unsigned window, atomic_int *stop,
		      atomic_uint_fast64_t *verified, const char *who);

#endif
