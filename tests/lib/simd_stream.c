/* SPDX-License-Identifier: BSD-3-Clause */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "simd_daemon.h"
#include "simd_stream.h"
#include "test_pattern.h"
#include "util/byteorder.h"

uint32_t simd_frame_len(uint64_t k)
{
	return 60 + (uint32_t)((k * 7919) % (1514 - 60 + 1));
}

void simd_frame_fill(uint8_t *f, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		     uint64_t k)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put_be16(f + 12, SIMD_FRAME_ETHERTYPE);
	put_be32(f + 14, (uint32_t)(k >> 32));
	put_be32(f + 18, (uint32_t)k);
	test_pattern_fill(f + 22, len - 22, k << 16); /* frames are shorter than 64 KiB */
}

int simd_stream_check(struct myrio_port *port, struct myrio_pool *pool, const uint8_t mac[6],
		      const uint8_t echo_mac[6], unsigned window, atomic_int *stop,
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
