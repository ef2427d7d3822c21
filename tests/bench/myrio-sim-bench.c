/* SPDX-License-Identifier: BSD-3-Clause */
/* Micro-benchmark of the device model.
 *
 * Default: the model alone, a stepped world of two NICs, this program playing both drivers
 * (descriptor writes, rx reposting in groups of 8, the status-block handshake) through
 * BAR0 and DMA memory only. Prints frames/s overall and the time spent inside the model.
 *
 * -d: the real driver instead, through the port API, on a threaded world (the model thread
 * on one core, this program sending on sim0 and receiving on sim1 on the other). Loss is
 * counted from the frames received against the frames the sender's driver accepted.
 *
 *   myrio-sim-bench [-d] [-n FRAMES] [-l LEN] [-s SPEC]
 *   defaults: 5000000 frames, 60 bytes (64 with FCS), link=unlimited (with -d: link=unlimited,spin)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "myrio/myrio.h"
#include "sim_harness.h"

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
		uint64_t a =
		    h_iova(h, H_SMALL + ((slot + i) & (h->rx_entries - 1)) * H_SMALL_STRIDE);
		words[2 * i] = be32((uint32_t)(a >> 32));
		words[2 * i + 1] = be32((uint32_t)a);
	}
	uint32_t low0 = words[1];
	words[1] = 0xFFFFFFFFu;
	volatile uint64_t *d =
	    (volatile uint64_t *)(h->bar + h->small_off + (slot & (h->rx_entries - 1)) * 8);
	for (unsigned i = 0; i < 8; i++)
		d[i] = (uint64_t)words[2 * i + 1] << 32 | words[2 * i];
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile uint32_t *)(h->bar + h->small_off + (slot & (h->rx_entries - 1)) * 8 + 4) = low0;
}

/* The real driver: sim0 -> sim1 through myrio_tx_burst / myrio_rx_burst. */
static int driver_bench(unsigned long frames, unsigned len, const char *spec)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (myrio_sim_conf_parse(&sc, spec) < 0 || sc.stepped) {
		fprintf(stderr, "-d needs a threaded world (no 'stepped')\n");
		return 2;
	}
	struct myrio_sim *w;
	if (myrio_sim_create(&w, &sc) < 0)
		return 1;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	struct myrio_port *a, *b;
	struct myrio_pool *pool;
	if (myrio_port_open(&a, "sim:sim0", &pc) < 0 || myrio_port_open(&b, "sim:sim1", &pc) < 0 ||
	    myrio_port_pool_create(a, 4096, 2048, &pool) < 0) {
		fprintf(stderr, "cannot open the model's ports\n");
		return 1;
	}
	struct myrio_port_info ib;
	myrio_port_info(b, &ib);
	unsigned long sent = 0, got = 0, spins = 0;
	double t0 = now_s(), last = t0;
	while (got < sent || sent < frames) {
		struct myrio_pkt *p[32];
		unsigned n = 0;
		while (n < 32 && sent + n < frames && (p[n] = myrio_pkt_alloc(pool)) != NULL) {
			uint8_t *f = p[n]->buf + p[n]->data_off;
			memcpy(f, ib.mac, 6);
			memset(f + 6, 2, 6);
			f[12] = 0x88;
			f[13] = 0xb5;
			p[n]->len = len;
			n++;
		}
		unsigned t = myrio_tx_burst(a, p, (uint16_t)n);
		for (unsigned i = t; i < n; i++)
			myrio_pkt_free(p[i]);
		sent += t;
		uint16_t r = myrio_rx_burst(b, p, 32);
		for (unsigned i = 0; i < r; i++)
			myrio_pkt_free(p[i]);
		got += r;
		myrio_rx_burst(a, p, 0); /* lets the sender's driver reap send completions */
		if (r || t) {
			spins = 0;
			last = now_s();
		} else if (++spins % 1024 == 0 && now_s() - last > 1.0) {
			/* nothing moved for a second: say what the model was doing, give up */
			struct sim_nic *na = sim_nic_find(w, "sim0"), *nb = sim_nic_find(w, "sim1");
			uint64_t e0 = atomic_load(&w->epoch);
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
			fprintf(stderr,
				"stalled: model iterations in 100 ms: %llu; sim0 tx_cons %u "
				"send_done %u armed %d paused %d; sim1 small cons %u\n",
				(unsigned long long)(atomic_load(&w->epoch) - e0) / 2,
				na->sl[0].tx_cons, na->sl[0].send_done, na->sl[0].armed, na->paused,
				nb->sl[0].small.cons);
			break;
		}
	}
	double t = last - t0;
	struct myrio_port_stats st;
	myrio_port_stats(b, &st);
	struct sim_nic_stats ms;
	sim_nic_get_stats(sim_nic_find(w, "sim0"), &ms);
	printf("driver: %lu of %lu frames of %u bytes received in %.3f s: %.0f frames/s, lost %lu "
	       "(NIC drops %llu, sender held by pause longer than its limit %lu times)\n",
	       got, sent, len, t, got / t, sent - got, (unsigned long long)st.rx_missed,
	       (unsigned long)ms.pause_timeouts);
	myrio_port_close(a);
	myrio_port_close(b);
	myrio_sim_destroy(w);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long frames = 5000000;
	unsigned len = 60;
	const char *spec = NULL;
	bool driver = false;
	int opt;
	while ((opt = getopt(argc, argv, "dn:l:s:h")) != -1) {
		if (opt == 'd')
			driver = true;
		else if (opt == 'n')
			frames = strtoul(optarg, NULL, 0);
		else if (opt == 'l')
			len = (unsigned)atoi(optarg);
		else if (opt == 's')
			spec = optarg;
		else {
			fprintf(stderr, "usage: %s [-d] [-n FRAMES] [-l LEN 60..1514] [-s SPEC]\n",
				argv[0]);
			return 2;
		}
	}
	if (len < 60 || len > 1514) {
		fprintf(stderr, "LEN must be 60..1514 (frame without FCS)\n");
		return 2;
	}
	if (driver)
		return driver_bench(frames, len, spec ? spec : "link=unlimited,spin");
	if (!spec)
		spec = "link=unlimited";
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
			volatile uint32_t *d =
			    (volatile uint32_t *)(a.bar + a.send_off + slot * 16);
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
