/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware header (§1.5), image checks (§2.2), EEPROM strings (§1.6) and CRC-32. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "mcp/fw_header.h"
#include "mcp/mcp_abi.h"
#include "util/byteorder.h"

static void make_header(uint8_t *h, const char *version, uint32_t type)
{
	memset(h, 0, MCP_HDR_FULL_LEN);
	put_be32(h + MCP_HDR_OFF_LENGTH, MCP_HDR_FULL_LEN);
	put_be32(h + MCP_HDR_OFF_TYPE, type);
	strcpy((char *)h + MCP_HDR_OFF_VERSION, version);
	put_be32(h + MCP_HDR_OFF_SRAM_SIZE, MCP_SRAM_SIZE_DEFAULT);
	put_be32(h + MCP_HDR_OFF_STRING_SPECS, MCP_STRING_SPECS_DEFAULT);
	put_be32(h + MCP_HDR_OFF_STRING_SPECS_LEN, 256);
	put_be16(h + MCP_HDR_OFF_HANDOFF_ID_MAJOR, 7);
	put_be16(h + MCP_HDR_OFF_HANDOFF_ID_CAPS, 0x31);
}

static void good_header_parses(void **state)
{
	(void)state;
	uint8_t h[MCP_HDR_FULL_LEN];
	struct mcp_fw_info fw;
	make_header(h, "1.4.57 -- 2013/05/03", MCP_TYPE_ETH);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), 0);
	assert_int_equal(fw.major, 1);
	assert_int_equal(fw.minor, 4);
	assert_int_equal(fw.tiny, 57);
	assert_string_equal(fw.version, "1.4.57 -- 2013/05/03");
	assert_int_equal(fw.string_specs, MCP_STRING_SPECS_DEFAULT);
	assert_int_equal(fw.string_specs_len, 256);
	assert_int_equal(fw.sram_size, MCP_SRAM_SIZE_DEFAULT);
	assert_int_equal(fw.handoff_id_major, 7);
	assert_int_equal(fw.handoff_id_caps, 0x31);
}

static void short_header_has_no_handoff_ids(void **state)
{
	(void)state;
	uint8_t h[MCP_HDR_FULL_LEN];
	struct mcp_fw_info fw;
	make_header(h, "1.4.30", MCP_TYPE_ETH);
	put_be32(h + MCP_HDR_OFF_LENGTH, MCP_HDR_MIN_LEN);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), 0);
	assert_int_equal(fw.handoff_id_major, 0);
	assert_int_equal(fw.tiny, 30);
}

static void wrong_type_or_version_refused(void **state)
{
	(void)state;
	uint8_t h[MCP_HDR_FULL_LEN];
	struct mcp_fw_info fw;
	make_header(h, "1.4.57", 0x4d582020 /* "MX  " */);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), -EPROTO);
	make_header(h, "1.5.1", MCP_TYPE_ETH);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), -EPROTO);
	make_header(h, "2.4.1", MCP_TYPE_ETH);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), -EPROTO);
}

static void corrupted_headers_refused(void **state)
{
	(void)state;
	uint8_t h[MCP_HDR_FULL_LEN];
	struct mcp_fw_info fw;
	const char *bad[] = {"", "x.4.1", "1.4", "1.4.", "1..4", "1-4-1", "1.4.99999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		make_header(h, bad[i], MCP_TYPE_ETH);
		assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), -EINVAL);
	}
	/* No NUL inside the 128 version bytes: the copy stays bounded. */
	make_header(h, "1.4.1", MCP_TYPE_ETH);
	memset(h + MCP_HDR_OFF_VERSION + 5, 'x', 123);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), 0);
	assert_int_equal(strlen(fw.version), 127);
	/* header_length too small or absurd */
	make_header(h, "1.4.1", MCP_TYPE_ETH);
	put_be32(h, 100);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), -EINVAL);
	put_be32(h, 0xffffffff);
	assert_int_equal(mcp_fw_header_parse(h, sizeof(h), "t", &fw), -EINVAL);
	/* truncated buffer */
	make_header(h, "1.4.1", MCP_TYPE_ETH);
	assert_int_equal(mcp_fw_header_parse(h, 100, "t", &fw), -EINVAL);
}

