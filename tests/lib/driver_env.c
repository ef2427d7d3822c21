/* SPDX-License-Identifier: BSD-3-Clause */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "driver_env.h"
#include "test_pattern.h"
#include "wall_clock.h"

const char *env_attr(struct myrio_port *p, const char *name)
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

uint64_t env_xstat(struct myrio_port *p, const char *name)
{
	uint64_t v;
	return myrio_port_xstat(p, name, &v) == 0 ? v : UINT64_MAX;
}

void env_pump(struct env *e)
{
	if (e->stepped)
		myrio_sim_step(e->sim, 4);
	else
		sched_yield();
}

int env_world(struct env *e, const char *spec)
{
	memset(e, 0, sizeof(*e));
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (spec && myrio_sim_conf_parse(&sc, spec) < 0)
		return -1;
	e->stepped = sc.stepped;
	return myrio_sim_create(&e->sim, &sc);
}

int env_open(struct env *e, uint32_t mtu)
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

bool env_drain_tx(struct env *e)
{
	struct myrio_pkt *none[1];
	double until = wall_s() + 5;
	while (wall_s() < until) {
		if (myrio_pool_free_count(e->pool_a) == e->pool_a->count &&
		    myrio_pool_free_count(e->pool_b) == e->pool_b->count)
			return true;
		myrio_tx_burst(e->a, none, 0);
		myrio_tx_burst(e->b, none, 0);
		env_pump(e);
	}
	return false;
}

void env_close_ports(struct env *e)
{
	env_drain_tx(e);
	myrio_pool_destroy(e->pool_a);
	myrio_pool_destroy(e->pool_b);
	e->pool_a = e->pool_b = NULL;
	myrio_port_close(e->a);
	myrio_port_close(e->b);
	e->a = e->b = NULL;
}

void env_destroy(struct env *e)
{
	if (e->a)
		env_close_ports(e);
	myrio_sim_destroy(e->sim);
}

int env_link(struct env *e, struct myrio_port *p, int want)
{
	int link = myrio_port_link(p);
	double until = wall_s() + 5;
	while (link != want && wall_s() < until) {
		env_pump(e);
		link = myrio_port_link(p);
	}
	return link;
}

void env_fill(uint8_t *f, uint32_t len, uint32_t seq, const uint8_t *dst, const uint8_t *src)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	memcpy(f + 14, &seq, 4);
	memcpy(f + 18, &len, 4);
	if (len > 22) /* a header-only frame (its length set later) has no payload */
		test_pattern_fill(f + 22, len - 22, (uint64_t)seq << 16); /* frames < 64 KiB */
}

bool env_check(const struct myrio_pkt *p, uint32_t len, uint32_t seq, const uint8_t *dst,
	       const uint8_t *src)
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

uint32_t env_transfer(struct env *e, int dir, uint32_t count, uint32_t (*len_of)(uint32_t i))
{
	struct myrio_port *tx = dir ? e->b : e->a, *rx = dir ? e->a : e->b;
	struct myrio_pool *pool = dir ? e->pool_b : e->pool_a;
	const uint8_t *src = dir ? e->ib.mac : e->ia.mac, *dst = dir ? e->ia.mac : e->ib.mac;
	struct myrio_pkt *out[32], *in[32];
	unsigned pending = 0;
	uint32_t sent = 0, ok = 0;
	uint32_t base_tx = e->seq_tx[dir];
	double last = wall_s();
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
			last = wall_s();
		else if (wall_s() - last > 5) {
			fprintf(stderr, "no frame for 5 s: %u of %u received\n", ok, count);
			break;
		}
	}
	myrio_pkt_free_bulk(out, pending);
	e->seq_tx[dir] += sent;
	return ok;
}
