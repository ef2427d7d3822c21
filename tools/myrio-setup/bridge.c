/* SPDX-License-Identifier: BSD-3-Clause */
/* Settings Linux's myri10ge makes on the NIC's upstream bridge and VFIO does not:
 *  - Surprise Down masked in the bridge's AER uncorrectable error mask
 *    (PCIe r3.0 §7.10.3): a NIC that reboots itself (a parity error) takes its link
 *    down, which the bridge would otherwise report as a fatal error;
 *  - ECRC generation on a root port (AER capabilities and control, PCIe r3.0 §7.10.7):
 *    it makes the root complex align read completions on 8 bytes, so the aligned
 *    firmware passes UNALIGNED_TEST on more chipsets (Linux does it only on a root port).
 * `check` reports both with the exact setpci commands; `bridge` applies them through the
 * bridge's sysfs config file. Everything read from config space is bounds-checked. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pci/pci_addr.h"
#include "setup.h"
#include "util/pci_cap.h"

#define CFG_MAX 4096u
#define CFG_STD 256u
#define PCI_CAP_ID_EXP 0x10
#define PCI_EXP_FLAGS 0x02
#define PCI_EXP_TYPE_ROOT_PORT 0x4
#define EXT_CAP_ID_AER 0x0001
#define AER_UNCOR_MASK 0x08
#define AER_UNC_SURPDN 0x00000020u
#define AER_CAP 0x18
#define AER_ECRC_GEN_CAPABLE 0x00000020u
#define AER_ECRC_GEN_ENABLE 0x00000040u

struct bridge {
	char addr[MYRIO_PCI_ADDR_STRLEN + 1];
	char config[PATH_MAX];
	uint8_t cfg[CFG_MAX];
	unsigned len; /* bytes of config space readable */
	unsigned aer; /* offset of the AER capability, 0 if none */
	bool root_port;
};

static uint32_t le(const uint8_t *c, unsigned off, unsigned size)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)c[off + i] << (8 * i);
	return v;
}