static void image_checks(void **state)
{
	(void)state;
	static uint8_t img[4096];
	struct mcp_fw_info fw;
	memset(img, 0xa5, sizeof(img));
	put_be32(img + MCP_HEADER_PTR_OFFSET, 0x200);
	make_header(img + 0x200, "1.4.57", MCP_TYPE_ETH);
	assert_int_equal(mcp_fw_image_check(img, sizeof(img), 0xdff00, "img", &fw), 0);
	assert_int_equal(fw.header_offset, 0x200);
	/* too large for the staging area, too small */
	assert_int_equal(mcp_fw_image_check(img, sizeof(img), 4096, "img", &fw), -EINVAL);
	assert_int_equal(mcp_fw_image_check(img, 0x3f, 0xdff00, "img", &fw), -EINVAL);
	/* header pointer unaligned, beyond the image, header cut by the end */
	put_be32(img + MCP_HEADER_PTR_OFFSET, 0x202);
	assert_int_equal(mcp_fw_image_check(img, sizeof(img), 0xdff00, "img", &fw), -EINVAL);
	put_be32(img + MCP_HEADER_PTR_OFFSET, 0x10000);
	assert_int_equal(mcp_fw_image_check(img, sizeof(img), 0xdff00, "img", &fw), -EINVAL);
	put_be32(img + MCP_HEADER_PTR_OFFSET, 4096 - 64);
	assert_int_equal(mcp_fw_image_check(img, sizeof(img), 0xdff00, "img", &fw), -EINVAL);
	/* corrupted type inside an image */
	put_be32(img + MCP_HEADER_PTR_OFFSET, 0x200);
	img[0x204] ^= 0xff;
	assert_int_equal(mcp_fw_image_check(img, sizeof(img), 0xdff00, "img", &fw), -EPROTO);
}

static size_t put_strings(uint8_t *buf, const char *const *s, size_t n)
{
	size_t at = 0;
	memset(buf, 0, 256);
	for (size_t i = 0; i < n; i++) {
		strcpy((char *)buf + at, s[i]);
		at += strlen(s[i]) + 1;
	}
	return at;
}

static void eeprom_strings_parse(void **state)
{
	(void)state;
	uint8_t buf[256];
	struct mcp_eeprom ee;
	const char *s[] = {"PT:10G-PCIE", "MAC=00:60:dd:47:E5:31", "SN=123456",
			   "PC=10G-PCIE-8B-S"};
	put_strings(buf, s, 4);
	assert_int_equal(mcp_eeprom_parse(buf, sizeof(buf), &ee), 0);
	const uint8_t mac[6] = {0x00, 0x60, 0xdd, 0x47, 0xe5, 0x31};
	assert_memory_equal(ee.mac, mac, 6);
	assert_string_equal(ee.serial, "123456");
	assert_string_equal(ee.product, "10G-PCIE-8B-S");
	/* SN2 overrides SN, in either order */
	const char *s2[] = {"SN2=987", "MAC=00:60:dd:00:00:01", "SN=1"};
	put_strings(buf, s2, 3);
	assert_int_equal(mcp_eeprom_parse(buf, sizeof(buf), &ee), 0);
	assert_string_equal(ee.serial, "987");
}

static void eeprom_bad_strings_refused(void **state)
{
	(void)state;
	uint8_t buf[256];
	struct mcp_eeprom ee;
	const char *nomac[] = {"SN=1", "PC=x"};
	put_strings(buf, nomac, 2);
	assert_int_equal(mcp_eeprom_parse(buf, sizeof(buf), &ee), -EINVAL);
	const char *bad[] = {"MAC=00:60:dd:47:e5", "MAC=0:60:dd:47:e5:31", "MAC=00:60:dd:47:e5:3g",
			     "MAC=00-60-dd-47-e5-31", "MAC=00:60:dd:47:e5:311"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_strings(buf, &bad[i], 1);
		assert_int_equal(mcp_eeprom_parse(buf, sizeof(buf), &ee), -EINVAL);
	}
	/* No terminator anywhere: the parser stops at the block's end. */
	memset(buf, 'A', sizeof(buf));
	assert_int_equal(mcp_eeprom_parse(buf, sizeof(buf), &ee), -EINVAL);
	/* A MAC in the last two bytes is cut off like the drivers do (254 bytes kept). */
	memset(buf, 0, sizeof(buf));
	memset(buf, 'x', 233);
	memcpy(buf + 234, "MAC=00:60:dd:47:e5:31", 21);
	assert_int_equal(mcp_eeprom_parse(buf, sizeof(buf), &ee), -EINVAL);
}

static void crc32_known_values(void **state)
{
	(void)state;
	assert_int_equal(mcp_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(mcp_crc32(0, "", 0), 0);
	/* incremental equals one shot */
	uint32_t c = mcp_crc32(0, "1234", 4);
	assert_int_equal(mcp_crc32(c, "56789", 5), 0xcbf43926u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_header_parses),
		cmocka_unit_test(short_header_has_no_handoff_ids),
		cmocka_unit_test(wrong_type_or_version_refused),
		cmocka_unit_test(corrupted_headers_refused),
		cmocka_unit_test(image_checks),
		cmocka_unit_test(eeprom_strings_parse),
		cmocka_unit_test(eeprom_bad_strings_refused),
		cmocka_unit_test(crc32_known_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
