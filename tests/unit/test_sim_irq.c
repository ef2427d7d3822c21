/* SPDX-License-Identifier: BSD-3-Clause */
/* Status block and interrupts (§6): valid bits and the rx token, claim0/claim1, deassert,
 * MSI eventfd only when MSI is enabled, coalescing delay, link changes, short host
 * structures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim_harness.h"

static int setup(void **state)
{
	struct hpair *c = h_pair_new("link=unlimited");
	if (!c || h_bringup(&c->a, 126, 2048, 64) || h_bringup(&c->b, 126, 2048, 64))
		return -1;
	myrio_sim_step(c->w, 2);
	/* consume the post-UP stats update on both */
	if (!h_status(&c->a, NULL, NULL) || !h_status(&c->b, NULL, NULL))
		return -1;
	*state = c;
	return 0;
}

static void send_frames(struct hpair *c, unsigned n)
{
	uint8_t f[100];
	for (unsigned i = 0; i < n; i++) {
		h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0800, 64, (uint8_t)i);
		h_send(&c->a, f, 64);
	}
}

static volatile uint8_t *valid_of(struct hnic *h)
{
	return h->mem + H_STATS + 63;
}

static void rx_token_and_claims(void **state)
{
	struct hpair *c = *state;
	send_frames(c, 1);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1); /* receive event, token to the host */
	assert_int_equal(*valid_of(&c->a) & 2, 2); /* send completion */
	/* host: deassert, NIC clears valid; no claims yet */
	h_w32(&c->b, c->b.deassert_off, 0);
	myrio_sim_step(c->w, 1);
	assert_int_equal(*valid_of(&c->b), 0);
	/* more frames while the token is away and the NIC is not armed: completions keep
	 * coming, but no status DMA */
	send_frames(c, 3);
	myrio_sim_step(c->w, 3);
	assert_int_equal(*valid_of(&c->b), 0);
	unsigned got = 0;
	while (h_completion(&c->b, NULL))
		got++;
	assert_int_equal(got, 4);
	/* claim1 alone: armed, but the token is still with the host: no rx event */
	h_w32(&c->b, c->b.claim_off + 4, 3);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b), 0);
	/* claim0 returns the token: completions were written since, so signal again */
	h_w32(&c->b, c->b.claim_off, 3);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
	struct sim_nic_stats st = h_nic_stats(c->b.nic);
	assert_true(st.irqs >= 3);
}

static void msi_eventfd_only_when_enabled(void **state)
{
	struct hpair *c = *state;
	int fd = sim_nic_irq_fd(c->b.nic);
	uint64_t v = 0;
	send_frames(c, 1);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
	assert_int_equal(read(fd, &v, sizeof(v)), -1); /* polled: no syscall, no event */
	/* that update went out as INTx: it waits for its deassert even once MSI is on */
	h_w32(&c->b, c->b.deassert_off, 0);
	myrio_sim_step(c->w, 1);
	sim_cfg_enable_msi(c->b.nic);
	/* MSI: the host clears valid itself, then claims */
	*valid_of(&c->b) = 0;
	h_w32(&c->b, c->b.claim_off, 3);
	h_w32(&c->b, c->b.claim_off + 4, 3);
	send_frames(c, 1);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
	assert_int_equal(read(fd, &v, sizeof(v)), (int)sizeof(v));
	assert_true(v >= 1);
}

/* INTx (MSI off): the line stays asserted and no further update comes until the host writes
 * the deassert word; a claim alone is not enough. INTX_DISABLE keeps the line quiet but the
 * firmware still waits for the deassert. */
