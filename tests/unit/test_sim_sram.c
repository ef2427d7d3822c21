/* SPDX-License-Identifier: BSD-3-Clause */
/* Power-on BAR0 contents (§1.5, §1.6), staging read-back (§2.2), config space (§1.1,
 * §1.7), the spec string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim/fw_image.h"
#include "sim_harness.h"

static void header_and_strings(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world("nics=3");
	assert_non_null(w);
	char macs[3][32];
	for (unsigned n = 0; n < 3; n++) {
		struct sim_nic *nic = sim_world_nic(w, n);
		volatile uint8_t *bar = sim_nic_bar0(nic);
		assert_int_equal(sim_nic_bar0_len(nic), 16u << 20);
		uint32_t hp = get_be32((const void *)(bar + 0x3C));
		assert_int_equal(hp & 3, 0);
		assert_true(hp < 0x100000);
		const uint8_t *hd = (const uint8_t *)bar + hp;
		assert_int_equal(get_be32(hd + 0), 192);
		assert_int_equal(get_be32(hd + 4), 0x45544820);
		assert_string_equal((const char *)hd + 8, "1.4.57 -- libmyrio model");
		assert_int_equal(get_be32(hd + 140), 0x1DFF00);
		assert_int_equal(get_be32(hd + 144), 0x1DFE00);
		assert_int_equal(get_be32(hd + 148), 256);
		assert_int_equal(get_be16(hd + 164), 1);
		assert_int_equal(get_be32(hd + 184), get_be32(hd + 188));
		const char *s = (const char *)bar + 0x1DFE00;
		assert_memory_equal(s, "MAC=00:60:dd:", 13);
		assert_int_equal(strlen(s), 21);
		snprintf(macs[n], sizeof(macs[n]), "%s", s);
		s += strlen(s) + 1;
		assert_memory_equal(s, "SN=", 3);
		s += strlen(s) + 1;
		assert_string_equal(s, "PC=10G-PCIE-8B-S");
		s += strlen(s) + 1;
		assert_int_equal(*s, 0);
	}
	assert_string_not_equal(macs[0], macs[1]);
	assert_string_not_equal(macs[1], macs[2]);
	myrio_sim_destroy(w);
}

static void staging_reads_back(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world(NULL);
	struct sim_nic *nic = sim_world_nic(w, 0);
	volatile uint8_t *bar = sim_nic_bar0(nic);
	for (uint32_t i = 0; i < 65536; i += 8)
		*(volatile uint64_t *)(bar + 0x100000 + i) = 0x0123456789abcdefull * (i + 1);
	myrio_sim_step(w, 10);
	for (uint32_t i = 0; i < 65536; i += 8)
		assert_true(*(volatile uint64_t *)(bar + 0x100000 + i) ==
			    0x0123456789abcdefull * (i + 1));
	myrio_sim_destroy(w);
}

static void config_space(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world(NULL);
	struct sim_nic *nic = sim_world_nic(w, 0);
	uint32_t v;
	assert_int_equal(sim_nic_cfg_read(nic, 0, 4, &v), 0);
	assert_int_equal(v, 0x000814C1);
	assert_int_equal(sim_nic_cfg_read(nic, 8, 4, &v), 0);
	assert_int_equal(v >> 8, 0x020000);
	/* walk the capability list to the vendor-specific one (ID 9) */
	assert_int_equal(sim_nic_cfg_read(nic, 0x34, 1, &v), 0);
	unsigned cap = v, vs = 0, pcie = 0;
	while (cap) {
		uint32_t id, next;
		sim_nic_cfg_read(nic, cap, 1, &id);
		sim_nic_cfg_read(nic, cap + 1, 1, &next);
		if (id == 9)
			vs = cap;
		if (id == 0x10)
			pcie = cap;
		cap = next;
	}
	assert_true(vs && pcie);
	sim_nic_cfg_read(nic, pcie + 0x12, 2, &v);
	assert_int_equal((v >> 4) & 0x3F, 8);
	/* MRRS writable */
	sim_nic_cfg_read(nic, pcie + 8, 2, &v);
	sim_nic_cfg_write(nic, pcie + 8, 2, (v & ~0x7000u) | (5u << 12));
	sim_nic_cfg_read(nic, pcie + 8, 2, &v);
	assert_int_equal((v >> 12) & 7, 5);
	/* LOCATE(3) then READ32 of the strings, as iPXE reads the MAC (§1.7) */
	sim_nic_cfg_write(nic, vs + 0x10, 1, 0x08);
	sim_nic_cfg_write(nic, vs + 0x18, 4, 3);
	sim_nic_cfg_read(nic, vs + 0x18, 4, &v);
	assert_int_equal(v, 0x1DFE00);
	sim_nic_cfg_read(nic, vs + 0x14, 4, &v);
	assert_int_equal(v, 256);
	sim_nic_cfg_write(nic, vs + 0x10, 1, 0x03);
	sim_nic_cfg_write(nic, vs + 0x18, 4, 0x1DFE00);
	sim_nic_cfg_read(nic, vs + 0x14, 4, &v);
	assert_int_equal(v, 0x4D41433D); /* "MAC=" */
	sim_nic_cfg_write(nic, vs + 0x18, 4, 0xFFFFFFF0u);
	assert_int_equal(sim_nic_cfg_read(nic, vs + 0x14, 4, &v), 0);
	/* bus master bit writable, cleared by a reboot */
	sim_nic_cfg_write(nic, 4, 2, 0x0406);
	sim_nic_cfg_read(nic, 4, 2, &v);
	assert_int_equal(v, 0x0406);
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REBOOT, 0), 0);
	sim_nic_cfg_read(nic, 4, 2, &v);
	assert_int_equal(v & 4, 0);
	assert_int_not_equal(sim_nic_cfg_read(nic, 3, 2, &v), 0);
	myrio_sim_destroy(w);
}

