/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware: adopting the running image (§2.3), loading an image file into the staging area
 * and handing off to it (§2.2, §2.4), the dummy RDMA (§2.6) and the EEPROM strings (§1.6). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mcp/nic.h"
#include "mcp/wait.h"
#include "util/byteorder.h"
#include "util/log.h"

#define FW_CHUNK 256u
#define HANDOFF_TIMEOUT_MS 1000u
#define DUMMY_RDMA_TIMEOUT_MS 20u
#define BOOT_WAIT_MS 2000u /* the firmware's boot after a reset: about 1-2 s */

/* Copies len bytes of SRAM (4-aligned) with 32-bit loads, keeping the byte order. */
static void sram_read(struct myrio_bus *bus, uint32_t off, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	for (uint32_t i = 0; i < len; i += 4) {
		uint32_t w = *(volatile uint32_t *)(bus->bar0 + off + i);
		memcpy(d + i, &w, 4);
	}
}

static bool header_ptr_ok(uint32_t ptr)
{
	/* The pointer must be aligned and the header must lie in the first 1 MiB (§1.5). */
	return !(ptr & 3) && ptr >= MCP_HEADER_PTR_OFFSET + 4 &&
	       ptr <= 0x100000u - MCP_HDR_FULL_LEN;
}

/* Reads and checks the header of the firmware running in SRAM. After a reset (VFIO resets
 * the function when it is opened) or a reboot the firmware may still be booting, its header
 * pointer not yet written: it is polled for BOOT_WAIT_MS before it counts as corrupted. */
static uint32_t booted_header_ptr(struct myrio_bus *bus)
{
	uint32_t ptr = mmio_read32(bus->bar0, MCP_HEADER_PTR_OFFSET);
	struct mcp_wait w;
	mcp_wait_start(&w, bus, BOOT_WAIT_MS * 1000u);
	bool waited = false;
	while (!header_ptr_ok(ptr) && ptr != 0xffffffffu && !mcp_wait_over(&w)) {
		bus->ops->delay_us(bus, 1000);
		waited = true;
		ptr = mmio_read32(bus->bar0, MCP_HEADER_PTR_OFFSET);
	}
	if (waited && header_ptr_ok(ptr))
		log_info("%s: the firmware booted after %u ms", bus->name,
			 (unsigned)(mcp_wait_elapsed_us(&w) / 1000));
	return ptr;
}

static int read_running_header(struct myri_nic *nic, struct mcp_fw_info *fw)
{
	struct myrio_bus *bus = nic->bus;
	uint32_t ptr = booted_header_ptr(bus);
	if (!header_ptr_ok(ptr)) {
		log_err("%s: corrupted firmware header pointer 0x%x at SRAM 0x3c (waited %u ms for "
			"the firmware to boot): the NIC runs no usable firmware; load an image "
			"(myrio_port_conf.firmware)",
			bus->name, ptr, BOOT_WAIT_MS);
		return -EINVAL;
	}
	uint8_t hdr[MCP_HDR_FULL_LEN];
	sram_read(bus, ptr, hdr, sizeof(hdr));
	int rc = mcp_fw_header_parse(hdr, sizeof(hdr), bus->name, fw);
	if (rc == 0)
		fw->header_offset = ptr;
	return rc;
}

int mcp_fw_adopt(struct myri_nic *nic)
{
	int rc = read_running_header(nic, &nic->fw);
	if (rc < 0)
		return rc;
	nic->fw_loaded = false;
	/* Adopted firmware: assume the unaligned flavour (§2.3). */
	nic->tx_boundary = MCP_TX_BOUNDARY_UNALIGNED;
	log_info("%s: adopted running firmware %s", nic->bus->name, nic->fw.version);
	/* These versions drop broadcasts (ARP requests) while ALLMULTI is off; as Linux does,
	 * ALLMULTI is turned on after every reset (reset_sequence). */
	nic->rx_filter_bug = nic->fw.tiny >= 4 && nic->fw.tiny <= 11;
	if (nic->rx_filter_bug)
		log_warn("%s: adopted firmware %s filters broadcasts: receiving all multicast "
			 "frames to get them; load a newer image to avoid it",
			 nic->bus->name, nic->fw.version);
	return 0;
}