static void intx_waits_for_deassert(void **state)
{
	struct hpair *c = *state;
	/* setup consumed the post-UP update with a deassert: nothing pending */
	assert_false(sim_nic_intx_line(c->b.nic));
	send_frames(c, 1);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
	assert_true(sim_nic_intx_line(c->b.nic));
	uint64_t asserts = h_nic_stats(c->b.nic).intx_asserts;
	assert_true(asserts >= 1);
	/* claims without the deassert: the next update is held */
	*valid_of(&c->b) = 0;
	h_w32(&c->b, c->b.claim_off, 3);
	h_w32(&c->b, c->b.claim_off + 4, 3);
	while (h_completion(&c->b, NULL))
		;
	send_frames(c, 1);
	myrio_sim_step(c->w, 4);
	assert_int_equal(*valid_of(&c->b), 0);
	assert_true(sim_nic_intx_line(c->b.nic));
	assert_int_equal(h_nic_stats(c->b.nic).intx_held, 1);
	/* the deassert releases it: the line drops, the held update goes out */
	h_w32(&c->b, c->b.deassert_off, 0);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
	/* with INTX_DISABLE the next one waits just the same, without asserting the line */
	uint32_t cmd;
	assert_int_equal(sim_nic_cfg_read(c->b.nic, 0x04, 2, &cmd), 0);
	assert_int_equal(sim_nic_cfg_write(c->b.nic, 0x04, 2, cmd | 0x400), 0);
	h_w32(&c->b, c->b.deassert_off, 0);
	myrio_sim_step(c->w, 1);
	*valid_of(&c->b) = 0;
	h_w32(&c->b, c->b.claim_off, 3);
	h_w32(&c->b, c->b.claim_off + 4, 3);
	while (h_completion(&c->b, NULL))
		;
	asserts = h_nic_stats(c->b.nic).intx_asserts;
	send_frames(c, 1);
	myrio_sim_step(c->w, 2);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
	assert_false(sim_nic_intx_line(c->b.nic));
	assert_int_equal(h_nic_stats(c->b.nic).intx_asserts, asserts);
}

static void coalescing_delay(void **state)
{
	struct hpair *c = *state;
	h_w32(&c->b, c->b.coal_off, 50); /* µs */
	send_frames(c, 1);
	myrio_sim_step(c->w, 10);
	assert_int_equal(*valid_of(&c->b), 0);
	assert_int_equal(h_completion(&c->b, NULL), 64); /* data is not delayed */
	myrio_sim_step(c->w, 50);
	assert_int_equal(*valid_of(&c->b) & 1, 1);
}

static void link_changes_reported(void **state)
{
	struct hpair *c = *state;
	assert_int_equal(myrio_sim_set_link(c->w, "sim1", false), 0);
	myrio_sim_step(c->w, 2);
	volatile uint8_t *st = c->b.mem + H_STATS;
	assert_int_not_equal(st[63], 0);
	assert_int_not_equal(st[62], 0);
	assert_int_equal(get_be32((const void *)(st + 28)), 0);
	uint32_t link = 9;
	h_status(&c->b, NULL, &link);
	assert_int_equal(link, 0);
	/* frames sent while down are lost */
	send_frames(c, 2);
	myrio_sim_step(c->w, 2);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	assert_int_equal(myrio_sim_set_link(c->w, "sim0", true), 0);
	myrio_sim_step(c->w, 2);
	h_status(&c->b, NULL, &link);
	assert_int_equal(link, 1);
	assert_int_not_equal(myrio_sim_set_link(c->w, "nosuch", true), 0);
}

static void short_host_structure(void **state)
{
	/* SET_STATS_DMA_V2 with a 40-byte structure: the NIC writes the tail, valid last */
	struct hpair *c = *state;
	uint64_t s = h_iova(&c->b, H_STATS);
	memset(c->b.mem + H_STATS, 0xEE, 64);
	assert_int_equal(h_cmd(&c->b, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)s, (uint32_t)(s >> 32), 40, NULL), 0);
	assert_int_equal(myrio_sim_set_link(c->w, "sim1", false), 0);
	myrio_sim_step(c->w, 2);
	uint8_t *st = c->b.mem + H_STATS;
	assert_int_not_equal(st[39], 0);	 /* valid at byte 39 */
	assert_int_equal(get_be32(st + 4), 0);	 /* link_up at 28 - 24 */
	assert_int_equal(get_be32(st + 32), 15); /* rdma_tags at 56 - 24 */
	assert_int_equal(st[40], 0xEE);		 /* nothing beyond the struct */
}

static void send_done_needs_handshake(void **state)
{
	struct hpair *c = *state;
	send_frames(c, 5);
	myrio_sim_step(c->w, 2);
	assert_int_equal(get_be32(c->a.mem + H_STATS + 24), 5);
	send_frames(c, 5);
	myrio_sim_step(c->w, 2);
	/* not re-armed (no claim1): the block still says 5 */
	assert_int_equal(get_be32(c->a.mem + H_STATS + 24), 5);
	assert_int_equal(h_send_done(&c->a, 10), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(rx_token_and_claims, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(msi_eventfd_only_when_enabled, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(intx_waits_for_deassert, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(coalescing_delay, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(link_changes_reported, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(short_host_structure, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(send_done_needs_handshake, setup, h_pair_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
