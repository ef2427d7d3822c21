/* SPDX-License-Identifier: BSD-3-Clause */
/* The model hosted by a device framework (src/sim/host.h, as in QEMU): a NIC whose DMA
 * goes through the host's map, never through the model's own table; a translation the
 * host withdraws is not used again, not even the interrupt queue's; the host's clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim/host.h"
#include "sim_harness.h"

/* The host's IOMMU for NIC b: its memory at its IOVAs while `mapped`, except for the
 * offsets [deny_lo, deny_hi). */
struct host_iommu {
	struct hnic *h;
	bool mapped;
	uint32_t deny_lo, deny_hi;
	unsigned calls, reads;
};

static uint8_t *host_map(void *opaque, uint64_t iova, uint32_t len, bool write)
{
	struct host_iommu *m = opaque;
	m->calls++;
	m->reads += !write;
	if (!m->mapped || iova < m->h->iova || iova - m->h->iova > H_MEM_LEN - len)
		return NULL;
	uint64_t off = iova - m->h->iova;
	if (off < m->deny_hi && off + len > m->deny_lo)
		return NULL;
	return m->h->mem + off;
}

static void run(struct myrio_sim *w, uint64_t *now, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sim_world_run_at(w, *now += 1000);
}

static void dma_through_the_host_only(void **state)
{
	(void)state;
	struct hpair p;
	assert_int_equal(h_pair_open(&p, "link=unlimited"), 0);
	struct hnic *a = &p.a, *b = &p.b;
	struct host_iommu m = {.h = b, .mapped = true};
	assert_int_equal(sim_nic_dma_unmap(b->nic, b->iova, H_MEM_LEN), 0);
	sim_nic_set_host_dma(b->nic, &(struct sim_host_dma){.map = host_map, .opaque = &m});
	assert_int_equal(h_bringup(a, 126, 2048, 8), 0);
	assert_int_equal(h_bringup(b, 126, 2048, 8), 0); /* responses reach b through the host */
	assert_true(m.calls > 0);

	uint8_t f[100];
	h_frame(f, b->nic->eeprom_mac, h_src_mac, 0x0800, 64, 1);
	uint64_t now = sim_world_now(p.w);
	h_send(a, f, 64);
	run(p.w, &now, 3);
	assert_int_equal(h_completion(b, NULL), 64);
	assert_memory_equal(h_small_buf(b, 0) + 2, f, 64);
	assert_int_equal(m.reads, 0); /* b only received: writes */

	/* b transmits from its memory: read through the host */
	uint8_t g[100];
	h_frame(g, a->nic->eeprom_mac, h_src_mac, 0x0800, 64, 2);
	h_send(b, g, 64);
	run(p.w, &now, 3);
	assert_true(m.reads > 0);
	assert_int_equal(h_completion(a, NULL), 64);
	assert_int_equal(h_nic_stats(b->nic).dma_faults, 0);

	/* The host withdraws the interrupt queue, reached a moment ago: the next frame is
	 * refused and counted, not completed through an old translation. */
	m.deny_lo = H_INTRQ;
	m.deny_hi = H_INTRQ + 4096;
	unsigned calls = m.calls;
	f[20] ^= 0xff;
	h_send(a, f, 64);
	run(p.w, &now, 3);
	assert_true(m.calls > calls);
	assert_int_equal(h_completion(b, NULL), 0);
	assert_memory_not_equal(h_small_buf(b, 1) + 2, f, 64);
	assert_true(h_nic_stats(b->nic).dma_faults >= 1);

	/* All of it withdrawn: the frame is refused before it touches memory. */
	m.mapped = false;
	f[20] ^= 0x0f;
	h_send(a, f, 64);
	run(p.w, &now, 3);
	assert_memory_not_equal(h_small_buf(b, 2) + 2, f, 64);

	/* Back to the table alone: the host is asked nothing more. */
	sim_nic_set_host_dma(b->nic, NULL);
	m.mapped = true;
	m.deny_hi = 0;
	calls = m.calls;
	h_send(a, f, 64);
	run(p.w, &now, 3);
	assert_int_equal(m.calls, calls);
	assert_memory_not_equal(h_small_buf(b, 3) + 2, f, 64);
	h_pair_close(&p);
}

static void directions(void **state)
{
	(void)state;
	assert_true(sim_host_dma_reads("tx buffer"));
	assert_true(sim_host_dma_reads("tx buffer (TSO)"));
	assert_true(sim_host_dma_reads("dummy RDMA read"));
	assert_false(sim_host_dma_reads("rx small buffer"));
	assert_false(sim_host_dma_reads("completion ring"));
	assert_false(sim_host_dma_reads("dummy RDMA confirm"));
}

static void host_clock_drives_the_world(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world(NULL);
	sim_world_run_at(w, 5000000);
	assert_int_equal(sim_world_now(w), 5000000);
	sim_world_run_at(w, 4000000); /* never backwards */
	assert_int_equal(sim_world_now(w), 5000000);
	myrio_sim_destroy(w);
}

static void command_stores_are_urgent(void **state)
{
	(void)state;
	assert_true(sim_bar0_store_is_urgent(MCP_CMD_OFFSET));
	assert_true(sim_bar0_store_is_urgent(MCP_CMD_OFFSET + 60));
	assert_false(sim_bar0_store_is_urgent(MCP_CMD_OFFSET + 64));
	assert_false(sim_bar0_store_is_urgent(MCP_CMD_OFFSET - 4));
	assert_false(sim_bar0_store_is_urgent(MCP_FW_STAGING_OFFSET));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(dma_through_the_host_only),
	    cmocka_unit_test(directions),
	    cmocka_unit_test(host_clock_drives_the_world),
	    cmocka_unit_test(command_stores_are_urgent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
