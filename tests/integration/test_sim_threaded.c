/* SPDX-License-Identifier: BSD-3-Clause */
/* The model on its own thread: the test plays both drivers from the main thread, frames
 * flow without loss and in order under flow control, DMA registration and detach while
 * traffic runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "../unit/sim_harness.h"

/* A world from spec with the model on its own thread, both NICs up: a sends, b has 512
 * small buffers posted. */
static struct myrio_sim *threaded_pair(const char *spec, struct hnic *a, struct hnic *b)
{
	struct myrio_sim_conf c;
	myrio_sim_conf_init(&c);
	assert_int_equal(myrio_sim_conf_parse(&c, spec), 0);
	struct myrio_sim *w;
	assert_int_equal(myrio_sim_create(&w, &c), 0);
	assert_int_equal(h_init(a, w, 0), 0);
	assert_int_equal(h_init(b, w, 1), 0);
	assert_int_equal(h_bringup(a, 126, 2048, 0), 0);
	assert_int_equal(h_bringup(b, 126, 2048, 512), 0);
	return w;
}

static void traffic_in_order_without_loss(void **state)
{
	(void)state;
	static struct hnic a, b;
	struct myrio_sim *w = threaded_pair("link=unlimited", &a, &b);
	assert_int_equal(h_cmd(&a, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0); /* flow control both ends */
	assert_int_equal(h_cmd(&b, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0);
	const uint32_t total = 200000;
	uint32_t sent = 0, done = 0, got = 0;
	uint8_t f[64];
	h_frame(f, b.nic->eeprom_mac, h_src_mac, 0x88b5, 64, 0);
	unsigned idle = 0; /* yields without progress: ~10 s even on a loaded machine */
	while (got < total && idle < 2000000) {
		uint32_t v;
		if (h_status(&a, &v, NULL))
			done = v;
		while (sent < total && sent - done < 512) {
			put_be32(f + 14, sent++);
			h_send(&a, f, 64);
		}
		uint32_t len;
		bool any = false;
		while ((len = h_completion(&b, NULL)) != 0) {
			assert_int_equal(len, 64);
			uint32_t seq = get_be32(h_small_buf(&b, b.small_prod - 512) + 2 + 14);
			assert_int_equal(seq, got);
			h_post_small(&b, 1);
			got++;
			any = true;
		}
		if (any) {
			idle = 0;
		} else {
			idle++;
			sched_yield();
		}
	}
	if (got != total)
		print_message(
		    "stall: sent %u done %u got %u | a: armed %d send_pending %d "
		    "pending %d tx_cons %u send_done %u paused %d valid %u | b: small cons "
		    "%u prod %u running %d\n",
		    sent, done, got, a.nic->sl[0].armed, a.nic->sl[0].send_pending, a.nic->sl[0].pending,
		    a.nic->sl[0].tx_cons, a.nic->sl[0].send_done, a.nic->paused, a.mem[H_STATS + 63],
		    b.nic->sl[0].small.cons, b.small_prod, b.nic->running);
	assert_int_equal(got, total);
	struct sim_counters k = h_nic_counters(b.nic);
	assert_int_equal(k.dropped_no_small_buffer, 0);
	h_fini(&a);
	h_fini(&b);
	myrio_sim_destroy(w);
}

static void detach_and_remap_under_traffic(void **state)
{
	(void)state;
	static struct hnic a, b;
	struct myrio_sim *w = threaded_pair("link=10g", &a, &b);
	uint8_t f[64];
	h_frame(f, b.nic->eeprom_mac, h_src_mac, 0x88b5, 64, 0);
	for (unsigned round = 0; round < 20; round++) {
		for (unsigned i = 0; i < 200; i++)
			h_send(&a, f, 64);
		/* the receiver's memory goes away while frames are in flight: the model must
		 * stop touching it before unmap returns (ASan would catch a late write) */
		assert_int_equal(sim_nic_dma_unmap(b.nic, b.iova, H_MEM_LEN), 0);
		uint8_t *fresh = aligned_alloc(4096, H_MEM_LEN);
		memcpy(fresh, b.mem, H_MEM_LEN);
		free(b.mem);
		b.mem = fresh;
		assert_int_equal(sim_nic_dma_map(b.nic, b.iova, b.mem, H_MEM_LEN), 0);
		h_tick(w, 100);
	}
	/* the sender's driver goes away mid-stream; the NIC returns to power-on */
	sim_nic_detach(a.nic);
	free(a.mem);
	a.mem = NULL;
	a.nic = NULL;
	h_fini(&b);
	myrio_sim_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(traffic_in_order_without_loss),
	    cmocka_unit_test(detach_and_remap_under_traffic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