static int read_file(const char *path, uint8_t **out, size_t *len, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	uint8_t *buf = malloc(max + 8);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, max + 1, f);
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* §2.2 step 2-3: PIO copy in 256-byte chunks, each followed by a fence and a dummy read
 * that flushes posted writes; then read the staging area back and compare CRC-32. */
static int stage_image(struct myri_nic *nic, const uint8_t *img, size_t len)
{
	struct myrio_bus *bus = nic->bus;
	size_t padded = (len + 7) & ~(size_t)7;
	uint8_t *tmp = calloc(1, padded);
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, img, len);
	for (size_t off = 0; off < padded; off += FW_CHUNK) {
		uint32_t n = (uint32_t)(padded - off < FW_CHUNK ? padded - off : FW_CHUNK);
		sram_copy64(bus->bar0, MCP_FW_STAGING_OFFSET + (uint32_t)off, tmp + off, n);
		mmio_wmb();
		(void)mmio_read32(bus->bar0, 0);
	}
	size_t words = (len + 3) & ~(size_t)3;
	sram_read(bus, MCP_FW_STAGING_OFFSET, tmp, (uint32_t)words);
	uint32_t want = mcp_crc32(0, img, len), got = mcp_crc32(0, tmp, len);
	free(tmp);
	if (want != got) {
		log_err("%s: firmware staging area reads back wrong (CRC-32 0x%08x, file 0x%08x): "
			"BAR0 writes are being lost; check the device and its mapping",
			bus->name, got, want);
		return -EIO;
	}
	return 0;
}

/* Writes a 64-byte boot block as 16 BE32 words, the last one after a fence. */
static void write_block(struct myrio_bus *bus, uint32_t off, const uint32_t w[16])
{
	for (unsigned i = 0; i < 15; i++)
		mmio_write32(bus->bar0, off + 4 * i, w[i]);
	mmio_wmb();
	mmio_write32(bus->bar0, off + 60, w[15]);
	mmio_wmb();
}

/* Polls the confirm word (first word of the response buffer) for 0xFFFFFFFF. */
static bool wait_confirm(struct myri_nic *nic, unsigned timeout_ms)
{
	volatile uint32_t *confirm = (volatile uint32_t *)nic->cmd.resp;
	struct mcp_wait w;
	mcp_wait_start(&w, nic->bus, timeout_ms * 1000ull);
	for (;;) {
		if (*confirm == MCP_BLOCK_CONFIRM_VALUE)
			return true;
		if (mcp_wait_over(&w))
			return false;
		nic->bus->ops->delay_us(nic->bus, 1000);
	}
}

