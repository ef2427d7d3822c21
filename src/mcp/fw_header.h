/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware header (§1.5) and EEPROM strings (§1.6): parsing and checks, on plain bytes so
 * the same code reads an image file and a copy of the NIC's SRAM. */
#ifndef MYRIO_MCP_FW_HEADER_H
#define MYRIO_MCP_FW_HEADER_H

#include <stddef.h>
#include <stdint.h>

struct mcp_fw_info {
	uint32_t header_offset;
	uint32_t header_length;
	uint32_t mcp_type;
	char version[128];
	unsigned major, minor, tiny;
	uint32_t sram_size;
	uint32_t string_specs;
	uint32_t string_specs_len;
	uint16_t handoff_id_major, handoff_id_caps; /* 0 when the header is too short */
};

/* Parses and checks the header at hdr (len bytes available there): type "ETH ", version
 * 1.4.x, a header length covering the mandatory fields. Returns 0 or -EINVAL/-EPROTO with
 * a message naming what (src describes where the header came from). */
int mcp_fw_header_parse(const uint8_t *hdr, size_t len, const char *src, struct mcp_fw_info *out);

/* Checks a whole firmware image (§2.2 step 1): size, header pointer at 0x3C, header. */
int mcp_fw_image_check(const uint8_t *img, size_t len, uint32_t max_len, const char *src,
		       struct mcp_fw_info *out);

struct mcp_eeprom {
	uint8_t mac[6];
	char serial[32];  /* SN2= if present, else SN= */
	char product[32]; /* PC= */
};

/* Parses the 256-byte string block (§1.6): NUL-terminated KEY=value strings ended by an
 * empty one. MAC= is mandatory and must be six 2-digit hex bytes. */
int mcp_eeprom_parse(const uint8_t *strings, size_t len, struct mcp_eeprom *out);

uint32_t mcp_crc32(uint32_t crc, const void *buf, size_t len);

#endif
