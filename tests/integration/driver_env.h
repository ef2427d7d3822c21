/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared set-up for the driver's integration tests: a model world (stepped or threaded),
 * two ports joined by its cable, and frame helpers that check every byte and the order. */
#ifndef DRIVER_ENV_H
#define DRIVER_ENV_H

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
static inline const char *env_attr(struct myrio_port *p, const char *name)
{
	static char out[4][128];
	static unsigned next;
	char *o = out[next++ % 4];
	struct myrio_port_attr a[16];
	int n = myrio_port_attrs(p, a, 16);
	o[0] = '\0';
	for (int i = 0; i < n && i < 16; i++)
		if (strcmp(a[i].name, name) == 0)
			snprintf(o, sizeof(out[0]), "%s", a[i].value);
	return o;
}

/* A driver counter of port p by name; UINT64_MAX if it has none of that name. */
static inline uint64_t env_xstat(struct myrio_port *p, const char *name)
{
	uint64_t v;
	return myrio_port_xstat(p, name, &v) == 0 ? v : UINT64_MAX;
}

static inline double env_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Lets the model work: a few firmware-loop iterations, or a yield to its thread. */
static inline void env_pump(struct env *e)
{
	if (e->stepped)
		myrio_sim_step(e->sim, 4);
	else
		sched_yield();
}

static inline int env_world(struct env *e, const char *spec)
{
	memset(e, 0, sizeof(*e));
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (spec && myrio_sim_conf_parse(&sc, spec) < 0)
		return -1;
	e->stepped = sc.stepped;
	return myrio_sim_create(&e->sim, &sc);
}

static inline int env_open(struct env *e, uint32_t mtu)
{
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e->sim;
	conf.mtu = mtu;
	conf.irq = e->irq;
	int rc = myrio_port_open(&e->a, "sim:sim0", &conf);
	if (rc < 0)
		return rc;
	rc = myrio_port_open(&e->b, "sim:sim1", &conf);
	if (rc < 0)
		return rc;
	myrio_port_info(e->a, &e->ia);
	myrio_port_info(e->b, &e->ib);
	uint32_t buf = MYRIO_PKT_HEADROOM + mtu + 18;
	rc = myrio_port_pool_create(e->a, 2048, buf, &e->pool_a);
	if (rc == 0)
		rc = myrio_port_pool_create(e->b, 2048, buf, &e->pool_b);
	return rc;
}

/* Waits (pumping the model) until the transmit pools are whole again. */
static inline bool env_drain_tx(struct env *e)
{
	struct myrio_pkt *none[1];
	double until = env_now() + 5;
	while (env_now() < until) {
		if (myrio_pool_free_count(e->pool_a) == e->pool_a->count &&
		    myrio_pool_free_count(e->pool_b) == e->pool_b->count)
			return true;
		myrio_tx_burst(e->a, none, 0);
		myrio_tx_burst(e->b, none, 0);
		env_pump(e);
	}
	return false;
}

static inline void env_close_ports(struct env *e)
{
	env_drain_tx(e);
	myrio_pool_destroy(e->pool_a);
	myrio_pool_destroy(e->pool_b);
	e->pool_a = e->pool_b = NULL;
	myrio_port_close(e->a);
	myrio_port_close(e->b);
	e->a = e->b = NULL;
}

static inline void env_destroy(struct env *e)
{
	if (e->a)
		env_close_ports(e);
	myrio_sim_destroy(e->sim);
}

/* Waits for the link state to become known and returns it. */
static inline int env_link(struct env *e, struct myrio_port *p, int want)
{
	int link = myrio_port_link(p);
	double until = env_now() + 5;
	while (link != want && env_now() < until) {
		env_pump(e);
		link = myrio_port_link(p);
	}
	return link;
}

static inline void env_fill(uint8_t *f, uint32_t len, uint32_t seq, const uint8_t *dst,
			    const uint8_t *src)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	memcpy(f + 14, &seq, 4);
	memcpy(f + 18, &len, 4);
	for (uint32_t i = 22; i < len; i++)
		f[i] = (uint8_t)(seq * 7 + i);
}

/* Checks a received frame against what frame number seq of that size must contain. */
static inline bool env_check(const struct myrio_pkt *p, uint32_t len, uint32_t seq,
			     const uint8_t *dst, const uint8_t *src)
{
	static uint8_t want[9100];
	if (p->len != len) {
		fprintf(stderr, "frame %u: length %u, expected %u\n", seq, p->len, len);
		return false;
	}
	env_fill(want, len, seq, dst, src);
	if (memcmp(myrio_pkt_data(p), want, len) != 0) {
		uint32_t got;
		memcpy(&got, myrio_pkt_data(p) + 14, 4);
		fprintf(stderr, "frame %u: bytes differ (sequence field %u)\n", seq, got);
		return false;
	}
	return true;
}

/* Sends count frames from one port to the other, sizes from len_of(i), receives and checks
 * them all in order. Returns the number received correctly in order (count on success). */
static inline uint32_t env_transfer(struct env *e, int dir, uint32_t count,
				    uint32_t (*len_of)(uint32_t i))
{
	struct myrio_port *tx = dir ? e->b : e->a, *rx = dir ? e->a : e->b;
	struct myrio_pool *pool = dir ? e->pool_b : e->pool_a;
	const uint8_t *src = dir ? e->ib.mac : e->ia.mac, *dst = dir ? e->ia.mac : e->ib.mac;
	struct myrio_pkt *out[32], *in[32];
	unsigned pending = 0;
	uint32_t sent = 0, ok = 0;
	uint32_t base_tx = e->seq_tx[dir];
	double last = env_now();
	while (ok < count) {
		while (pending < 32 && sent < count) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			uint32_t len = len_of(sent);
			env_fill(myrio_pkt_data(p), len, base_tx + sent, dst, src);
			p->len = len;
			out[pending++] = p;
			sent++;
		}
		uint16_t n = myrio_tx_burst(tx, out, (uint16_t)pending);
		memmove(out, out + n, (pending - n) * sizeof(out[0]));
		pending -= n;
		env_pump(e);
		uint16_t got = myrio_rx_burst(rx, in, 32);
		for (uint16_t i = 0; i < got; i++) {
			if (!env_check(in[i], len_of(ok), base_tx + ok, dst, src)) {
				myrio_pkt_free_bulk(in, got);
				myrio_pkt_free_bulk(out, pending);
				return ok;
			}
			ok++;
		}
		myrio_pkt_free_bulk(in, got);
		if (got)
			last = env_now();
		else if (env_now() - last > 5) {
			fprintf(stderr, "no frame for 5 s: %u of %u received\n", ok, count);
			break;
		}
	}
	myrio_pkt_free_bulk(out, pending);
	e->seq_tx[dir] += sent;
	return ok;
}

#endif
