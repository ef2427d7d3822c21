/* SPDX-License-Identifier: BSD-3-Clause */
/* A cable from a model NIC to an endpoint (what the TAP and AF_PACKET endpoints plug
 * into): frames leave linearised with the offloaded checksum inserted, frames coming in
 * are padded to 60 bytes, paced at the link rate, and go through the same faults. */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim/endpoint.h"
#include "sim_harness.h"
#include "util/csum.h"

struct fake_ep {
	struct sim_endpoint ep;
	uint8_t last[2048];
	uint32_t last_len;
	unsigned delivered;
	unsigned to_emit; /* frames poll will hand over */
	uint32_t emit_len;
	uint8_t dst[6];
	bool destroyed;
};

static void fe_deliver(struct sim_endpoint *ep, const uint8_t *frame, uint32_t len)
{
	struct fake_ep *f = (struct fake_ep *)ep;
	memcpy(f->last, frame, len < sizeof(f->last) ? len : sizeof(f->last));
	f->last_len = len;
	f->delivered++;
	ep->tx_frames++;
}

static unsigned fe_poll(struct sim_endpoint *ep, sim_emit_fn emit, void *ctx, unsigned max)
{
	struct fake_ep *f = (struct fake_ep *)ep;
	unsigned n = 0;
	uint8_t fr[1600];
	while (n < max && f->to_emit) {
		memset(fr, 0xAB, sizeof(fr));
		memcpy(fr, f->dst, 6);
		memset(fr + 6, 0x02, 6);
		put_be16(fr + 12, 0x0806);
		emit(ctx, fr, f->emit_len);
		f->to_emit--;
		ep->rx_frames++;
		n++;
	}
	return n;
}

static int fe_fd(struct sim_endpoint *ep)
{
	(void)ep;
	return -1;
}

static void fe_destroy(struct sim_endpoint *ep)
{
	((struct fake_ep *)ep)->destroyed = true;
}

static const struct sim_endpoint_ops fe_ops = {fe_deliver, fe_poll, fe_fd, fe_destroy};

/* A stepped world from spec with one NIC cabled to the fake endpoint fe. */
static struct myrio_sim *world_with_ep(struct fake_ep *fe, const char *spec)
{
	struct myrio_sim_conf c;
	myrio_sim_conf_init(&c);
	myrio_sim_conf_parse(&c, spec);
	c.stepped = true;
	struct myrio_sim *w;
	struct sim_nic *nic;
	if (sim_world_new(&c, &w) || sim_world_add_nic(w, "tap0nic", NULL, &nic))
		return NULL;
	memset(fe, 0, sizeof(*fe));
	fe->ep.ops = &fe_ops;
	snprintf(fe->ep.name, sizeof(fe->ep.name), "fake");
	memcpy(fe->dst, nic->eeprom_mac, 6);
	if (sim_world_cable_endpoint(nic, &fe->ep) || sim_world_start(w))
		return NULL;
	return w;
}

/* That world with its NIC brought up in h, post buffers on each receive ring. */
static struct myrio_sim *nic_with_ep(struct fake_ep *fe, const char *spec, struct hnic *h,
				     uint32_t post)
{
	struct myrio_sim *w = world_with_ep(fe, spec);
	assert_non_null(w);
	assert_int_equal(h_init(h, w, 0), 0);
	assert_int_equal(h_bringup(h, 126, 2048, post), 0);
	return w;
}

