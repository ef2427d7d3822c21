/* SPDX-License-Identifier: BSD-3-Clause */
/* Built for another architecture and run under QEMU user mode (tests/sh/arm64_cross.sh):
 * the byte swaps and BAR0 accessors give the NIC's big-endian layout on that host, the
 * barriers are the ones mmio.h names, and the whole driver moves frames through the stepped
 * model there. No test framework: cmocka is not built for the target. */
#include <stdio.h>
#include <string.h>

#include "bus/mmio.h"
#include "myrio/myrio.h"
#include "rings/rings.h"
#include "util/byteorder.h"
#include "util/csum.h"

static int failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);         \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static void byte_order(void)
{
	uint8_t b[8];
	put_be32(b, 0x11223344u);
	CHECK(b[0] == 0x11 && b[3] == 0x44);
	CHECK(get_be32(b) == 0x11223344u);
	put_be16(b, 0xa1b2);
	CHECK(b[0] == 0xa1 && get_be16(b) == 0xa1b2);
	uint64_t d = desc_be64(0x0102030405060708ull);
	memcpy(b, &d, 8);
	CHECK(b[0] == 0x01 && b[7] == 0x08);
	static uint8_t bar[64] __attribute__((aligned(8)));
	mmio_write32(bar, 4, 0xdeadbeefu);
	CHECK(bar[4] == 0xde && bar[7] == 0xef);
	CHECK(mmio_read32(bar, 4) == 0xdeadbeefu);
	mmio_wmb();
	dma_rmb();
	/* RFC 1071 §3's example: 0001 f203 f4f5 f6f7 sum to 2ddf0, folded ddf2 */
	static const uint8_t words[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	CHECK(csum_fold(csum_add(0, words, 8)) == 0xddf2);
}

static void frames_through_the_model(void)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	CHECK(myrio_sim_conf_parse(&sc, "nics=2,link=10g,stepped") == 0);
	struct myrio_sim *sim;
	CHECK(myrio_sim_create(&sim, &sc) == 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = sim;
	struct myrio_port *a, *b;
	CHECK(myrio_port_open(&a, "sim:sim0", &pc) == 0);
	CHECK(myrio_port_open(&b, "sim:sim1", &pc) == 0);
	struct myrio_port_info ia, ib;
	myrio_port_info(a, &ia);
	myrio_port_info(b, &ib);
	struct myrio_pool *pool;
	CHECK(myrio_port_pool_create(a, 256, 2048, &pool) == 0);
	unsigned sent = 0, got = 0;
	for (int round = 0; round < 20000 && got < 2000; round++) {
		if (sent < 2000) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (p) {
				uint8_t *f = myrio_pkt_data(p);
				memset(f, 0, 100);
				memcpy(f, ib.mac, 6);
				memcpy(f + 6, ia.mac, 6);
				put_be16(f + 12, 0x88b5);
				put_be32(f + 14, sent);
				p->len = 100;
				if (myrio_tx_burst(a, &p, 1) == 1)
					sent++;
				else
					myrio_pkt_free(p);
			}
		}
		myrio_sim_step(sim, 4);
		struct myrio_pkt *in[32];
		uint16_t n = myrio_rx_burst(b, in, 32);
		for (uint16_t i = 0; i < n; i++) {
			CHECK(in[i]->len == 100 && get_be32(myrio_pkt_data(in[i]) + 14) == got);
			got++;
		}
		myrio_pkt_free_bulk(in, n);
		struct myrio_pkt *none[1];
		myrio_tx_burst(a, none, 0);
	}
	CHECK(got == 2000);
	struct myrio_port_stats st;
	myrio_port_stats(a, &st);
	CHECK(st.watchdog_resets == 0);
	for (int i = 0; i < 1000 && myrio_pool_free_count(pool) != pool->count; i++) {
		struct myrio_pkt *none[1];
		myrio_tx_burst(a, none, 0);
		myrio_sim_step(sim, 4);
	}
	myrio_pool_destroy(pool);
	myrio_port_close(a);
	myrio_port_close(b);
	myrio_sim_destroy(sim);
	printf("%u frames sent and received in order\n", got);
}

int main(void)
{
	byte_order();
	frames_through_the_model();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
