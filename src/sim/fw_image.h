/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware images the model understands: the §1.5 header, validation, and a builder of
 * images for tests and tools/myrio-mkfw. The model never runs Lanai code: an image only
 * selects behaviour (§10), through a model-defined marker described in docs/device-model.md.
 */
#ifndef MYRIO_SIM_FW_IMAGE_H
#define MYRIO_SIM_FW_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Header field offsets (§1.5), all BE. */
#define FW_HDR_LENGTH 0u
#define FW_HDR_TYPE 4u
#define FW_HDR_VERSION 8u
#define FW_HDR_PRIVATE 136u
#define FW_HDR_SRAM_SIZE 140u
#define FW_HDR_STRING_SPECS 144u
#define FW_HDR_STRING_SPECS_LEN 148u
#define FW_HDR_MCP_INDEX 152u
#define FW_HDR_HANDOFF_MAJOR 164u /* BE16 */
#define FW_HDR_HANDOFF_CAPS 166u  /* BE16 */
#define FW_HDR_FEATURES 176u
#define FW_HDR_LED 184u
#define FW_HDR_LED_DFLT 188u
#define FW_HDR_SIZE 192u

#define FW_TYPE_ETH 0x45544820u /* "ETH " */
#define FW_VERSION_BASE "1.4.57 -- libmyrio model"

/* Model marker: the version string contains "libmyrio model" and `features` carries these
 * bits. Images without the marker (e.g. a real myri10ge_eth_z8e.dat) run as "eth". */
#define FW_FEAT_UNALIGNED 0x1u /* the "p" flavour: tx_boundary 2048 */
#define FW_FEAT_RSS 0x2u       /* multi-slice firmware (rss_*) */
#define FW_FEAT_MULTI_TX 0x4u  /* ENABLE_RSS_QUEUES accepts bit 1 */

#define FW_HANDOFF_MAJOR 1u
#define FW_HANDOFF_CAPS_EEPROM 0x0001u
#define FW_HANDOFF_CAPS_IMAGE 0x0003u
#define FW_HEADER_OFF 0x100u /* where the model's images put their header */
#define FW_IMAGE_LEN_DEFAULT (48u * 1024)

struct sim_fw_info {
	char version[128];
	unsigned major, minor, tiny;
	uint32_t hdr_off, hdr_len;
	bool has_handoff_ids;
	uint16_t handoff_major, handoff_caps;
	bool model; /* carries the model marker */
	uint32_t features;
};

/* Parses and checks an image or a running header: header pointer at 0x3C (4-aligned,
 * inside len), type "ETH ", version 1.4.x. Returns 0 or -EINVAL with a message in why. */
int sim_fw_parse(const uint8_t *img, size_t len, struct sim_fw_info *info, char *why,
		 size_t why_len);

/* Builds an image: flavour is "eth", "ethp", "rss_eth", "rss_ethp" or "rss_eth_mtx"...,
 * optionally followed by "@VERSION" (e.g. "ethp@1.4.30"). Returns 0 or -EINVAL/-ENOSPC. */
int sim_fw_image_build(uint8_t *buf, size_t cap, const char *flavour, size_t *len);

#endif
