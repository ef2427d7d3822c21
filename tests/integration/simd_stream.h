/* SPDX-License-Identifier: BSD-3-Clause */
/* The honest client of the daemon tests: numbered frames of 60..1514 bytes, every byte a
 * function of (number, offset), sent at most window ahead of their echoes, each echo
 * checked in order and byte-exact. */
#ifndef MYRIO_TEST_SIMD_STREAM_H
#define MYRIO_TEST_SIMD_STREAM_H

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "myrio/myrio.h"
#include "test_simd_harness.h"
#include "util/byteorder.h"

#define SIMD_FRAME_ETHERTYPE 0x88b5
#define SIMD_STREAM_BURST 32

static inline uint32_t simd_frame_len(uint64_t k)
{
	return 60 + (uint32_t)((k * 7919) % (1514 - 60 + 1));
}

static inline void simd_frame_fill(uint8_t *f, uint32_t len, const uint8_t dst[6],
				   const uint8_t src[6], uint64_t k)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put_be16(f + 12, SIMD_FRAME_ETHERTYPE);
	put_be32(f + 14, (uint32_t)(k >> 32));
	put_be32(f + 18, (uint32_t)k);
	for (uint32_t i = 22; i < len; i++)
		f[i] = (uint8_t)(k * 31 + i * 13);
}

/* Streams from port (whose MAC is mac) to the echo at echo_mac until *stop, counting the
 * echoes checked in *verified. 0, or 12 for an echo not as sent, 14 for a stall; who names
 * the client in the message. */
static inline int simd_stream_check(struct myrio_port *port, struct myrio_pool *pool,
				    const uint8_t mac[6], const uint8_t echo_mac[6],
				    unsigned window, atomic_int *stop,
				    atomic_uint_fast64_t *verified, const char *who)
{
	uint64_t sent = 0, got = 0;
	struct simd_progress pr = {0};
	uint8_t want[1514];
	while (!atomic_load(stop)) {
		if (simd_stalled(&pr, got)) {
			fprintf(stderr, "%s: no echo for 5 s (%llu of %llu back)\n", who,
				(unsigned long long)got, (unsigned long long)sent);
			return 14;
		}
		struct myrio_pkt *pkts[SIMD_STREAM_BURST];
		unsigned n = 0;
		while (n < SIMD_STREAM_BURST && sent + n - got < window) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			p->len = simd_frame_len(sent + n);
			simd_frame_fill(myrio_pkt_data(p), p->len, echo_mac, mac, sent + n);
			pkts[n++] = p;
		}
		uint16_t took = myrio_tx_burst(port, pkts, (uint16_t)n);
		for (unsigned i = took; i < n; i++)
			myrio_pkt_free(pkts[i]);
		sent += took;
		uint16_t r = myrio_rx_burst(port, pkts, SIMD_STREAM_BURST);
		if (r == 0)
			sched_yield();
		for (uint16_t i = 0; i < r; i++) {
			simd_frame_fill(want, simd_frame_len(got), mac, echo_mac, got);
			if (pkts[i]->len != simd_frame_len(got) ||
			    memcmp(myrio_pkt_data(pkts[i]), want, pkts[i]->len) != 0) {
				fprintf(stderr, "%s: echo %llu not as sent\n", who,
					(unsigned long long)got);
				return 12;
			}
			myrio_pkt_free(pkts[i]);
			atomic_store(verified, ++got);
		}
	}
	return 0;
}

#endif
