/* SPDX-License-Identifier: BSD-3-Clause */
/* BAR0: 16 MiB of shared memory (a memfd, so the daemon can pass it by fd), the power-on
 * contents (an adoptable EEPROM firmware, §2.3, and the EEPROM strings, §1.6), and the
 * poisoned trigger words of the write-only doorbell areas (docs/device-model.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/fw_image.h"
#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

int sim_sram_create(struct sim_nic *nic)
{
	char name[48];
	snprintf(name, sizeof(name), "myrio-sim-%s-bar0", nic->name);
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		int rc = -errno;
		log_err("%s: cannot create BAR0 memory: memfd_create: %s", nic->name,
			strerror(errno));
		return rc;
	}
	if (ftruncate(fd, SIM_BAR0_LEN) != 0) {
		int rc = -errno;
		log_err("%s: cannot size BAR0 memory to 16 MiB: %s", nic->name, strerror(errno));
		close(fd);
		return rc;
	}
	/* The daemon hands this fd to its client: sealed at 16 MiB, so that no client can
	 * pull BAR0 from under the model (SIGBUS on its next poll). */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		log_warn("%s: cannot seal BAR0 memory against resizing: %s", nic->name,
			 strerror(errno));
	void *p = mmap(NULL, SIM_BAR0_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int rc = -errno;
		log_err("%s: cannot map BAR0 memory: %s", nic->name, strerror(errno));
		close(fd);
		return rc;
	}
	nic->bar = p;
	nic->bar_fd = fd;
	return 0;
}

void sim_sram_destroy(struct sim_nic *nic)
{
	if (nic->bar)
		munmap(nic->bar, SIM_BAR0_LEN);
	if (nic->bar_fd >= 0)
		close(nic->bar_fd);
	nic->bar = NULL;
	nic->bar_fd = -1;
}

void sim_sram_write_strings(struct sim_nic *nic)
{
	char s[SIM_STRINGS_LEN];
	memset(s, 0, sizeof(s));
	const uint8_t *m = nic->eeprom_mac;
	int n = snprintf(s, sizeof(s), "MAC=%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
			 m[4], m[5]);
	n += 1;
	n += snprintf(s + n, sizeof(s) - (size_t)n, "SN=%u", 470000u + nic->index) + 1;
	const char *pc =
	    nic->world->conf.product_code[0] ? nic->world->conf.product_code : "10G-PCIE-8B-S";
	n += snprintf(s + n, sizeof(s) - (size_t)n, "PC=%s", pc) + 1;
	(void)n; /* the rest stays zero: the empty string ends the list */
	memcpy(nic->bar + SIM_STRINGS_OFF, s, sizeof(s));
}

/* Trigger words get the poison value so that any host store shows (§10). */
static void poison_triggers(struct sim_nic *nic)
{
	sim_wr32_raw(nic, SIM_CMD_OFF + 60, SIM_POISON);
	sim_wr32_raw(nic, SIM_HANDOFF_OFF + 60, SIM_POISON);
	sim_wr32_raw(nic, SIM_DUMMY_RDMA_OFF + 60, SIM_POISON);
	for (unsigned s = 0; s < 32; s++) {
		sim_wr32_raw(nic, nic->rings_at + SIM_CLAIM_OFF + 8 * s, SIM_POISON);
		sim_wr32_raw(nic, nic->rings_at + SIM_CLAIM_OFF + 8 * s + 4, SIM_POISON);
	}
	sim_wr32_raw(nic, nic->rings_at + SIM_DEASSERT_OFF, SIM_POISON);
	for (unsigned s = 0; s < SIM_MAX_SLICES; s++) {
		sim_wr32_raw(nic, SIM_SEND_GO_OFF + SIM_DOORBELL_STRIDE * s, SIM_POISON);
		sim_wr32_raw(nic, SIM_SEND_STOP_OFF + SIM_DOORBELL_STRIDE * s, SIM_POISON);
	}
}

/* All rx slots invalid, all tx flags 0 (§10: CMD_RESET); slices above 0 get theirs when
 * they are enabled (sim_slice_clear_rings). */
void sim_sram_init_rings(struct sim_nic *nic)
{
	memset(nic->bar + nic->rings_at + SIM_SEND_RING_OFF, 0, SIM_MAX_RING * 16);
	memset(nic->bar + nic->rings_at + SIM_SMALL_RING_OFF, 0xFF, SIM_MAX_RING * 8);
	memset(nic->bar + nic->rings_at + SIM_BIG_RING_OFF, 0xFF, SIM_MAX_RING * 8);
	poison_triggers(nic);
}

/* Power-on: SRAM holds the EEPROM's fallback Ethernet firmware, adoptable (§2.3). */
void sim_sram_power_on(struct sim_nic *nic)
{
	/* Zero BAR0 by dropping its pages (every mapping of the memfd sees zeros, and an
	 * unused NIC costs no memory); plain stores if the kernel refuses. */
	if (madvise(nic->bar, SIM_BAR0_LEN, MADV_REMOVE) != 0)
		memset(nic->bar, 0, SIM_BAR0_LEN);
	uint8_t img[FW_IMAGE_LEN_DEFAULT];
	size_t len = 0;
	/* conf.eeprom_fw "rss[@1.4.N]": a board whose EEPROM holds the RSS image */
	const char *ver = nic->world->conf.eeprom_fw;
	bool rss = !strncmp(ver, "rss", 3);
	if (rss)
		ver += ver[3] == '@' ? 4 : 3;
	if (sim_fw_image_build(img, sizeof(img), rss ? "rss_ethp" : "ethp", &len) == 0) {
		uint8_t *h = img + FW_HEADER_OFF;
		memset(h + FW_HDR_VERSION, 0, 128);
		if (ver[0])
			snprintf((char *)h + FW_HDR_VERSION, 128, "%s -- libmyrio model", ver);
		else
			memcpy(h + FW_HDR_VERSION, FW_VERSION_BASE, sizeof(FW_VERSION_BASE));
		h[FW_HDR_MCP_INDEX] = 0;
		put_be16(h + FW_HDR_HANDOFF_CAPS, FW_HANDOFF_CAPS_EEPROM);
		put_be32(h + FW_HDR_SRAM_SIZE, SIM_SRAM_SIZE);
		memcpy(nic->bar, img, len);
	}
	sim_sram_write_strings(nic);
	sim_sram_init_rings(nic);
	sim_wr32(nic, nic->rings_at + SIM_COAL_OFF, 0);
}

/* Off the bus: every BAR0 read completes with all ones (an unsupported request). */
void sim_sram_gone(struct sim_nic *nic)
{
	memset(nic->bar, 0xFF, SIM_BAR0_LEN);
}
