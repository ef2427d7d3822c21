/* SPDX-License-Identifier: BSD-3-Clause */
/* The doctor: everything the VFIO path needs, each lack with the command that fixes it. */
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "myrio/port.h"
#include "pci/iommu_group.h"
#include "pci/pci_addr.h"
#include "pci/vfio.h"
#include "setup.h"

static void check_hugepages(struct setup_ctx *c)
{
	long total, free_pages, size_kb;
	char dir[256];
	if (setup_hugepage_info(c, &total, &free_pages, &size_kb) != 0 || total == 0)
		setup_fix(c, "myrio-setup hugepages 512", "no hugepages reserved");
	else
		setup_ok(c, "%ld hugepages of %ld kB reserved, %ld free", total, size_kb,
			 free_pages);
	if (setup_hugetlbfs_mounted(c, dir, sizeof(dir)))
		setup_ok(c, "hugetlbfs mounted on %s", dir);
	else
		setup_fix(c, "mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages",
			  "hugetlbfs is not mounted");
}

static void check_iommu(struct setup_ctx *c)
{
	char path[PATH_MAX], cmdline[4096] = "";
	snprintf(path, sizeof(path), "%s/cmdline", c->proc);
	myrio_sysfs_read(path, cmdline, sizeof(cmdline));
	bool asked = strstr(cmdline, "intel_iommu=on") || strstr(cmdline, "amd_iommu=on") ||
		     strstr(cmdline, "iommu=pt");
	if (myrio_iommu_active(&c->paths) == 0)
		setup_ok(c, "IOMMU on (%s/kernel/iommu_groups is populated%s)",
			 myrio_sysfs_root(&c->paths),
			 asked ? ", requested on the kernel command line" : "");
	else
		setup_fix(c,
			  "enable VT-d / AMD-Vi in the firmware, add intel_iommu=on (or "
			  "amd_iommu=on) to GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub, "
			  "reboot",
			  "IOMMU off: no IOMMU groups%s",
			  asked ? " although the kernel command line asks for one"
				: ", and the kernel command line does not ask for it");
	if (myrio_vfio_pci_loaded(&c->paths) == 0)
		setup_ok(c, "vfio-pci loaded");
	else
		setup_fix(c, "modprobe vfio-pci", "vfio-pci is not loaded");
}

bool setup_has_ipc_lock(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return geteuid() == 0;
	return d[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32));
}

static void check_memlock(struct setup_ctx *c)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		return;
	if (rl.rlim_cur == RLIM_INFINITY)
		setup_ok(c, "memlock limit unlimited");
	else if (setup_has_ipc_lock())
		setup_ok(c, "memlock limit %llu kB (CAP_IPC_LOCK: VFIO pins beyond it)",
			 (unsigned long long)rl.rlim_cur / 1024);
	else
		setup_fix(c,
			  "ulimit -l unlimited (or '<user> - memlock unlimited' in "
			  "/etc/security/limits.conf)",
			  "memlock limit %llu kB: too small to pin DMA memory",
			  (unsigned long long)rl.rlim_cur / 1024);
}

static void check_dev_node(struct setup_ctx *c, int group, const char *addr)
{
	char path[PATH_MAX], fix[PATH_MAX + 64];
	struct stat st;
	snprintf(path, sizeof(path), "%s/vfio/%d", myrio_dev_root(&c->paths), group);
	if (stat(path, &st) != 0) {
		snprintf(fix, sizeof(fix), "myrio-setup bind --group %s", addr);
		setup_fix(c, fix, "%s missing (it appears once the group is bound to vfio-pci)",
			  path);
		return;
	}
	if (access(path, R_OK | W_OK) == 0)
		setup_ok(c, "%s accessible (mode %03o, uid %u)", path, st.st_mode & 0777,
			 (unsigned)st.st_uid);
	else {
		snprintf(fix, sizeof(fix), "chown $USER %s (or run as root)", path);
		setup_fix(c, fix, "%s not accessible to this user (mode %03o, uid %u)", path,
			  st.st_mode & 0777, (unsigned)st.st_uid);
	}
}

static void check_device(struct setup_ctx *c, const char *in)
{
	struct myrio_pci_addr a;
	char addr[MYRIO_PCI_ADDR_STRLEN + 1], fix[128];
	uint16_t vendor, device;
	if (myrio_pci_addr_parse(in, &a) != 0) {
		setup_fix(c, NULL, "'%s' is not a PCI address (e.g. 0000:03:00.0)", in);
		return;
	}
	myrio_pci_addr_str(&a, addr);
	fprintf(c->out, "device %s\n", addr);
	if (myrio_pci_ids(&c->paths, addr, &vendor, &device) != 0) {
		setup_fix(c, "lspci -D", "no PCI device %s", addr);
		return;
	}
	const char *drv_name, *nic;
	if (myrio_port_driver_for_pci(vendor, device, &drv_name, &nic) == 0)
		setup_ok(c, "%04x:%04x (%s, driver %s)", vendor, device, nic, drv_name);
	else
		setup_ok(c, "%04x:%04x (no libmyrio driver claims it)", vendor, device);
	struct myrio_iommu_group g;
	if (myrio_iommu_group_read(&c->paths, addr, &g) != 0) {
		setup_fix(c, NULL, "%s has no IOMMU group (see the IOMMU line above)", addr);
		return;
	}
	fprintf(c->out, "  IOMMU group %d:\n", g.id);
	for (unsigned i = 0; i < g.n; i++) {
		const struct myrio_group_member *m = &g.m[i];
		bool self = strcmp(m->addr, addr) == 0;
		const char *drv = m->driver[0] ? m->driver : "(no driver)";
		if (self ? strcmp(m->driver, "vfio-pci") == 0 : myrio_group_driver_ok(m->driver)) {
			setup_ok(c, "%s: %s", m->addr, drv);
			continue;
		}
		snprintf(fix, sizeof(fix), "myrio-setup bind %s%s", self ? "" : "--group ", addr);
		setup_fix(c, fix, "%s: %s%s", m->addr, drv,
			  self ? ", must be vfio-pci" : ", blocks the group (must be vfio-pci)");
	}
	check_dev_node(c, g.id, addr);
	setup_check_bridge(c, addr);
}

static bool has_driver(uint16_t vendor, uint16_t device)
{
	return myrio_port_driver_for_pci(vendor, device, NULL, NULL) == 0;
}

int setup_check(struct setup_ctx *c, const char *addr)
{
	fprintf(c->out, "host\n");
	check_hugepages(c);
	check_iommu(c);
	check_memlock(c);
	if (addr) {
		check_device(c, addr);
	} else {
		char found[16][16];
		int n = myrio_pci_find(found, 16, has_driver);
		if (n <= 0)
			fprintf(c->out, "no NIC that a libmyrio driver drives found%s\n",
				n < 0 ? ": the PCI scan failed" : "");
		for (int i = 0; i < n; i++)
			check_device(c, found[i]);
	}
	fprintf(c->out, "%s\n",
		c->problems ? "problems found: run the commands after '->'"
			    : "everything libmyrio needs is in place");
	return 0;
}
