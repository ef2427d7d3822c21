/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware header and EEPROM string parsing (§1.5, §1.6). Nothing here is trusted: the bytes
 * come from a file or from the NIC. */
#include "mcp/fw_header.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_abi.h"
#include "util/byteorder.h"
#include "util/log.h"

int mcp_fw_header_parse(const uint8_t *hdr, size_t len, const char *src, struct mcp_fw_info *out)
{
	memset(out, 0, sizeof(*out));
	if (len < MCP_HDR_MIN_LEN) {
		log_err("%s: firmware header truncated (%zu bytes, need %u)", src, len,
			MCP_HDR_MIN_LEN);
		return -EINVAL;
	}
	out->header_length = get_be32(hdr + MCP_HDR_OFF_LENGTH);
	out->mcp_type = get_be32(hdr + MCP_HDR_OFF_TYPE);
	if (out->header_length < MCP_HDR_MIN_LEN || out->header_length > 4096) {
		log_err("%s: corrupted firmware header: header_length %u (expected %u..4096)", src,
			out->header_length, MCP_HDR_MIN_LEN);
		return -EINVAL;
	}
	if (out->mcp_type != MCP_TYPE_ETH) {
		log_err("%s: firmware type 0x%08x is not an Ethernet MCP (\"ETH \"); load a "
			"myri10ge_eth*_z8e.dat image",
			src, out->mcp_type);
		return -EPROTO;
	}
	memcpy(out->version, hdr + MCP_HDR_OFF_VERSION, sizeof(out->version) - 1);
	out->version[sizeof(out->version) - 1] = '\0';
	char *end;
	const char *p = out->version;
	unsigned long v[3];
	for (int i = 0; i < 3; i++) {
		if (*p < '0' || *p > '9')
			goto bad_version;
		v[i] = strtoul(p, &end, 10);
		if (end == p || v[i] > 0xffff || (i < 2 && *end != '.'))
			goto bad_version;
		p = end + 1;
	}
	out->major = (unsigned)v[0];
	out->minor = (unsigned)v[1];
	out->tiny = (unsigned)v[2];
	if (out->major != 1 || out->minor != 4) {
		log_err("%s: firmware version %s is not 1.4.x, the only ABI this driver speaks; "
			"use a 1.4.x image",
			src, out->version);
		return -EPROTO;
	}
	out->sram_size = get_be32(hdr + MCP_HDR_OFF_SRAM_SIZE);
	out->string_specs = get_be32(hdr + MCP_HDR_OFF_STRING_SPECS);
	out->string_specs_len = get_be32(hdr + MCP_HDR_OFF_STRING_SPECS_LEN);
	if (out->header_length >= MCP_HDR_OFF_HANDOFF_ID_CAPS + 2 &&
	    len >= MCP_HDR_OFF_HANDOFF_ID_CAPS + 2) {
		out->handoff_id_major = get_be16(hdr + MCP_HDR_OFF_HANDOFF_ID_MAJOR);
		out->handoff_id_caps = get_be16(hdr + MCP_HDR_OFF_HANDOFF_ID_CAPS);
	}
	return 0;
bad_version:
	log_err("%s: corrupted firmware header: version string \"%.32s\" is not major.minor.tiny",
		src, out->version);
	return -EINVAL;
}

int mcp_fw_image_check(const uint8_t *img, size_t len, uint32_t max_len, const char *src,
		       struct mcp_fw_info *out)
{
	if (len < 0x40 || len >= max_len) {
		log_err("%s: firmware image of %zu bytes; expected 64..%u bytes", src, len,
			max_len - 1);
		return -EINVAL;
	}
	uint32_t off = get_be32(img + MCP_HEADER_PTR_OFFSET);
	if ((off & 3) || off > len || len - off < MCP_HDR_MIN_LEN) {
		log_err(
		    "%s: corrupted firmware image: header pointer 0x%x outside the %zu-byte image",
		    src, off, len);
		return -EINVAL;
	}
	int rc = mcp_fw_header_parse(img + off, len - off, src, out);
	if (rc == 0)
		out->header_offset = off;
	return rc;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		mac[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i < 5 && *s++ != ':')
			return -EINVAL;
	}
	return *s == '\0' ? 0 : -EINVAL;
}

int mcp_eeprom_parse(const uint8_t *strings, size_t len, struct mcp_eeprom *out)
{
	char buf[MCP_STRING_SPECS_LEN];
	memset(out, 0, sizeof(*out));
	if (len > sizeof(buf))
		len = sizeof(buf);
	if (len < 2)
		return -EINVAL;
	/* Like the drivers: copy, and force the last two bytes to NUL (§1.6). */
	memcpy(buf, strings, len);
	buf[len - 1] = buf[len - 2] = '\0';
	bool have_mac = false, have_sn2 = false;
	const char *p = buf, *end = buf + len;
	while (p < end && *p) {
		size_t n = strnlen(p, (size_t)(end - p));
		if (strncmp(p, "MAC=", 4) == 0) {
			if (parse_mac(p + 4, out->mac) < 0) {
				log_err("EEPROM: malformed MAC string \"%.40s\"", p);
				return -EINVAL;
			}
			have_mac = true;
		} else if (strncmp(p, "SN2=", 4) == 0) {
			snprintf(out->serial, sizeof(out->serial), "%s", p + 4);
			have_sn2 = true;
		} else if (strncmp(p, "SN=", 3) == 0 && !have_sn2) {
			snprintf(out->serial, sizeof(out->serial), "%s", p + 3);
		} else if (strncmp(p, "PC=", 3) == 0) {
			snprintf(out->product, sizeof(out->product), "%s", p + 3);
		}
		p += n + 1;
	}
	if (!have_mac) {
		log_err("EEPROM strings carry no MAC= entry: the NIC's EEPROM looks corrupted");
		return -EINVAL;
	}
	return 0;
}

/* IEEE 802.3 CRC-32 (reflected, polynomial 0xEDB88320), as the Linux driver's crc32_le
 * check of the staged image (§2.2). Nibble table: small and fast enough for a load. */
uint32_t mcp_crc32(uint32_t crc, const void *buf, size_t len)
{
	static const uint32_t tab[16] = {
	    0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
	    0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
	    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
	};
	const uint8_t *p = buf;
	crc = ~crc;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		crc = (crc >> 4) ^ tab[crc & 15];
		crc = (crc >> 4) ^ tab[crc & 15];
	}
	return ~crc;
}
