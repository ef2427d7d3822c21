/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's IOMMU (§10 host-memory access): only registered IOVA ranges are touched;
 * anything else is refused, logged and counted, never a crash; registration while the
 * model thread runs. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim_harness.h"

static void map_rules(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world(NULL);
	struct sim_nic *nic = sim_world_nic(w, 0);
	sim_nic_cfg_write(nic, 4, 2, 0x0006);
	static uint8_t m1[8192], m2[8192];
	assert_int_equal(sim_nic_dma_map(nic, 0x10000, m1, sizeof(m1)), 0);
	assert_int_equal(sim_nic_dma_map(nic, 0x11000, m2, sizeof(m2)), -EEXIST); /* overlap */
	assert_int_equal(sim_nic_dma_map(nic, 0x12000, m2, sizeof(m2)), 0);
	assert_int_equal(sim_nic_dma_unmap(nic, 0x10000, 4096), -ENOENT); /* not a range */
	assert_int_equal(sim_nic_dma_unmap(nic, 0x10000, sizeof(m1)), 0);
	assert_int_equal(sim_nic_dma_unmap(nic, 0x10000, sizeof(m1)), -ENOENT);
	assert_int_equal(sim_nic_dma_map(nic, 0x10000, NULL, 10), -EINVAL);
	/* lookups: inside, across the end, in a hole */
	assert_ptr_equal(sim_dma(nic, 0x12010, 16, "t"), m2 + 0x10);
	assert_null(sim_dma(nic, 0x13ff0, 32, "t"));
	assert_null(sim_dma(nic, 0x10000, 4, "t"));
	assert_null(sim_dma(nic, UINT64_MAX - 2, 8, "t")); /* wraps */
	struct sim_nic_stats st = h_nic_stats(nic);
	assert_int_equal(st.dma_faults, 3);
	myrio_sim_destroy(w);
}

static void unmapped_rx_buffer_refused(void **state)
{
	(void)state;
	struct hpair p;
	assert_int_equal(h_pair_open(&p, "link=unlimited"), 0);
	struct hnic *a = &p.a, *b = &p.b;
	assert_int_equal(h_bringup(a, 126, 2048, 0), 0);
	assert_int_equal(h_bringup(b, 126, 2048, 0), 0);
	/* a small buffer at an IOVA nobody mapped */
	h_w32(b, b->small_off, 0x7);
	h_w32(b, b->small_off + 4, 0x1000);
	uint8_t f[100];
	h_frame(f, b->nic->eeprom_mac, h_src_mac, 0x0800, 64, 1);
	h_send(a, f, 64);
	myrio_sim_step(p.w, 3);
	assert_int_equal(h_completion(b, NULL), 0);
	struct sim_nic_stats st = h_nic_stats(b->nic);
	assert_int_equal(st.dma_faults, 1);
	assert_int_equal(st.rx_frames, 0);
	/* an unmapped tx buffer: refused, the chain still completes */
	h_txd(a, 0, 0x5000, 64, 0, 1, 0, 0x13, 1);
	a->tx_prod++;
	myrio_sim_step(p.w, 2);
	st = h_nic_stats(a->nic);
	assert_int_equal(st.dma_faults, 1);
	assert_int_equal(h_send_done(a, 2), 2);
	/* an unmapped completion ring: the frame is not delivered, the model survives */
	uint64_t bogus = 0x7700000000ull;
	assert_int_equal(h_cmd(b, MCP_CMD_SET_INTRQ_DMA, (uint32_t)bogus, (uint32_t)(bogus >> 32), 0, NULL), 0);
	h_post_small(b, 8);
	h_send(a, f, 64);
	myrio_sim_step(p.w, 3);
	st = h_nic_stats(b->nic);
	assert_true(st.dma_faults >= 2);
	h_pair_close(&p);
}

static void map_while_thread_runs(void **state)
{
	(void)state;
	struct myrio_sim_conf conf;
	myrio_sim_conf_init(&conf);
	conf.link_bps = 0;
	struct myrio_sim *w;
	assert_int_equal(myrio_sim_create(&w, &conf), 0);
	struct sim_nic *nic = sim_world_nic(w, 0);
	assert_int_equal(sim_nic_attach(nic), 0);
	sim_nic_cfg_write(nic, 4, 2, 0x0006);
	static uint8_t mem[64 * 1024];
	for (unsigned i = 0; i < 200; i++) {
		uint64_t iova = 0x100000ull + (i % 7) * 0x20000ull;
		assert_int_equal(sim_nic_dma_map(nic, iova, mem, sizeof(mem)), 0);
		assert_int_equal(sim_nic_dma_unmap(nic, iova, sizeof(mem)), 0);
	}
	/* a command through the running thread still works */
	assert_int_equal(sim_nic_dma_map(nic, 0x100000, mem, sizeof(mem)), 0);
	volatile uint8_t *bar = sim_nic_bar0(nic);
	put_be32(mem + 4, 0xFFFFFFFFu);
	uint32_t blk[16] = {be32(12), 0, 0, 0, 0, be32(0x100000)};
	for (unsigned i = 0; i < 16; i++)
		*(volatile uint32_t *)(bar + 0xF80000 + 4 * i) = blk[i];
	for (unsigned i = 0; i < 200000 && get_be32(mem + 4) == 0xFFFFFFFFu; i++) {
		struct timespec ts = {0, 50000}; /* up to ~10 s: the thread may be starved */
		nanosleep(&ts, NULL);
	}
	assert_int_equal(get_be32(mem + 4), 0);
	assert_int_equal(get_be32(mem), 512 * 8);
	sim_nic_detach(nic);
	myrio_sim_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(map_rules),
	    cmocka_unit_test(unmapped_rx_buffer_refused),
	    cmocka_unit_test(map_while_thread_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
