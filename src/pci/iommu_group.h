/* SPDX-License-Identifier: BSD-3-Clause */
/* IOMMU groups: VFIO hands out whole groups, so every device in the device's group must be
 * bound to vfio-pci (or to no driver) before the group can be opened. */
#ifndef MYRIO_PCI_IOMMU_GROUP_H
#define MYRIO_PCI_IOMMU_GROUP_H

#include "pci/pci_addr.h"
#include "pci/sysfs.h"

#define MYRIO_GROUP_MAX_MEMBERS 32

struct myrio_group_member {
	char addr[MYRIO_PCI_ADDR_STRLEN + 1];
	char driver[64]; /* "" when no driver is bound */
};

struct myrio_iommu_group {
	int id;
	unsigned n;
	struct myrio_group_member m[MYRIO_GROUP_MAX_MEMBERS];
};

/* 0 when the kernel runs with an IOMMU (it then publishes /sys/kernel/iommu_groups/N),
 * -ENODEV otherwise. Logs nothing. */
int myrio_iommu_active(const struct myrio_vfio_paths *p);
/* 0 when the vfio-pci driver is loaded, -ENODEV otherwise. Logs nothing. */
int myrio_vfio_pci_loaded(const struct myrio_vfio_paths *p);
/* Reads addr's group and the driver of each member. Logs what is wrong and how to fix it:
 * -ENODEV no such device or no IOMMU. */
int myrio_iommu_group_read(const struct myrio_vfio_paths *p, const char *addr,
			   struct myrio_iommu_group *g);
/* True when a member bound to this driver keeps the group usable by VFIO. */
int myrio_group_driver_ok(const char *driver);
/* Logs each member that blocks the group, with the command that fixes it; -EBUSY if any. */
int myrio_iommu_group_check(const struct myrio_iommu_group *g, const char *addr);

#endif