static void nic_to_endpoint(void **state)
{
	(void)state;
	struct fake_ep fe;
	struct hnic h;
	struct myrio_sim *w = nic_with_ep(&fe, "link=unlimited", &h, 16);
	/* a UDP frame with checksum offload: the endpoint gets the finished frame */
	uint8_t f[200];
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 1};
	h_frame(f, dst, h.nic->eeprom_mac, 0x0800, 100, 1);
	uint8_t *ip = f + 14;
	memset(ip, 0, 28);
	ip[0] = 0x45;
	put_be16(ip + 2, 86);
	ip[9] = 17;
	put_be32(ip + 12, 0x0a000001);
	put_be32(ip + 16, 0x0a000002);
	put_be16(ip + 24, 66);
	uint64_t ph = csum_add(0, ip + 12, 8) + 17 + 66;
	put_be16(ip + 26, csum_fold(ph));
	uint8_t *b = h_tx_buf(&h, 0);
	memcpy(b, f, 100);
	h_txd(&h, 0, h_iova(&h, (uint32_t)(b - h.mem)), 100, 40, 1, 34, 0x1B, 1);
	h.tx_prod++;
	myrio_sim_step(w, 2);
	assert_int_equal(fe.delivered, 1);
	assert_int_equal(fe.last_len, 100);
	uint64_t s = csum_add(0, fe.last + 26, 8) + 17 + 66;
	assert_int_equal(csum_fold(csum_add(s, fe.last + 34, 66)), 0xFFFF);
	h_fini(&h);
	myrio_sim_destroy(w);
	assert_true(fe.destroyed); /* the cable owns its endpoint */
}

static void endpoint_to_nic_padded_and_paced(void **state)
{
	(void)state;
	struct fake_ep fe;
	struct hnic h;
	struct myrio_sim *w = nic_with_ep(&fe, "link=1g", &h, 256);
	fe.emit_len = 42; /* an ARP request as the kernel hands it over */
	fe.to_emit = 1;
	myrio_sim_step(w, 20);
	assert_int_equal(h_completion(&h, NULL), 60);
	uint8_t *rx = h_small_buf(&h, 0) + 2;
	assert_int_equal(rx[41], 0xAB);
	assert_int_equal(rx[42], 0); /* padding */
	assert_int_equal(rx[59], 0);
	/* 1 Gb/s: 200 frames of 1000 bytes need (1024 * 8) ns each = 1.64 ms */
	fe.emit_len = 1000;
	fe.to_emit = 200;
	uint64_t t0 = sim_world_now(w);
	unsigned got = 0;
	while (got < 200 && sim_world_now(w) - t0 < 10000000) {
		myrio_sim_step(w, 1);
		while (h_completion(&h, NULL)) {
			got++;
			h_post_big(&h, 1);
		}
	}
	double ms = (sim_world_now(w) - t0) / 1e6;
	assert_int_equal(got, 200);
	assert_true(ms > 1.5 && ms < 1.9);
	h_fini(&h);
	myrio_sim_destroy(w);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Reordering turned on while frames flow holds frames back without allocating: the
 * data path allocates nothing, whatever set_faults turns on. */
static void reorder_allocates_nothing(void **state)
{
	(void)state;
	struct fake_ep fe;
	struct hnic h;
	struct myrio_sim *w = nic_with_ep(&fe, "link=1g", &h, 256);
	struct myrio_sim_faults f = {.reorder = 1.0};
	assert_int_equal(myrio_sim_set_faults(w, "tap0nic", &f), 0);
	myrio_sim_step(w, 1); /* the cable takes the new faults */
	size_t heap0 = heap_in_use();
	fe.emit_len = 1000;
	fe.to_emit = 20;
	unsigned got = 0;
	for (int i = 0; i < 10000 && got < 20; i++) {
		myrio_sim_step(w, 1);
		while (h_completion(&h, NULL)) {
			got++;
			h_post_big(&h, 1);
		}
	}
	size_t heap1 = heap_in_use();
	assert_int_equal(got, 20); /* held back, then delivered */
	assert_true(h.nic->cable->ba.reordered > 0);
	assert_int_equal(heap1, heap0);
	h_fini(&h);
	myrio_sim_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nic_to_endpoint),
	    cmocka_unit_test(endpoint_to_nic_padded_and_paced),
	    cmocka_unit_test(reorder_allocates_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
