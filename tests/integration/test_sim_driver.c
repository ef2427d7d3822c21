/* SPDX-License-Identifier: BSD-3-Clause */
/* The real myri10ge driver on the model (stepped): firmware load and handoff from an
 * image file, bring-up, frames both ways with their receive checksums, link changes seen
 * through the status block, and the counters the driver reads. What the model promises
 * the driver, checked with the driver itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* after the headers it needs */
#include <cmocka.h>
#include <sched.h>
#include <time.h>

#include "driver_env.h"
#include "myrio/myrio.h"
#include "sim/fw_image.h"
#include "sim/nic.h"
#include "util/csum.h"

static struct myrio_sim *stepped(const char *extra)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	myrio_sim_conf_parse(&sc, "stepped");
	if (extra)
		myrio_sim_conf_parse(&sc, extra);
	struct myrio_sim *w;
	return myrio_sim_create(&w, &sc) == 0 ? w : NULL;
}

/* Writes the model's "eth" firmware image to a new temporary file named from path (a
 * mkstemp template); handoff_major, unless 0, replaces its handoff_id_major. */
static void write_image(char *path, uint8_t handoff_major)
{
	static uint8_t img[256 * 1024];
	size_t len;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(sim_fw_image_build(img, sizeof(img), "eth", &len), 0);
	if (handoff_major)
		img[FW_HEADER_OFF + 165] = handoff_major;
	assert_int_equal(write(fd, img, len), (ssize_t)len);
	close(fd);
}

static unsigned exchange(struct myrio_sim *w, struct myrio_port *a, struct myrio_port *b,
			 struct myrio_pool *pool, unsigned n, uint32_t len)
{
	struct myrio_port_info ib;
	myrio_port_info(b, &ib);
	unsigned sent = 0, got = 0;
	for (unsigned round = 0; round < 100000 && got < n; round++) {
		struct myrio_pkt *p[16];
		unsigned k = 0;
		while (k < 16 && sent + k < n && (p[k] = myrio_pkt_alloc(pool)) != NULL) {
			uint8_t *f = p[k]->buf + p[k]->data_off;
			memcpy(f, ib.mac, 6);
			memset(f + 6, 2, 6);
			f[12] = 0x88;
			f[13] = 0xb5;
			for (uint32_t i = 14; i < len; i++)
				f[i] = (uint8_t)(sent + k + i);
			p[k]->len = len;
			k++;
		}
		unsigned t = myrio_tx_burst(a, p, (uint16_t)k);
		for (unsigned i = t; i < k; i++)
			myrio_pkt_free(p[i]);
		sent += t;
		myrio_sim_step(w, 2);
		uint16_t r = myrio_rx_burst(b, p, 16);
		for (unsigned i = 0; i < r; i++) {
			const uint8_t *f = p[i]->buf + p[i]->data_off;
			assert_int_equal(p[i]->len, len);
			assert_int_equal(f[14], (uint8_t)(got + i + 14));
			if (p[i]->ol_flags & MYRIO_PKT_RX_CSUM_PARTIAL)
				assert_int_equal(p[i]->rx_csum,
						 csum_fold(csum_add(0, f + 14, len - 14)));
			myrio_pkt_free(p[i]);
		}
		got += r;
		myrio_rx_burst(a, p, 0);
	}
	return got;
}

static void load_image_and_exchange(void **state)
{
	(void)state;
	struct myrio_sim *w = stepped(NULL);
	assert_non_null(w);
	char path[] = "/tmp/myrio-fw-XXXXXX";
	write_image(path, 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	pc.firmware = path;
	struct myrio_port *a, *b;
	assert_int_equal(myrio_port_open(&a, "sim:sim0", &pc), 0);
	pc.firmware = NULL; /* the other adopts the EEPROM firmware */
	assert_int_equal(myrio_port_open(&b, "sim:sim1", &pc), 0);
	unlink(path);
	struct myrio_port_info ia, ib;
	myrio_port_info(a, &ia);
	myrio_port_info(b, &ib);
	assert_non_null(strstr(env_attr(a, "fw_version"), "libmyrio model eth"));
	assert_string_equal(env_attr(b, "fw_version"), "1.4.57 -- libmyrio model");
	assert_int_equal(ib.tx_boundary, 2048);
	assert_int_equal(ia.mac[0], 0x00);
	assert_int_equal(ia.mac[2], 0xdd);
	assert_memory_not_equal(ia.mac, ib.mac, 6);
	struct sim_nic_stats st;
	sim_nic_get_stats(sim_nic_find(w, "sim0"), &st);
	assert_int_equal(st.handoffs, 1);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(a, 1024, 2048, &pool), 0);
	assert_int_equal(exchange(w, a, b, pool, 3000, 60), 3000);
	assert_int_equal(exchange(w, a, b, pool, 500, 1514), 500);
	/* link down and up, through the status block */
	myrio_sim_step(w, 10);
	struct myrio_pkt *p[4];
	assert_int_equal(myrio_sim_set_link(w, "sim0", false), 0);
	for (unsigned i = 0; i < 100 && myrio_port_link(b) != MYRIO_LINK_DOWN; i++) {
		myrio_sim_step(w, 5);
		myrio_rx_burst(b, p, 0);
	}
	assert_int_equal(myrio_port_link(b), MYRIO_LINK_DOWN);
	assert_int_equal(myrio_sim_set_link(w, "sim0", true), 0);
	for (unsigned i = 0; i < 100 && myrio_port_link(b) != MYRIO_LINK_UP; i++) {
		myrio_sim_step(w, 5);
		myrio_rx_burst(b, p, 0);
	}
	assert_int_equal(myrio_port_link(b), MYRIO_LINK_UP);
	sim_nic_get_stats(sim_nic_find(w, "sim0"), &st);
	assert_int_equal(st.tx_invalid, 0);
	assert_int_equal(st.dma_faults, 0);
	assert_int_equal(st.rx_misaligned, 0);
	sim_nic_get_stats(sim_nic_find(w, "sim1"), &st);
	assert_int_equal(st.dma_faults, 0);
	assert_int_equal(st.rx_misaligned, 0);
	myrio_port_close(a); /* returns the buffers still in its send ring to the pool */
	myrio_port_close(b);
	myrio_pool_destroy(pool);
	myrio_sim_destroy(w);
}

static void refused_image_fails_open(void **state)
{
	(void)state;
	struct myrio_sim *w = stepped(NULL);
	assert_non_null(w);
	char path[] = "/tmp/myrio-fw-XXXXXX";
	write_image(path, 9); /* handoff_id_major differs */
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	pc.firmware = path;
	struct myrio_port *a;
	assert_int_not_equal(myrio_port_open(&a, "sim:sim0", &pc), 0);
	unlink(path);
	/* the NIC is free again for the next driver */
	pc.firmware = NULL;
	assert_int_equal(myrio_port_open(&a, "sim:sim0", &pc), 0);
	myrio_port_close(a);
	myrio_sim_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(load_image_and_exchange),
	    cmocka_unit_test(refused_image_fails_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
