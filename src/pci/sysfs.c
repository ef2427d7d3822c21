/* SPDX-License-Identifier: BSD-3-Clause */
/* Small sysfs readers and writers used by the VFIO checks and myrio-setup. */
#include "pci/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *myrio_sysfs_root(const struct myrio_vfio_paths *p)
{
	return p && p->sysfs ? p->sysfs : "/sys";
}

const char *myrio_dev_root(const struct myrio_vfio_paths *p)
{
	return p && p->dev ? p->dev : "/dev";
}

int myrio_sysfs_dev_path(const struct myrio_vfio_paths *p, const char *addr, const char *file,
			 char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/bus/pci/devices/%s%s%s", myrio_sysfs_root(p), addr,
			 file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int myrio_sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int myrio_sysfs_read_hex(const char *path, uint32_t *val)
{
	char buf[32], *end;
	int rc = myrio_sysfs_read(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	errno = 0;
	unsigned long v = strtoul(buf, &end, 16);
	if (errno || end == buf || *end || v > UINT32_MAX)
		return -EINVAL;
	*val = (uint32_t)v;
	return 0;
}

int myrio_sysfs_write(const char *path, const char *val)
{
	/* O_TRUNC as a shell's '>' does: sysfs ignores it, a plain file (tests) needs it.
	 * O_NOFOLLOW: an attribute is never a symlink, and root must not write through one. */
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t len = strlen(val);
	ssize_t n = write(fd, val, len);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return (size_t)n == len ? 0 : -EIO;
}

int myrio_sysfs_link_name(const char *path, char *buf, size_t len)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

int myrio_pci_driver(const struct myrio_vfio_paths *p, const char *addr, char *buf, size_t len)
{
	char path[PATH_MAX];
	int rc = myrio_sysfs_dev_path(p, addr, "driver", path, sizeof(path));
	if (rc < 0)
		return rc;
	rc = myrio_sysfs_link_name(path, buf, len);
	if (rc == -ENOENT) {
		buf[0] = '\0';
		return 0;
	}
	return rc;
}

int myrio_pci_ids(const struct myrio_vfio_paths *p, const char *addr, uint16_t *vendor,
		  uint16_t *device)
{
	char path[PATH_MAX];
	uint32_t v, d;
	int rc = myrio_sysfs_dev_path(p, addr, "vendor", path, sizeof(path));
	if (rc == 0)
		rc = myrio_sysfs_read_hex(path, &v);
	if (rc == 0)
		rc = myrio_sysfs_dev_path(p, addr, "device", path, sizeof(path));
	if (rc == 0)
		rc = myrio_sysfs_read_hex(path, &d);
	if (rc < 0)
		return rc;
	*vendor = (uint16_t)v;
	*device = (uint16_t)d;
	return 0;
}
