/* Micro-benchmark of the device model alone: a stepped world of two NICs, this program
 * playing both drivers (descriptor writes, rx reposting in groups of 8, the status-block
 * handshake) through BAR0 and DMA memory only. Prints frames/s overall and the share of
 * time spent inside the model.
 *   myrio-sim-bench [-n FRAMES] [-l LEN] [-s SPEC]     (defaults: 5000000, 60, link=unlimited)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../tests/unit/sim_harness.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Posts 8 small descriptors at slot (8-aligned) with 64-bit stores, low word 0 last
 * (§4.3). */
static void post8(struct hnic *h, uint32_t slot)
{
	uint32_t words[16];
	for (unsigned i = 0; i < 8; i++) {
		uint64_t a = h_iova(h, H_SMALL + ((slot + i) & (h->rx_entries - 1)) * H_SMALL_STRIDE);
		words[2 * i] = be32((uint32_t)(a >> 32));
		words[2 * i + 1] = be32((uint32_t)a);
	}
	uint32_t low0 = words[1];
	words[1] = 0xFFFFFFFFu;
	volatile uint64_t *d = (volatile uint64_t *)(h->bar + h->small_off +
						     (slot & (h->rx_entries - 1)) * 8);
	for (unsigned i = 0; i < 8; i++)
		d[i] = (uint64_t)words[2 * i + 1] << 32 | words[2 * i];
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile uint32_t *)(h->bar + h->small_off + (slot & (h->rx_entries - 1)) * 8 + 4) =
		low0;
}

int main(int argc, char **argv)
{
	unsigned long frames = 5000000;
	unsigned len = 60;
	const char *spec = "link=unlimited";
	int opt;
	while ((opt = getopt(argc, argv, "n:l:s:h")) != -1) {
		if (opt == 'n')
			frames = strtoul(optarg, NULL, 0);
		else if (opt == 'l')
			len = (unsigned)atoi(optarg);
		else if (opt == 's')
			spec = optarg;
		else {
			fprintf(stderr, "usage: %s [-n FRAMES] [-l LEN 60..1500] [-s SPEC]\n",
				argv[0]);
			return 2;
		}
	}
	if (len < 60 || len > 1500) {
		fprintf(stderr, "LEN must be 60..1500\n");
		return 2;
	}
	struct myrio_sim *w = h_world(spec);
	static struct hnic a, b;
	if (!w || h_init(&a, w, 0) || h_init(&b, w, 1) || h_bringup(&a, 126, 2048, 0) ||
	    h_bringup(&b, 1518, 2048, 0)) {
		fprintf(stderr, "model set-up failed\n");
		return 1;
	}
	for (uint32_t s = 0; s < b.rx_entries; s += 8)
		post8(&b, s);
	b.small_prod = b.rx_entries;
	/* 64 tx buffers with the same frame */
	static const uint8_t src[6] = {0x00, 0x60, 0xdd, 0x01, 0x02, 0x03};
	for (unsigned i = 0; i < 64; i++)
		h_frame(h_tx_buf(&a, i), b.nic->eeprom_mac, src, 0x88b5, len, (uint8_t)i);
	uint32_t tmask = a.tx_entries - 1, done = 0, sent = 0, reposted = 0;
	unsigned long got = 0;
	int hs = 0;
	volatile uint8_t *valid = a.mem + H_STATS + 63;
	double t_model = 0, t0 = now_s();
	while (got < frames) {
		/* transmit: single-descriptor frames, commit word last (§5.7) */
		while (sent - done < a.tx_entries - 16 && sent < frames + 1024) {
			uint32_t slot = sent & tmask;
			uint64_t ad = h_iova(&a, H_TX + (sent & 63) * H_TX_STRIDE);
			volatile uint32_t *d = (volatile uint32_t *)(a.bar + a.send_off + slot * 16);
			d[0] = be32((uint32_t)(ad >> 32));
			d[1] = be32((uint32_t)ad);
			d[2] = be32(len);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			d[3] = be32(1u << 16 | 0x13);
			sent++;
		}
		/* status handshake without blocking (§6.5) */
		if (hs == 0 && *valid) {
			done = get_be32((const void *)(a.mem + H_STATS + 24));
			h_w32(&a, a.deassert_off, 0);
			hs = 1;
		} else if (hs == 1 && !*valid) {
			h_w32(&a, a.claim_off + 4, 3);
			hs = 0;
		}
		double t1 = now_s();
		myrio_sim_step(w, 1);
		t_model += now_s() - t1;
		/* receive: reap, repost by 8 */
		uint32_t l;
		while ((l = h_completion(&b, NULL)) != 0)
			got++;
		while (got - reposted >= 8) {
			post8(&b, b.small_prod);
			b.small_prod += 8;
			reposted += 8;
		}
	}
	double t = now_s() - t0;
	struct sim_counters k;
	sim_nic_get_counters(b.nic, &k);
	printf("%lu frames of %u bytes in %.3f s: %.2f Mpps (model %.0f%% of the time, "
	       "%.1f ns/frame inside the model); drops: no_small %u\n",
	       got, len, t, got / t / 1e6, 100 * t_model / t, t_model * 1e9 / got,
	       k.dropped_no_small_buffer);
	h_fini(&a);
	h_fini(&b);
	myrio_sim_destroy(w);
	return 0;
}
