/* SPDX-License-Identifier: BSD-3-Clause */
/* The three VFIO file descriptors: container (IOMMU context), group, device. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pci/vfio_dev.h"
#include "util/log.h"

static int open_container(struct myrio_vfio_dev *d)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/vfio/vfio", myrio_dev_root(&d->paths));
	d->container = open(path, O_RDWR | O_CLOEXEC);
	if (d->container < 0) {
		int rc = -errno;
		if (rc == -ENOENT)
			log_err("%s does not exist: load VFIO with 'modprobe vfio-pci'", path);
		else
			log_err("cannot open %s: %s (run as root or give your user access)", path,
				strerror(-rc));
		return rc;
	}
	int ver = ioctl(d->container, VFIO_GET_API_VERSION);
	if (ver < 0) {
		int rc = -errno;
		log_err("%s is not the VFIO container device (%s): load VFIO with "
			"'modprobe vfio-pci'",
			path, strerror(-rc));
		return rc;
	}
	if (ver != VFIO_API_VERSION) {
		log_err("%s speaks VFIO API %d, this library needs %d", path, ver,
			VFIO_API_VERSION);
		return -EPROTO;
	}
	if (ioctl(d->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0 &&
	    ioctl(d->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
		log_err("the kernel's VFIO has no type1 IOMMU backend: load it with "
			"'modprobe vfio_iommu_type1' (and make sure the IOMMU is on)");
		return -ENOTSUP;
	}
	return 0;
}

static int open_group(struct myrio_vfio_dev *d, const char *addr)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/vfio/%d", myrio_dev_root(&d->paths), d->group_id);
	d->group = open(path, O_RDWR | O_CLOEXEC);
	if (d->group < 0) {
		int rc = -errno;
		if (rc == -ENOENT)
			log_err("%s does not exist: %s is not bound to vfio-pci; run "
				"'myrio-setup bind %s'",
				path, addr, addr);
		else if (rc == -EACCES || rc == -EPERM)
			log_err("no permission to open %s: run as root, or 'chown %s %s' "
				"(and raise the memlock limit for that user)",
				path, "$USER", path);
		else if (rc == -EBUSY)
			log_err("%s is busy: another process (or another open of this group "
				"in this process) holds IOMMU group %d",
				path, d->group_id);
		else
			log_err("cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	struct vfio_group_status st = {.argsz = sizeof(st)};
	if (ioctl(d->group, VFIO_GROUP_GET_STATUS, &st) != 0) {
		int rc = -errno;
		log_err("VFIO_GROUP_GET_STATUS on %s: %s", path, strerror(-rc));
		return rc;
	}
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		log_err("IOMMU group %d is not viable: some device in it is bound to a driver "
			"other than vfio-pci; run 'myrio-setup check %s' to see which, and "
			"'myrio-setup bind --group %s'",
			d->group_id, addr, addr);
		return -EBUSY;
	}
	if (ioctl(d->group, VFIO_GROUP_SET_CONTAINER, &d->container) != 0) {
		int rc = -errno;
		log_err("VFIO_GROUP_SET_CONTAINER (group %d): %s", d->group_id, strerror(-rc));
		return rc;
	}
	return 0;
}

static int set_iommu(struct myrio_vfio_dev *d)
{
	/* type1v2 unmaps precisely what was mapped; plain type1 is the fallback. */
	if (ioctl(d->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) == 0)
		return 0;
	if (ioctl(d->container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) == 0)
		return 0;
	int rc = -errno;
	log_err("VFIO_SET_IOMMU (type1): %s", strerror(-rc));
	return rc;
}

static int open_device(struct myrio_vfio_dev *d, const char *addr)
{
	d->device = ioctl(d->group, VFIO_GROUP_GET_DEVICE_FD, addr);
	if (d->device < 0) {
		int rc = -errno;
		d->device = -1;
		log_err("cannot get the VFIO device %s from group %d: %s", addr, d->group_id,
			strerror(-rc));
		return rc;
	}
	struct vfio_device_info info = {.argsz = sizeof(info)};
	if (ioctl(d->device, VFIO_DEVICE_GET_INFO, &info) != 0) {
		int rc = -errno;
		log_err("VFIO_DEVICE_GET_INFO %s: %s", addr, strerror(-rc));
		return rc;
	}
	if (!(info.flags & VFIO_DEVICE_FLAGS_PCI)) {
		log_err("%s: VFIO does not present it as a PCI device", addr);
		return -ENODEV;
	}
	d->num_regions = info.num_regions;
	d->num_irqs = info.num_irqs;
	d->can_reset = (info.flags & VFIO_DEVICE_FLAGS_RESET) != 0;
	return 0;
}

int myrio_vfio_fds_open(struct myrio_vfio_dev *d, const char *addr)
{
	int rc = open_container(d);
	if (rc == 0)
		rc = open_group(d, addr);
	if (rc == 0)
		rc = set_iommu(d);
	if (rc == 0)
		rc = open_device(d, addr);
	return rc; /* the caller closes what was opened */
}

void myrio_vfio_fds_close(struct myrio_vfio_dev *d)
{
	if (d->device >= 0)
		close(d->device);
	if (d->group >= 0) {
		ioctl(d->group, VFIO_GROUP_UNSET_CONTAINER);
		close(d->group);
	}
	if (d->container >= 0)
		close(d->container);
	d->device = d->group = d->container = -1;
}