static void conf_strings(void **state)
{
	(void)state;
	struct myrio_sim_conf c;
	myrio_sim_conf_init(&c);
	assert_int_equal(c.nics, 2);
	assert_true(c.link_bps == 10000000000ull);
	assert_int_equal(myrio_sim_conf_parse(&c, "nics=4,link=1g,stepped,seed=7,loss=0.5,"
						  "reorder=0.1,dup=0.2,corrupt=0.3,flap=100/10,"
						  "rx_ring=256,tx_ring=2048,pc=10G-PCIE2-8B2-2S"),
			 0);
	assert_int_equal(c.nics, 4);
	assert_true(c.link_bps == 1000000000ull);
	assert_true(c.stepped);
	assert_true(c.seed == 7);
	assert_true(c.faults.loss == 0.5 && c.faults.duplicate == 0.2);
	assert_int_equal(c.faults.flap_period_ms, 100);
	assert_int_equal(c.faults.flap_down_ms, 10);
	assert_int_equal(c.rx_ring_entries, 256);
	assert_int_equal(c.tx_ring_entries, 2048);
	assert_string_equal(c.product_code, "10G-PCIE2-8B2-2S");
	assert_int_equal(myrio_sim_conf_parse(&c, "link=unlimited"), 0);
	assert_true(c.link_bps == 0);
	assert_int_equal(myrio_sim_conf_parse(&c, "link=2500000000"), 0);
	assert_true(c.link_bps == 2500000000ull);
	assert_int_not_equal(myrio_sim_conf_parse(&c, "rx_ring=100"), 0);
	assert_int_not_equal(myrio_sim_conf_parse(&c, "loss=2"), 0);
	assert_int_not_equal(myrio_sim_conf_parse(&c, "bogus=1"), 0);
	assert_int_not_equal(myrio_sim_conf_parse(&c, "flap=10/20"), 0);
}

static void image_builder(void **state)
{
	(void)state;
	static uint8_t buf[64 * 1024];
	size_t len;
	struct sim_fw_info info;
	char why[96];
	assert_int_equal(sim_fw_image_build(buf, sizeof(buf), "rss_ethp@1.4.30", &len), 0);
	assert_int_equal(sim_fw_parse(buf, len, &info, why, sizeof(why)), 0);
	assert_int_equal(info.tiny, 30);
	assert_true(info.model);
	assert_true(info.features & FW_FEAT_UNALIGNED);
	assert_true(info.features & FW_FEAT_RSS);
	assert_int_equal(sim_fw_image_build(buf, sizeof(buf), "nonsense", &len), -EINVAL);
	assert_int_equal(sim_fw_image_build(buf, 100, "eth", &len), -ENOSPC);
	assert_int_equal(sim_fw_image_build(buf, sizeof(buf), "eth@2.0.1", &len), 0);
	assert_int_not_equal(sim_fw_parse(buf, len, &info, why, sizeof(why)), 0);
}

/* Each capability's length as Linux's vfio-pci reckons it (vfio_cap_len): a PCIe
 * capability of version 2 is 60 bytes long, one of version 1 (an endpoint) 20. vfio-pci
 * warns "PCI config conflict" where two overlap (found by the QEMU guest). */
static void capabilities_do_not_overlap(void **state)
{
	(void)state;
	struct myrio_sim *w = h_world(NULL);
	struct sim_nic *nic = sim_world_nic(w, 0);
	uint8_t owner[256] = {0};
	uint32_t cap;
	sim_nic_cfg_read(nic, 0x34, 1, &cap);
	while (cap) {
		uint32_t id, next, flags, len = 0;
		sim_nic_cfg_read(nic, cap, 1, &id);
		sim_nic_cfg_read(nic, cap + 1, 1, &next);
		sim_nic_cfg_read(nic, cap + 2, 2, &flags);
		switch (id) {
		case 0x01:
			len = 8;
			break;
		case 0x05:
			len = (flags & 0x80) ? 14 : 10;
			break;
		case 0x10:
			len = (flags & 0xF) >= 2 ? 60 : 20;
			break;
		case 0x11:
			len = 12;
			break;
		case 0x09:
			len = flags & 0xFF;
			break;
		}
		assert_true(len > 0 && cap + len <= 256);
		for (uint32_t i = cap; i < cap + len; i++) {
			assert_int_equal(owner[i], 0);
			owner[i] = (uint8_t)id;
		}
		cap = next;
	}
	myrio_sim_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(header_and_strings), cmocka_unit_test(staging_reads_back),
	    cmocka_unit_test(config_space),	  cmocka_unit_test(conf_strings),
	    cmocka_unit_test(image_builder),	  cmocka_unit_test(capabilities_do_not_overlap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
