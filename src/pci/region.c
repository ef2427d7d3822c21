/* SPDX-License-Identifier: BSD-3-Clause */
/* Device regions: config space through the VFIO config region, BAR0 through mmap. */
#include <errno.h>
#include <linux/vfio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pci/vfio_dev.h"
#include "util/log.h"

#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY 0x2
#define PCI_COMMAND_MASTER 0x4

static int region_info(struct myrio_vfio_dev *d, uint32_t index, struct vfio_region_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->argsz = sizeof(*ri);
	ri->index = index;
	if (ioctl(d->device, VFIO_DEVICE_GET_REGION_INFO, ri) != 0) {
		int rc = -errno;
		log_err("%s: VFIO_DEVICE_GET_REGION_INFO %u: %s", d->bus.name, index,
			strerror(-rc));
		return rc;
	}
	return 0;
}

static int map_bar0(struct myrio_vfio_dev *d)
{
	struct vfio_region_info ri;
	int rc = region_info(d, VFIO_PCI_BAR0_REGION_INDEX, &ri);
	if (rc < 0)
		return rc;
	if (ri.size == 0) {
		log_err("%s: the device reports no BAR0 (size 0): not a Myri-10G function, or a wrong address", d->bus.name);
		return -ENODEV;
	}
	if (!(ri.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
		log_err("%s: VFIO does not allow mapping BAR0 (is it an I/O port BAR, or "
			"smaller than a page?)",
			d->bus.name);
		return -ENOTSUP;
	}
	void *p =
	    mmap(NULL, ri.size, PROT_READ | PROT_WRITE, MAP_SHARED, d->device, (off_t)ri.offset);
	if (p == MAP_FAILED) {
		rc = -errno;
		/* Before Linux 4.16, VFIO refused to map the page holding an MSI-X table. */
		log_err("%s: mmap of BAR0 (%llu bytes): %s%s", d->bus.name,
			(unsigned long long)ri.size, strerror(-rc),
			(ri.flags & VFIO_REGION_INFO_FLAG_CAPS)
			    ? " (if the MSI-X table lives in BAR0, this needs Linux 4.16 or later)"
			    : "");
		return rc;
	}
	d->bus.bar0 = p;
	d->bus.bar0_len = ri.size;
	return 0;
}

int myrio_vfio_regions_open(struct myrio_vfio_dev *d)
{
	struct vfio_region_info ri;
	int rc = region_info(d, VFIO_PCI_CONFIG_REGION_INDEX, &ri);
	if (rc < 0)
		return rc;
	d->cfg_offset = ri.offset;
	d->cfg_size = ri.size;
	return map_bar0(d);
}

void myrio_vfio_regions_close(struct myrio_vfio_dev *d)
{
	if (d->bus.bar0)
		munmap((void *)d->bus.bar0, d->bus.bar0_len);
	d->bus.bar0 = NULL;
	d->bus.bar0_len = 0;
}

static int cfg_check(struct myrio_vfio_dev *d, unsigned off, unsigned size)
{
	if ((size != 1 && size != 2 && size != 4) || off % size || off + size > d->cfg_size)
		return -EINVAL;
	return 0;
}

/* Config space is little-endian; so is every host this library builds for. */
int myrio_vfio_cfg_read(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t *val)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	int rc = cfg_check(d, off, size);
	if (rc < 0)
		return rc;
	uint32_t v = 0;
	ssize_t n = pread(d->device, &v, size, (off_t)(d->cfg_offset + off));
	if (n != (ssize_t)size)
		return n < 0 ? -errno : -EIO;
	*val = v;
	return 0;
}

int myrio_vfio_cfg_write(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t val)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	int rc = cfg_check(d, off, size);
	if (rc < 0)
		return rc;
	ssize_t n = pwrite(d->device, &val, size, (off_t)(d->cfg_offset + off));
	if (n != (ssize_t)size)
		return n < 0 ? -errno : -EIO;
	return 0;
}

int myrio_vfio_enable_master(struct myrio_vfio_dev *d)
{
	uint32_t cmd = 0;
	int rc = myrio_vfio_cfg_read(&d->bus, PCI_COMMAND, 2, &cmd);
	if (rc == 0 && (cmd & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER)) !=
			   (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER))
		rc = myrio_vfio_cfg_write(&d->bus, PCI_COMMAND, 2,
					  cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	if (rc < 0)
		log_err("%s: cannot enable memory space and bus mastering: %s", d->bus.name,
			strerror(-rc));
	return rc;
}

void myrio_vfio_disable_master(struct myrio_vfio_dev *d)
{
	uint32_t cmd = 0;
	if (myrio_vfio_cfg_read(&d->bus, PCI_COMMAND, 2, &cmd) == 0 && (cmd & PCI_COMMAND_MASTER))
		myrio_vfio_cfg_write(&d->bus, PCI_COMMAND, 2, cmd & ~(uint32_t)PCI_COMMAND_MASTER);
}
