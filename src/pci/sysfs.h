/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the PCI and IOMMU state the kernel publishes in sysfs.
 *
 * The roots are configurable so that tests can point every check at a fake tree built in a
 * temporary directory; production code passes NULL for the real "/sys" and "/dev".
 */
#ifndef MYRIO_PCI_SYSFS_H
#define MYRIO_PCI_SYSFS_H

#include <stddef.h>
#include <stdint.h>

struct myrio_vfio_paths {
	const char *sysfs; /* NULL: "/sys" */
	const char *dev;   /* NULL: "/dev" */
};

const char *myrio_sysfs_root(const struct myrio_vfio_paths *p);
const char *myrio_dev_root(const struct myrio_vfio_paths *p);

/* "<sysfs>/bus/pci/devices/<addr>/<file>" into buf; -ENAMETOOLONG if it does not fit. */
int myrio_sysfs_dev_path(const struct myrio_vfio_paths *p, const char *addr, const char *file,
			 char *buf, size_t len);
/* Reads a small text file, strips the trailing newline. 0 or -errno. */
int myrio_sysfs_read(const char *path, char *buf, size_t len);
/* Reads a "0x1234" id file. */
int myrio_sysfs_read_hex(const char *path, uint32_t *val);
/* Writes a string to a sysfs attribute (bind, unbind, driver_override). */
int myrio_sysfs_write(const char *path, const char *val);
/* The last component of a symbolic link's target (driver name, group number). */
int myrio_sysfs_link_name(const char *path, char *buf, size_t len);

/* The driver bound to a device ("" when none). */
int myrio_pci_driver(const struct myrio_vfio_paths *p, const char *addr, char *buf, size_t len);
/* Vendor and device ids. */
int myrio_pci_ids(const struct myrio_vfio_paths *p, const char *addr, uint16_t *vendor,
		  uint16_t *device);

#endif
