/* SPDX-License-Identifier: BSD-3-Clause */
/* Boot handoff (§2.4) and dummy RDMA (§2.6): the two 64-byte blocks the host writes at
 * BAR0 + 0xFC0000 / 0xFC01C0. The model acts when the block's last word (offset 60)
 * changes from the poison value, then re-poisons it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/fw_abi.h"
#include "sim/fw_image.h"
#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

static void fw_select(struct sim_nic *nic, const struct sim_fw_info *info, bool eeprom)
{
	memcpy(nic->fw.version, info->version, sizeof(nic->fw.version));
	nic->fw.major = info->major;
	nic->fw.minor = info->minor;
	nic->fw.tiny = info->tiny;
	uint32_t feat = info->model ? info->features : 0;
	nic->fw.unaligned = feat & FW_FEAT_UNALIGNED;
	nic->fw.rss = feat & FW_FEAT_RSS;
	nic->fw.multi_tx = (feat & FW_FEAT_MULTI_TX) && info->tiny >= 32; /* §1.5: 1.4.32+ */
	nic->fw.eeprom = eeprom;
	nic->fw.rx_filter_bug = eeprom && info->tiny >= 4 && info->tiny <= 11;
	/* The aligned images assume 4 KiB-aligned read completions (§2.1); split ones land
	 * wrong in the NIC's buffers, and the frames go out corrupted. */
	nic->fw.misreads = nic->world->conf.unaligned_rc && !nic->fw.unaligned;
}

/* Power-on / reboot: the EEPROM firmware just written by sim_sram_power_on. */
void sim_fw_adopt_eeprom(struct sim_nic *nic)
{
	struct sim_fw_info info;
	char why[96];
	if (sim_fw_parse(nic->bar, SIM_CTRL_OFF, &info, why, sizeof(why)) == 0)
		fw_select(nic, &info, true);
	else
		log_err("%s: model EEPROM firmware is invalid: %s", nic->name, why);
}

static void refuse(struct sim_nic *nic, const char *why)
{
	nic->st.handoffs_refused++;
	if (sim_nic_ratelimit(nic, SIM_DIAG_CTRL))
		log_err("%s: boot handoff refused, no confirmation will be sent: %s", nic->name,
			why);
}

static void handoff(struct sim_nic *nic, const uint32_t w[16])
{
	uint64_t confirm = (uint64_t)w[SIM_BLOCK_CONFIRM_HIGH] << 32 | w[SIM_BLOCK_CONFIRM_LOW];
	uint32_t src = w[SIM_HANDOFF_SRC], len = w[SIM_HANDOFF_LEN], dst = w[SIM_HANDOFF_DST];
	/* The staged image starts 8 bytes before src (§2.4 step 2: the first 8 bytes are
	 * skipped), so image offset x is at SRAM src - dst + x after the copy's mapping. */
	if (dst > src || src - dst < SIM_STAGING_OFF || (uint64_t)src + len > SIM_SRAM_SIZE) {
		refuse(nic, "source/length/destination outside the staging area");
		return;
	}
	if ((uint64_t)dst + len > SIM_IMAGE_MAX) {
		char m[128];
		snprintf(m, sizeof(m), "image of %u bytes is larger than the model accepts (%u)",
			 len + dst, SIM_IMAGE_MAX);
		refuse(nic, m);
		return;
	}
	const uint8_t *img = nic->bar + (src - dst);
	struct sim_fw_info info, cur;
	char why[96];
	if (sim_fw_parse(img, (size_t)len + dst, &info, why, sizeof(why)) != 0) {
		refuse(nic, why);
		return;
	}
	if (sim_fw_parse(nic->bar, SIM_CTRL_OFF, &cur, why, sizeof(why)) == 0 &&
	    cur.has_handoff_ids) {
		if (!info.has_handoff_ids || info.handoff_major != cur.handoff_major ||
		    (info.handoff_caps & cur.handoff_caps) != cur.handoff_caps) {
			refuse(nic, "handoff_id_major differs or handoff_id_caps is not a superset "
				    "of the running firmware's");
			return;
		}
	}
	/* Copy and start the image: it fills its header's run-time fields. */
	memmove(nic->bar + dst, nic->bar + src, len);
	/* The header the image that was validated points at, not what SRAM at 0x3C says
	 * now (the host owns that word); checked in 64 bits so no pointer wraps. */
	if ((uint64_t)info.hdr_off + FW_HDR_SIZE <= SIM_CTRL_OFF && info.hdr_off >= dst)
		put_be32(nic->bar + info.hdr_off + FW_HDR_SRAM_SIZE, SIM_SRAM_SIZE);
	sim_sram_write_strings(nic);
	fw_select(nic, &info, false);
	sim_nic_logical_reset(nic);
	nic->st.handoffs++;
	uint8_t c[4];
	put_be32(c, w[SIM_BLOCK_CONFIRM_DATA]);
	if (sim_dma_write(nic, confirm, c, 4, "handoff confirm") == 0)
		log_info("%s: running firmware %s", nic->name, nic->fw.version);
}

static void dummy_rdma(struct sim_nic *nic, const uint32_t w[16])
{
	uint64_t confirm = (uint64_t)w[SIM_BLOCK_CONFIRM_HIGH] << 32 | w[SIM_BLOCK_CONFIRM_LOW];
	nic->dummy_rdma_iova =
	    (uint64_t)w[SIM_DUMMY_RDMA_ADDR_HIGH] << 32 | w[SIM_DUMMY_RDMA_ADDR_LOW];
	nic->dummy_rdma_on = w[SIM_DUMMY_RDMA_ENABLE] != 0;
	if (nic->dummy_rdma_on)
		(void)sim_dma(nic, nic->dummy_rdma_iova, 4, "dummy RDMA target");
	uint8_t c[4];
	put_be32(c, w[SIM_BLOCK_CONFIRM_DATA]);
	(void)sim_dma_write(nic, confirm, c, 4, "dummy RDMA confirm");
}

static bool take_block(struct sim_nic *nic, uint32_t off, uint32_t w[16])
{
	if (__builtin_expect(!sim_block_written(nic, off), 1))
		return false;
	for (unsigned i = 0; i < 16; i++)
		w[i] = sim_rd32(nic, off + 4 * i);
	sim_wr32_raw(nic, off + 60, SIM_POISON);
	return true;
}

unsigned sim_handoff_poll(struct sim_nic *nic)
{
	uint32_t w[16];
	unsigned work = 0;
	if (take_block(nic, SIM_HANDOFF_OFF, w)) {
		handoff(nic, w);
		work++;
	}
	if (take_block(nic, SIM_DUMMY_RDMA_OFF, w)) {
		dummy_rdma(nic, w);
		work++;
	}
	return work;
}
