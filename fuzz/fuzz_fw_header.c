/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the firmware header (§1.5) and EEPROM strings (§1.6) parsers, both on
 * plain bytes (an image file) and as the driver reads them from a NIC's SRAM at probe.
 *
 * Input: one selector byte, then
 *   0: a firmware image file            -> mcp_fw_image_check
 *   1: a header alone                   -> mcp_fw_header_parse
 *   2: an EEPROM string block           -> mcp_eeprom_parse
 *   3: SRAM contents: BE32 header pointer, 192 header bytes, 256 string bytes
 *                                       -> mcp_fw_adopt + mcp_read_eeprom on a fake BAR0
 */
#include <string.h>

#include "bus/bus.h"
#include "fuzz_common.h"
#include "mcp/fw_header.h"
#include "mcp/mcp_abi.h"
#include "mcp/nic.h"
#include "util/byteorder.h"

#define SRAM_LEN 0x200000u

static uint8_t *sram;

/* A firmware that is not there yet is waited for (the boot after a reset): no time passes
 * here, the pointer is read again. */
static void no_delay(struct myrio_bus *bus, unsigned us)
{
	(void)bus;
	(void)us;
}
static const struct myrio_bus_ops sram_ops = {.delay_us = no_delay};

static void fuzz_sram(struct fuzz_in *in)
{
	if (!sram) {
		sram = aligned_alloc(4096, SRAM_LEN);
		if (!sram)
			abort();
	}
	memset(sram, 0, SRAM_LEN);
	struct myrio_bus bus = {.ops = &sram_ops, .bar0 = sram, .bar0_len = SRAM_LEN};
	strcpy(bus.kind, "fuzz");
	strcpy(bus.name, "fuzz0");
	/* Any pointer the device could store; the driver must reject what it cannot use. */
	uint32_t ptr = fuzz_u32(in);
	put_be32(sram + MCP_HEADER_PTR_OFFSET, ptr);
	const uint8_t *hdr, *str;
	size_t hn = fuzz_bytes(in, &hdr, MCP_HDR_FULL_LEN);
	uint32_t hdr_at = ptr % SRAM_LEN;
	if (hdr_at + hn > SRAM_LEN)
		hdr_at = MCP_HEADER_PTR_OFFSET + 4;
	if (hn)
		memcpy(sram + hdr_at, hdr, hn);
	/* Strings where the header says, when that fits, and at the fixed place too. */
	size_t sn = fuzz_bytes(in, &str, MCP_STRING_SPECS_LEN);
	if (sn)
		memcpy(sram + MCP_STRING_SPECS_DEFAULT, str, sn);
	if (hn >= MCP_HDR_OFF_STRING_SPECS + 4) {
		uint32_t at = get_be32(hdr + MCP_HDR_OFF_STRING_SPECS);
		if (at < SRAM_LEN - sn && at >= hdr_at + hn)
			memcpy(sram + at, str, sn);
	}
	struct myri_nic nic;
	memset(&nic, 0, sizeof(nic));
	nic.bus = &bus;
	if (mcp_fw_adopt(&nic) == 0) {
		/* what the driver derives from the header must be sane if accepted */
		if (nic.fw.major != 1 || nic.fw.minor != 4 || nic.fw.mcp_type != MCP_TYPE_ETH ||
		    memchr(nic.fw.version, 0, sizeof(nic.fw.version)) == NULL)
			abort();
	}
	if (mcp_read_eeprom(&nic) == 0) {
		if (memchr(nic.ee.serial, 0, sizeof(nic.ee.serial)) == NULL ||
		    memchr(nic.ee.product, 0, sizeof(nic.ee.product)) == NULL)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		fuzz_quiet();
		init = 1;
	}
	struct fuzz_in in = {data, size};
	uint8_t sel = fuzz_u8(&in);
	/* Exact-size heap copies so that ASan sees any read past the end. */
	uint8_t *copy = malloc(in.n ? in.n : 1);
	if (!copy)
		return 0;
	if (in.n)
		memcpy(copy, in.p, in.n);
	struct mcp_fw_info fw;
	struct mcp_eeprom ee;
	switch (sel & 3) {
	case 0:
		if (mcp_fw_image_check(copy, in.n, 1u << 20, "fuzz", &fw) == 0 &&
		    (fw.header_offset & 3 || fw.header_offset >= in.n))
			abort();
		break;
	case 1:
		if (mcp_fw_header_parse(copy, in.n, "fuzz", &fw) == 0 &&
		    memchr(fw.version, 0, sizeof(fw.version)) == NULL)
			abort();
		break;
	case 2:
		if (mcp_eeprom_parse(copy, in.n, &ee) == 0 &&
		    memchr(ee.serial, 0, sizeof(ee.serial)) == NULL)
			abort();
		break;
	case 3:
		fuzz_sram(&in);
		break;
	}
	free(copy);
	return 0;
}