static int handoff(struct myri_nic *nic, size_t len)
{
	uint64_t confirm = nic->cmd.resp_iova;
	uint32_t w[16] = {0};
	*(volatile uint32_t *)nic->cmd.resp = 0;
	mmio_wmb();
	w[MCP_BLOCK_CONFIRM_HIGH] = (uint32_t)(confirm >> 32);
	w[MCP_BLOCK_CONFIRM_LOW] = (uint32_t)confirm;
	w[MCP_BLOCK_CONFIRM_DATA] = MCP_BLOCK_CONFIRM_VALUE;
	w[MCP_HANDOFF_SRC] = MCP_FW_STAGING_OFFSET + MCP_HANDOFF_SKIP;
	w[MCP_HANDOFF_LEN] = (uint32_t)len - MCP_HANDOFF_SKIP;
	w[MCP_HANDOFF_DST] = MCP_HANDOFF_SKIP;
	w[MCP_HANDOFF_JUMP] = 0;
	write_block(nic->bus, MCP_BOOT_HANDOFF_OFFSET, w);
	if (!wait_confirm(nic, HANDOFF_TIMEOUT_MS)) {
		log_err(
		    "%s: the NIC did not confirm the firmware handoff within %u ms: the running "
		    "firmware refused the image (handoff IDs) or is hung",
		    nic->bus->name, HANDOFF_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

int mcp_fw_load_file(struct myri_nic *nic, const char *path)
{
	struct myrio_bus *bus = nic->bus;
	uint32_t max = MCP_SRAM_SIZE_DEFAULT - MCP_FW_STAGING_OFFSET;
	uint8_t *img = NULL;
	size_t len = 0;
	int rc = read_file(path, &img, &len, max);
	if (rc < 0) {
		log_err("cannot read firmware image %s: %s", path, strerror(-rc));
		return rc;
	}
	struct mcp_fw_info fw;
	rc = mcp_fw_image_check(img, len, max, path, &fw);
	if (rc == 0) {
		(void)booted_header_ptr(bus); /* the running firmware takes the handoff */
		rc = stage_image(nic, img, len);
	}
	if (rc == 0)
		rc = handoff(nic, len);
	free(img);
	if (rc < 0)
		return rc;
	/* The new image is running: its header is now the one at SRAM 0x3C. */
	rc = read_running_header(nic, &nic->fw);
	if (rc < 0)
		return rc;
	nic->fw_loaded = true;
	nic->rx_filter_bug = false;
	/* §2.1: the "p" (unaligned-completion) images need 2 KiB descriptors. The header does
	 * not say which flavour an image is; like L, go by the image's name (ethp_z8e,
	 * rss_ethp_z8e). An aligned image keeps 4 KiB if UNALIGNED_TEST passes at probe. */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	nic->tx_boundary =
	    strstr(base, "ethp") ? MCP_TX_BOUNDARY_UNALIGNED : MCP_TX_BOUNDARY_ALIGNED;
	log_info("%s: loaded firmware %s (%s, %zu bytes)", bus->name, nic->fw.version, path, len);
	return 0;
}

int mcp_dummy_rdma(struct myri_nic *nic, bool enable)
{
	uint64_t confirm = nic->cmd.resp_iova;
	uint64_t dummy = nic->ctrl.iova + NIC_CTRL_DUMMY;
	uint32_t w[16] = {0};
	*(volatile uint32_t *)nic->cmd.resp = 0;
	mmio_wmb();
	w[MCP_BLOCK_CONFIRM_HIGH] = (uint32_t)(confirm >> 32);
	w[MCP_BLOCK_CONFIRM_LOW] = (uint32_t)confirm;
	w[MCP_BLOCK_CONFIRM_DATA] = MCP_BLOCK_CONFIRM_VALUE;
	w[MCP_DUMMY_RDMA_ADDR_HIGH] = (uint32_t)(dummy >> 32);
	w[MCP_DUMMY_RDMA_ADDR_LOW] = (uint32_t)dummy;
	w[MCP_DUMMY_RDMA_ENABLE] = enable ? 1 : 0;
	write_block(nic->bus, MCP_DUMMY_RDMA_OFFSET, w);
	/* Unconfirmed, the NIC may still have taken it: assume it reads until told not to. */
	nic->dummy_rdma_on = enable;
	if (!wait_confirm(nic, DUMMY_RDMA_TIMEOUT_MS)) {
		log_warn("%s: dummy RDMA %s was not confirmed (harmless on firmware >= 1.4.16)",
			 nic->bus->name, enable ? "enable" : "disable");
		return -ETIMEDOUT;
	}
	return 0;
}

int mcp_read_eeprom(struct myri_nic *nic)
{
	struct myrio_bus *bus = nic->bus;
	/* L reads the strings at the header's string_specs, F at the fixed 0x1DFE00 (§1.4);
	 * take the header's value when it is plausible. */
	uint32_t at = nic->fw.string_specs;
	if (at <= MCP_FW_STAGING_OFFSET || at > bus->bar0_len - MCP_STRING_SPECS_LEN || (at & 3))
		at = MCP_STRING_SPECS_DEFAULT;
	uint8_t s[MCP_STRING_SPECS_LEN];
	sram_read(bus, at, s, sizeof(s));
	int rc = mcp_eeprom_parse(s, sizeof(s), &nic->ee);
	if (rc < 0)
		log_err("%s: cannot read the MAC address from the EEPROM strings at SRAM 0x%x",
			bus->name, at);
	return rc;
}
