/* SPDX-License-Identifier: BSD-3-Clause */
/* IOMMU group discovery and viability checks, from sysfs. */
#include "pci/iommu_group.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/log.h"

int myrio_iommu_active(const struct myrio_vfio_paths *p)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/kernel/iommu_groups", myrio_sysfs_root(p));
	DIR *d = opendir(path);
	if (!d)
		return -ENODEV;
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d)) != NULL)
		found = e->d_name[0] != '.';
	closedir(d);
	return found ? 0 : -ENODEV;
}

int myrio_vfio_pci_loaded(const struct myrio_vfio_paths *p)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/vfio-pci", myrio_sysfs_root(p));
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -ENODEV;
}

static int cmp_member(const void *a, const void *b)
{
	return strcmp(((const struct myrio_group_member *)a)->addr,
		      ((const struct myrio_group_member *)b)->addr);
}

static int read_members(const struct myrio_vfio_paths *p, struct myrio_iommu_group *g)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/kernel/iommu_groups/%d/devices", myrio_sysfs_root(p),
		 g->id);
	DIR *d = opendir(path);
	if (!d) {
		int rc = -errno;
		log_err("cannot list IOMMU group %d (%s): %s", g->id, path, strerror(-rc));
		return rc;
	}
	struct dirent *e;
	int rc = 0;
	g->n = 0;
	while ((e = readdir(d)) != NULL) {
		struct myrio_pci_addr a;
		if (myrio_pci_addr_parse(e->d_name, &a) != 0)
			continue;
		if (g->n == MYRIO_GROUP_MAX_MEMBERS) {
			log_err("IOMMU group %d has more than %d devices; pass-through of such a "
				"group is not supported",
				g->id, MYRIO_GROUP_MAX_MEMBERS);
			rc = -E2BIG;
			break;
		}
		struct myrio_group_member *m = &g->m[g->n++];
		myrio_pci_addr_str(&a, m->addr);
		rc = myrio_pci_driver(p, m->addr, m->driver, sizeof(m->driver));
		if (rc < 0) {
			log_err("cannot read the driver of %s: %s", m->addr, strerror(-rc));
			break;
		}
	}
	closedir(d);
	if (rc == 0)
		qsort(g->m, g->n, sizeof(g->m[0]), cmp_member);
	return rc;
}

int myrio_iommu_group_read(const struct myrio_vfio_paths *p, const char *addr,
			   struct myrio_iommu_group *g)
{
	char path[PATH_MAX], name[32];
	struct stat st;
	memset(g, 0, sizeof(*g));
	g->id = -1;
	int rc = myrio_sysfs_dev_path(p, addr, NULL, path, sizeof(path));
	if (rc < 0)
		return rc;
	if (stat(path, &st) != 0) {
		log_err("no PCI device %s (see lspci -D for the addresses of this machine)", addr);
		return -ENODEV;
	}
	rc = myrio_sysfs_dev_path(p, addr, "iommu_group", path, sizeof(path));
	if (rc == 0)
		rc = myrio_sysfs_link_name(path, name, sizeof(name));
	if (rc < 0) {
		if (myrio_iommu_active(p) != 0)
			log_err("%s: the IOMMU is off, and VFIO needs it: enable VT-d (Intel) or "
				"AMD-Vi in the firmware setup, add intel_iommu=on (Intel) or "
				"amd_iommu=on (AMD) to the kernel command line (GRUB_CMDLINE_LINUX "
				"in /etc/default/grub, then update-grub) and reboot",
				addr);
		else
			log_err("%s is in no IOMMU group although the IOMMU is on; the platform "
				"does not isolate this device, so VFIO cannot use it",
				addr);
		return -ENODEV;
	}
	char *end;
	long id = strtol(name, &end, 10);
	if (*end || id < 0 || id > INT32_MAX) {
		log_err("%s: unexpected IOMMU group name '%s'", addr, name);
		return -EINVAL;
	}
	g->id = (int)id;
	return read_members(p, g);
}

int myrio_group_driver_ok(const char *driver)
{
	/* The kernel also accepts bridges (pcieport) and pci-stub in a VFIO group. */
	return driver[0] == '\0' || strcmp(driver, "vfio-pci") == 0 ||
	       strcmp(driver, "pci-stub") == 0 || strcmp(driver, "pcieport") == 0;
}

int myrio_iommu_group_check(const struct myrio_iommu_group *g, const char *addr)
{
	int rc = 0;
	for (unsigned i = 0; i < g->n; i++) {
		const struct myrio_group_member *m = &g->m[i];
		int self = strcmp(m->addr, addr) == 0;
		if (self && strcmp(m->driver, "vfio-pci") != 0) {
			if (m->driver[0])
				log_err(
				    "%s is bound to %s, not vfio-pci: run 'myrio-setup bind %s'",
				    addr, m->driver, addr);
			else
				log_err("%s is bound to no driver, and VFIO needs vfio-pci: run "
					"'myrio-setup bind %s'",
					addr, addr);
			rc = -EBUSY;
		} else if (!self && !myrio_group_driver_ok(m->driver)) {
			log_err("%s shares IOMMU group %d with %s, which is bound to %s: the "
				"whole group must be given to vfio-pci: run 'myrio-setup bind "
				"--group %s' (this takes %s away from its driver)",
				addr, g->id, m->addr, m->driver, addr, m->addr);
			rc = -EBUSY;
		}
	}
	return rc;
}
