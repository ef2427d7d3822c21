/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware image header parsing and the model's image builder (§1.5, §2.1, §2.2). */
#include "sim/fw_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/byteorder.h"

static int fail(char *why, size_t n, const char *msg)
{
	if (why && n)
		snprintf(why, n, "%s", msg);
	return -EINVAL;
}

int sim_fw_parse(const uint8_t *img, size_t len, struct sim_fw_info *info, char *why,
		 size_t why_len)
{
	memset(info, 0, sizeof(*info));
	if (len < 0x40)
		return fail(why, why_len, "image shorter than 64 bytes");
	uint32_t off = get_be32(img + 0x3C);
	if (off & 3)
		return fail(why, why_len, "header pointer at 0x3C is not 4-aligned");
	if ((uint64_t)off + FW_HDR_MCP_INDEX > len)
		return fail(why, why_len, "header pointer at 0x3C points outside the image");
	const uint8_t *h = img + off;
	info->hdr_off = off;
	info->hdr_len = get_be32(h + FW_HDR_LENGTH);
	if (get_be32(h + FW_HDR_TYPE) != FW_TYPE_ETH)
		return fail(why, why_len, "firmware type is not \"ETH \"");
	memcpy(info->version, h + FW_HDR_VERSION, sizeof(info->version) - 1);
	info->version[sizeof(info->version) - 1] = '\0';
	char tail;
	if (sscanf(info->version, "%u.%u.%u%c", &info->major, &info->minor, &info->tiny, &tail) <
		3 ||
	    info->major != 1 || info->minor != 4)
		return fail(why, why_len, "firmware version is not 1.4.x");
	size_t avail = len - off;
	if (info->hdr_len >= FW_HDR_HANDOFF_CAPS + 2 && avail >= FW_HDR_HANDOFF_CAPS + 2) {
		info->has_handoff_ids = true;
		info->handoff_major = get_be16(h + FW_HDR_HANDOFF_MAJOR);
		info->handoff_caps = get_be16(h + FW_HDR_HANDOFF_CAPS);
	}
	if (strstr(info->version, "libmyrio model") && info->hdr_len >= FW_HDR_FEATURES + 4 &&
	    avail >= FW_HDR_FEATURES + 4) {
		info->model = true;
		info->features = get_be32(h + FW_HDR_FEATURES);
	}
	return 0;
}

int sim_fw_image_build(uint8_t *buf, size_t cap, const char *flavour, size_t *len)
{
	char fl[64];
	const char *version = NULL;
	if (!flavour)
		flavour = "eth";
	snprintf(fl, sizeof(fl), "%s", flavour);
	char *at = strchr(fl, '@');
	if (at) {
		*at = '\0';
		version = at + 1;
	}
	uint32_t feat;
	if (!strcmp(fl, "eth"))
		feat = 0;
	else if (!strcmp(fl, "ethp"))
		feat = FW_FEAT_UNALIGNED;
	else if (!strcmp(fl, "rss_eth"))
		feat = FW_FEAT_RSS | FW_FEAT_MULTI_TX;
	else if (!strcmp(fl, "rss_ethp"))
		feat = FW_FEAT_RSS | FW_FEAT_MULTI_TX | FW_FEAT_UNALIGNED;
	else
		return -EINVAL;
	size_t n = FW_IMAGE_LEN_DEFAULT;
	if (cap < n)
		return -ENOSPC;
	/* Body: a deterministic pattern so that a copy or CRC error shows. */
	uint32_t x = 0x2545F491u ^ feat;
	for (size_t i = 0; i < n; i += 4) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		memcpy(buf + i, &x, 4);
	}
	memset(buf, 0, 0x40);
	put_be32(buf + 0x3C, FW_HEADER_OFF);
	uint8_t *h = buf + FW_HEADER_OFF;
	memset(h, 0, FW_HDR_SIZE);
	put_be32(h + FW_HDR_LENGTH, FW_HDR_SIZE);
	put_be32(h + FW_HDR_TYPE, FW_TYPE_ETH);
	char v[128];
	if (version)
		snprintf(v, sizeof(v), "%s -- libmyrio model %s", version, fl);
	else
		snprintf(v, sizeof(v), "%s %s", FW_VERSION_BASE, fl);
	memcpy(h + FW_HDR_VERSION, v, strlen(v) + 1);
	put_be32(h + FW_HDR_STRING_SPECS, 0x1DFE00u);
	put_be32(h + FW_HDR_STRING_SPECS_LEN, 256u);
	h[FW_HDR_MCP_INDEX] = 1;
	put_be16(h + FW_HDR_HANDOFF_MAJOR, FW_HANDOFF_MAJOR);
	put_be16(h + FW_HDR_HANDOFF_CAPS, FW_HANDOFF_CAPS_IMAGE);
	put_be32(h + FW_HDR_FEATURES, feat);
	put_be32(h + FW_HDR_LED, 0x00000001u);
	put_be32(h + FW_HDR_LED_DFLT, 0x00000001u);
	*len = n;
	return 0;
}