/* The bridge above addr: the parent of the device's directory in sysfs. */
static int find_bridge(struct setup_ctx *c, const char *addr, struct bridge *b)
{
	char path[PATH_MAX], real[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", myrio_sysfs_root(&c->paths), addr);
	if (!realpath(path, real))
		return errno == ENOENT ? -ENODEV : -errno; /* no such device */
	char *slash = strrchr(real, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	const char *parent = strrchr(real, '/');
	struct myrio_pci_addr a;
	if (!parent || myrio_pci_addr_parse(parent + 1, &a) != 0)
		return -ENOENT; /* directly on a root bus */
	myrio_pci_addr_str(&a, b->addr);
	if ((size_t)snprintf(b->config, sizeof(b->config), "%s/config", real) >= sizeof(b->config))
		return -ENAMETOOLONG;
	return 0;
}

/* The copy of config space read from sysfs, for pci_cap_find. */
static int copy_read(void *bridge, unsigned off, unsigned size, uint32_t *val)
{
	const struct bridge *b = bridge;
	if ((uint64_t)off + size > b->len)
		return -ERANGE;
	*val = le(b->cfg, off, size);
	return 0;
}

static unsigned find_ext_cap(const struct bridge *b, unsigned id)
{
	unsigned at = CFG_STD;
	for (int hops = 0; at >= CFG_STD && at + 0x1c <= b->len && hops < 64; hops++) {
		uint32_t hdr = le(b->cfg, at, 4);
		if (hdr == 0 || hdr == 0xffffffffu)
			return 0;
		if ((hdr & 0xffff) == id)
			return at;
		at = (hdr >> 20) & ~3u;
	}
	return 0;
}

static int read_bridge(struct setup_ctx *c, const char *addr, struct bridge *b)
{
	memset(b, 0, sizeof(*b));
	int rc = find_bridge(c, addr, b);
	if (rc < 0)
		return rc;
	int fd = open(b->config, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = pread(fd, b->cfg, sizeof(b->cfg), 0);
	close(fd);
	if (n < 0)
		return -errno;
	b->len = (unsigned)n;
	unsigned exp = b->len >= CFG_STD ? pci_cap_find(copy_read, b, PCI_CAP_ID_EXP) : 0;
	b->root_port =
	    exp && ((le(b->cfg, exp + PCI_EXP_FLAGS, 2) >> 4) & 0xf) == PCI_EXP_TYPE_ROOT_PORT;
	b->aer = find_ext_cap(b, EXT_CAP_ID_AER);
	return 0;
}

/* What the bridge needs: bits to set in the AER mask and control registers. */
static void wanted(const struct bridge *b, uint32_t *mask_bits, uint32_t *ctl_bits)
{
	uint32_t mask = le(b->cfg, b->aer + AER_UNCOR_MASK, 4);
	uint32_t ctl = le(b->cfg, b->aer + AER_CAP, 4);
	*mask_bits = mask & AER_UNC_SURPDN ? 0 : AER_UNC_SURPDN;
	*ctl_bits = b->root_port && (ctl & AER_ECRC_GEN_CAPABLE) && !(ctl & AER_ECRC_GEN_ENABLE)
			? AER_ECRC_GEN_ENABLE
			: 0;
}

/* Reports the bridge's settings, each missing one with the setpci command that makes it. */
void setup_check_bridge(struct setup_ctx *c, const char *addr)
{
	static struct bridge b;
	char fix[160];
	int rc = read_bridge(c, addr, &b);
	if (rc == -ENOENT) {
		setup_ok(c, "no PCI bridge above %s", addr);
		return;
	}
	if (rc < 0) {
		setup_fix(c, "run as root",
			  "upstream bridge of %s: cannot read its config space: %s", addr,
			  strerror(-rc));
		return;
	}
	if (b.len <= CFG_STD) {
		setup_fix(c, "run as root (only root reads extended config space)",
			  "upstream bridge %s: AER settings unknown", b.addr);
		return;
	}
	if (!b.aer) {
		setup_ok(c, "upstream bridge %s has no AER capability: nothing to mask", b.addr);
		return;
	}
	uint32_t mask_bits, ctl_bits;
	wanted(&b, &mask_bits, &ctl_bits);
	if (!mask_bits)
		setup_ok(c, "upstream bridge %s: Surprise Down masked in AER", b.addr);
	else {
		snprintf(fix, sizeof(fix), "setpci -s %s ECAP_AER+0x%02x.L=0x%08x:0x%08x", b.addr,
			 AER_UNCOR_MASK, mask_bits, mask_bits);
		setup_fix(c, fix,
			  "upstream bridge %s: Surprise Down not masked in AER (a NIC rebooting "
			  "after a parity error drops its link: a fatal error)",
			  b.addr);
	}
	uint32_t ctl = le(b.cfg, b.aer + AER_CAP, 4);
	if (!b.root_port)
		setup_ok(c, "upstream bridge %s is not a root port: ECRC left alone", b.addr);
	else if (!(ctl & AER_ECRC_GEN_CAPABLE))
		setup_ok(c,
			 "root port %s cannot generate ECRC: the \"p\" firmware is used if "
			 "completions are unaligned",
			 b.addr);
	else if (!ctl_bits)
		setup_ok(c, "root port %s generates ECRC", b.addr);
	else {
		snprintf(fix, sizeof(fix), "setpci -s %s ECAP_AER+0x%02x.L=0x%08x:0x%08x", b.addr,
			 AER_CAP, ctl_bits, ctl_bits);
		setup_fix(c, fix,
			  "root port %s: ECRC generation off (completions may arrive unaligned)",
			  b.addr);
	}
}

static int set_bits(int fd, unsigned off, uint32_t bits, const uint8_t *cfg)
{
	if (!bits)
		return 0;
	uint32_t v = le(cfg, off, 4) | bits;
	uint8_t w[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	return pwrite(fd, w, 4, off) == 4 ? 0 : -errno;
}

/* Makes the settings check reports missing. */
int setup_bridge(struct setup_ctx *c, const char *in)
{
	struct myrio_pci_addr a;
	char addr[MYRIO_PCI_ADDR_STRLEN + 1];
	if (myrio_pci_addr_parse(in, &a) != 0) {
		setup_fix(c, NULL, "'%s' is not a PCI address (e.g. 0000:03:00.0)", in);
		return -EINVAL;
	}
	myrio_pci_addr_str(&a, addr);
	static struct bridge b;
	int rc = read_bridge(c, addr, &b);
	if (rc == -ENOENT) {
		fprintf(c->out, "no PCI bridge above %s: nothing to set\n", addr);
		return 0;
	}
	if (rc == 0 && b.len <= CFG_STD)
		rc = -EACCES; /* extended config space is root's */
	if (rc < 0) {
		fprintf(c->out, "upstream bridge of %s: %s\n", addr, strerror(-rc));
		return rc;
	}
	if (!b.aer) {
		fprintf(c->out, "upstream bridge %s has no AER capability: nothing to set\n",
			b.addr);
		return 0;
	}
	uint32_t mask_bits, ctl_bits;
	wanted(&b, &mask_bits, &ctl_bits);
	int fd = open(b.config, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		fprintf(c->out, "%s: %s\n", b.config, strerror(-rc));
		return rc;
	}
	rc = set_bits(fd, b.aer + AER_UNCOR_MASK, mask_bits, b.cfg);
	if (rc == 0)
		rc = set_bits(fd, b.aer + AER_CAP, ctl_bits, b.cfg);
	close(fd);
	if (rc < 0)
		fprintf(c->out, "%s: %s\n", b.config, strerror(-rc));
	else
		fprintf(c->out, "upstream bridge %s: %s%s%s\n", b.addr,
			mask_bits ? "Surprise Down masked" : "", mask_bits && ctl_bits ? ", " : "",
			ctl_bits ? "ECRC generation on" : (mask_bits ? "" : "already set"));
	return rc;
}
