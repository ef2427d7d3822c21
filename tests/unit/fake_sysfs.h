/* SPDX-License-Identifier: BSD-3-Clause */
/* A fake kernel view in a temporary directory: sysfs with PCI devices, their drivers and
 * IOMMU groups, plus /dev and /proc, for tests of the code that reads and writes them.
 * Paths are printf formats; a tree that cannot be built fails the test (include <cmocka.h>
 * first). */
#ifndef FAKE_SYSFS_H
#define FAKE_SYSFS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fake_tree {
	char root[64];
	char sys[96], dev[96], proc[96];
};

/* Formats the calling function's printf-style arguments (after fmt) into the array buf. */
#define FT_FORMAT(buf, fmt)                                                                        \
	do {                                                                                       \
		va_list ap_;                                                                       \
		va_start(ap_, fmt);                                                                \
		vsnprintf(buf, sizeof(buf), fmt, ap_);                                             \
		va_end(ap_);                                                                       \
	} while (0)

/* Runs a shell command; it must succeed. */
static inline void ft_run(const char *fmt, ...)
{
	char cmd[1024];
	FT_FORMAT(cmd, fmt);
	assert_int_equal(system(cmd), 0);
}

static inline void ft_mkdirs(const char *fmt, ...)
{
	char path[512];
	FT_FORMAT(path, fmt);
	ft_run("mkdir -p '%s'", path);
}

/* Writes text to the file (created or truncated). */
static inline void ft_put(const char *text, const char *fmt, ...)
{
	char path[512];
	FT_FORMAT(path, fmt);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* Creates the file if it is missing; leaves what it holds alone. */
static inline void ft_touch(const char *fmt, ...)
{
	char path[512];
	FT_FORMAT(path, fmt);
	FILE *fp = fopen(path, "a");
	assert_non_null(fp);
	fclose(fp);
}

/* Makes the path a symbolic link to target, replacing what was there. */
static inline void ft_link(const char *target, const char *fmt, ...)
{
	char path[512];
	FT_FORMAT(path, fmt);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
}

/* What the file holds (up to 255 bytes; "" if it cannot be read), in a buffer that the next
 * call reuses. */
static inline char *ft_slurp(const char *fmt, ...)
{
	static char buf[256];
	char path[512];
	FT_FORMAT(path, fmt);
	buf[0] = '\0';
	FILE *fp = fopen(path, "r");
	if (fp) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
		buf[n] = '\0';
		fclose(fp);
	}
	return buf;
}

/* A new tree under /tmp/myrio-fake-<name>-XXXXXX with empty sysfs PCI device and IOMMU
 * group directories and an empty /dev; the /proc path is set, not created. */
static inline void ft_create(struct fake_tree *t, const char *name)
{
	snprintf(t->root, sizeof(t->root), "/tmp/myrio-fake-%s-XXXXXX", name);
	assert_non_null(mkdtemp(t->root));
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
	snprintf(t->dev, sizeof(t->dev), "%s/dev", t->root);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
	ft_mkdirs("%s/bus/pci/devices", t->sys);
	ft_mkdirs("%s/kernel/iommu_groups", t->sys);
	ft_mkdirs("%s", t->dev);
}

static inline void ft_remove(struct fake_tree *t)
{
	ft_run("rm -rf '%s'", t->root);
}

/* Puts the device in IOMMU group `group`: links both ways, as the kernel does. */
static inline void ft_add_to_group(struct fake_tree *t, const char *addr, int group)
{
	char target[128];
	ft_mkdirs("%s/kernel/iommu_groups/%d/devices", t->sys, group);
	snprintf(target, sizeof(target), "../../../../kernel/iommu_groups/%d", group);
	ft_link(target, "%s/bus/pci/devices/%s/iommu_group", t->sys, addr);
	snprintf(target, sizeof(target), "../../../../bus/pci/devices/%s", addr);
	ft_link(target, "%s/kernel/iommu_groups/%d/devices/%s", t->sys, group, addr);
}

/* A PCI device: vendor and device files hold the texts given, driver_override is empty;
 * bound to driver (which gets an unbind file) unless NULL; in IOMMU group `group` if >= 0. */
static inline void ft_add_device(struct fake_tree *t, const char *addr, const char *vendor,
				 const char *device, const char *driver, int group)
{
	ft_mkdirs("%s/bus/pci/devices/%s", t->sys, addr);
	ft_put(vendor, "%s/bus/pci/devices/%s/vendor", t->sys, addr);
	ft_put(device, "%s/bus/pci/devices/%s/device", t->sys, addr);
	ft_put("", "%s/bus/pci/devices/%s/driver_override", t->sys, addr);
	if (driver) {
		char target[128];
		ft_mkdirs("%s/bus/pci/drivers/%s", t->sys, driver);
		ft_touch("%s/bus/pci/drivers/%s/unbind", t->sys, driver);
		snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s", driver);
		ft_link(target, "%s/bus/pci/devices/%s/driver", t->sys, addr);
	}
	if (group >= 0)
		ft_add_to_group(t, addr, group);
}

#endif
