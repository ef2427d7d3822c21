/* SPDX-License-Identifier: BSD-3-Clause */
/* raw_frames: send N frames of S bytes from one port to another, check every byte and the
 * order, print the rate.
 *
 *   raw_frames [-n COUNT] [-s SIZE] [-m MTU] [-l LINK] [DEVICE_A DEVICE_B]
 *
 * Without devices it creates a device model with two NICs joined by a cable (LINK: 10g,
 * 1g, unlimited) and uses sim:sim0 -> sim:sim1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "myrio/myrio.h"

#define BURST 32
#define ETHERTYPE_EXPERIMENTAL 0x88b5

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Frame: dst MAC, src MAC, EtherType, 4-byte sequence number, then bytes derived from it. */
static void fill(uint8_t *f, uint32_t size, uint32_t seq, const uint8_t *dst, const uint8_t *src)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETHERTYPE_EXPERIMENTAL >> 8;
	f[13] = ETHERTYPE_EXPERIMENTAL & 0xff;
	memcpy(f + 14, &seq, 4);
	for (uint32_t i = 18; i < size; i++)
		f[i] = (uint8_t)(seq + i);
}

static int check(const struct myrio_pkt *p, uint32_t size, uint32_t seq, const uint8_t *dst,
		 const uint8_t *src)
{
	static uint8_t want[9018];
	if (p->len != size) {
		fprintf(stderr, "frame %u: %u bytes, expected %u\n", seq, p->len, size);
		return -1;
	}
	fill(want, size, seq, dst, src);
	if (memcmp(myrio_pkt_data(p), want, size) != 0) {
		uint32_t got;
		memcpy(&got, myrio_pkt_data(p) + 14, 4);
		fprintf(stderr, "frame %u: content differs (carries sequence %u)\n", seq, got);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned count = 100000, size = 64, mtu = 1500;
	const char *link = "10g";
	const struct cli_opt opts[] = {{NULL, 'n', .num = &count},
				       {NULL, 's', .num = &size},
				       {NULL, 'm', .num = &mtu},
				       {NULL, 'l', .str = &link},
				       {0}};
	if (cli_parse(argc, argv, opts,
		      "usage: raw_frames [-n COUNT] [-s SIZE] [-m MTU] [-l 10g|1g|unlimited] "
		      "[DEVICE_A DEVICE_B]\n") < 0)
		return 2;
	if (size < 60 || size > mtu + 14) {
		fprintf(stderr, "raw_frames: size must be 60..%u (MTU + 14)\n", mtu + 14);
		return 2;
	}

	/* 1. Two ports: the given devices, or two NICs of an in-process model. */
	struct myrio_sim *sim = NULL;
	const char *dev_a = "sim:sim0", *dev_b = "sim:sim1";
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.mtu = mtu;
	if (optind + 2 == argc) {
		dev_a = argv[optind];
		dev_b = argv[optind + 1];
	} else {
		struct myrio_sim_conf sc;
		myrio_sim_conf_init(&sc);
		char spec[64];
		snprintf(spec, sizeof(spec), "link=%s", link);
		if (myrio_sim_conf_parse(&sc, spec) < 0 || myrio_sim_create(&sim, &sc) < 0)
			return 1;
		conf.sim = sim;
	}
	struct myrio_port *a, *b;
	if (myrio_port_open(&a, dev_a, &conf) < 0)
		return 1;
	if (myrio_port_open(&b, dev_b, &conf) < 0)
		return 1;
	struct myrio_port_info ia, ib;
	myrio_port_info(a, &ia);
	myrio_port_info(b, &ib);

	/* 2. Transmit buffers the sender's NIC can reach. */
	struct myrio_pool *pool;
	if (myrio_port_pool_create(a, 4096, MYRIO_PKT_HEADROOM + size, &pool) < 0)
		return 1;

	/* 3. Send and receive in one loop; tx_burst may take fewer than offered. */
	struct myrio_pkt *out[BURST], *in[BURST];
	unsigned pending = 0;
	uint32_t next_tx = 0, next_rx = 0;
	int errors = 0;
	double t0 = now(), last_progress = t0;
	while (next_rx < count && errors == 0) {
		while (pending < BURST && next_tx < count) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			fill(myrio_pkt_data(p), size, next_tx++, ib.mac, ia.mac);
			p->len = size;
			out[pending++] = p;
		}
		uint16_t sent = myrio_tx_burst(a, out, (uint16_t)pending);
		memmove(out, out + sent, (pending - sent) * sizeof(out[0]));
		pending -= sent;

		uint16_t got = myrio_rx_burst(b, in, BURST);
		for (uint16_t i = 0; i < got; i++) {
			if (errors == 0 && check(in[i], size, next_rx, ib.mac, ia.mac) < 0)
				errors++;
			next_rx++;
		}
		myrio_pkt_free_bulk(in, got);
		double t = now();
		if (got)
			last_progress = t;
		else if (t - last_progress > 2.0) {
			fprintf(stderr, "raw_frames: no frame for 2 s; %u of %u received\n",
				next_rx, count);
			errors++;
		}
	}
	double dt = now() - t0;
	myrio_pkt_free_bulk(out, pending);
	/* 4. Let the NIC report the last send completions, so every buffer is back in the
	 * pool before the pool goes away (it must go before the port that maps it). */
	if (myrio_port_tx_drain(a, pool, 5000) < 0)
		fprintf(stderr, "raw_frames: the NIC kept frames for 5 s\n");

	struct myrio_port_stats sa, sb;
	myrio_port_stats(a, &sa);
	myrio_port_stats(b, &sb);
	printf("%u frames of %u bytes %s -> %s in %.3f s: %.3f Mpps, %.3f Gb/s of frames\n",
	       next_rx, size, dev_a, dev_b, dt, next_rx / dt / 1e6,
	       next_rx * size * 8.0 / dt / 1e9);
	printf("%s: every byte and the order checked; tx ring full %llu times, NIC drops "
	       "(no buffer, overrun) %llu\n",
	       errors ? "FAILED" : "ok", (unsigned long long)sa.tx_ring_full,
	       (unsigned long long)sb.rx_missed);
	if (myrio_pool_free_count(pool) == pool->count)
		myrio_pool_destroy(pool);
	myrio_port_close(a);
	myrio_port_close(b);
	myrio_sim_destroy(sim);
	return errors ? 1 : 0;
}
