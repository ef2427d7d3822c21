/* SPDX-License-Identifier: BSD-3-Clause */
/* A driver gone mad: random commands with random arguments, random descriptors in every
 * ring, random claim/deassert/handoff stores. The model must never crash, never touch
 * memory outside the registered ranges (AddressSanitizer watches), and still answer a
 * sane driver afterwards. Seeded, so a failure repeats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim/nic.h"
#include "sim_harness.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Mostly addresses inside or near the registered memory, sometimes anything. */
static uint64_t rnd_addr(struct hnic *h, uint64_t *s)
{
	uint64_t r = rng(s);
	switch (r % 4) {
	case 0:
		return h->iova + (rng(s) % H_MEM_LEN);
	case 1:
		return h->iova + H_MEM_LEN - (rng(s) % 64);
	case 2:
		return h->iova - (rng(s) % 4096);
	default:
		return rng(s);
	}
}

static void garbage(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world("link=unlimited,seed=3,dup=0.1,reorder=0.1,corrupt=0.1");
	assert_non_null(w);
	struct hnic a, b;
	assert_int_equal(h_init(&a, w, 0), 0);
	assert_int_equal(h_init(&b, w, 1), 0);
	uint64_t s = 0x9E3779B97F4A7C15ull;
	for (unsigned round = 0; round < 3; round++) {
		assert_int_equal(h_bringup(&a, 126, 2048, 256), 0);
		assert_int_equal(h_bringup(&b, 126, 2048, 256), 0);
		for (unsigned i = 0; i < 20000; i++) {
			struct hnic *h = (rng(&s) & 1) ? &a : &b;
			uint64_t ad = rnd_addr(h, &s);
			switch (rng(&s) % 8) {
			case 0: { /* a command with random arguments (not RESET, not DOWN) */
				uint32_t op = (uint32_t)(rng(&s) % 70);
				if (op == 1 || op == 15 || op == 3 || op == 31 || op == 19)
					op = 12;
				(void)h_cmd(h, op, (uint32_t)rng(&s), (uint32_t)rng(&s),
					    (uint32_t)rng(&s), NULL);
				break;
			}
			case 1:
			case 2: { /* a random send descriptor, committed */
				uint32_t slot = (uint32_t)rng(&s) % h->tx_entries;
				uint32_t off = h->send_off + slot * 16;
				h_w32(h, off, (uint32_t)(ad >> 32));
				h_w32(h, off + 4, (uint32_t)ad);
				h_w32(h, off + 8, (uint32_t)rng(&s));
				h_w32(h, off + 12, (uint32_t)rng(&s) | 1);
				break;
			}
			case 3: { /* a random rx descriptor */
				uint32_t slot = (uint32_t)rng(&s) % h->rx_entries;
				uint32_t off =
				    ((rng(&s) & 1) ? h->small_off : h->big_off) + slot * 8;
				h_w32(h, off, (uint32_t)(ad >> 32));
				h_w32(h, off + 4, (uint32_t)ad);
				break;
			}
			case 4: /* claims, deassert, coalescing */
				h_w32(h, h->claim_off + 4 * (uint32_t)(rng(&s) % 2), 3);
				h_w32(h, h->deassert_off, 0);
				h_w32(h, h->coal_off, (uint32_t)(rng(&s) % 3));
				break;
			case 5: /* a handoff or dummy-RDMA block full of garbage */
				for (unsigned k = 0; k < 16; k++)
					h_w32(h, ((rng(&s) & 1) ? 0xFC0000 : 0xFC01C0) + 4 * k,
					      (uint32_t)rng(&s));
				break;
			case 6: { /* a sane frame, so the rx path runs too */
				uint8_t f[200];
				struct hnic *o = h == &a ? &b : &a;
				h_frame(f, o->nic->eeprom_mac, h->nic->eeprom_mac, 0x0800,
					60 + (uint32_t)(rng(&s) % 140), 1);
				h_send(h, f, 60 + (uint16_t)(rng(&s) % 140));
				break;
			}
			default:
				myrio_sim_step(w, 1 + (unsigned)(rng(&s) % 4));
				(void)h_completion(&a, NULL);
				(void)h_completion(&b, NULL);
			}
		}
		myrio_sim_step(w, 100);
	}
	/* still a working NIC for a sane driver */
	assert_int_equal(h_bringup(&a, 126, 2048, 8), 0);
	assert_int_equal(h_bringup(&b, 126, 2048, 8), 0);
	uint8_t f[64];
	h_frame(f, b.nic->eeprom_mac, a.nic->eeprom_mac, 0x0800, 64, 1);
	for (unsigned i = 0; i < 8; i++)
		h_send(&a, f, 64);
	myrio_sim_step(w, 2000); /* the cable's faults are still on: reorder holds 1 ms */
	unsigned got = 0;
	while (h_completion(&b, NULL))
		got++;
	assert_true(got >= 4);
	struct sim_nic_stats st = h_nic_stats(a.nic);
	print_message("garbage: %lu invalid chains, %lu DMA faults refused, %lu commands\n",
		      (unsigned long)st.tx_invalid, (unsigned long)st.dma_faults,
		      (unsigned long)st.cmds);
	assert_true(st.tx_invalid > 100 && st.dma_faults > 10);
	h_fini(&a);
	h_fini(&b);
	myrio_sim_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(garbage)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
