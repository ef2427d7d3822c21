/* SPDX-License-Identifier: BSD-3-Clause */
/* Hugepages: reserve, mount, report. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "setup.h"

int setup_hugepage_info(struct setup_ctx *c, long *total, long *free_pages, long *size_kb)
{
	char path[PATH_MAX], line[256];
	snprintf(path, sizeof(path), "%s/meminfo", c->proc);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	*total = *free_pages = *size_kb = 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "HugePages_Total: %ld", total);
		sscanf(line, "HugePages_Free: %ld", free_pages);
		sscanf(line, "Hugepagesize: %ld kB", size_kb);
	}
	fclose(f);
	return 0;
}

bool setup_hugetlbfs_mounted(struct setup_ctx *c, char *dir, unsigned len)
{
	char path[PATH_MAX], line[512], dev[128], mnt[256], type[64];
	snprintf(path, sizeof(path), "%s/mounts", c->proc);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %255s %63s", dev, mnt, type) == 3 &&
		    strcmp(type, "hugetlbfs") == 0) {
			snprintf(dir, len, "%s", mnt);
			found = true;
		}
	fclose(f);
	return found;
}

int setup_hugepages(struct setup_ctx *c, long n)
{
	char path[PATH_MAX], val[32], dir[256];
	snprintf(path, sizeof(path), "%s/sys/vm/nr_hugepages", c->proc);
	snprintf(val, sizeof(val), "%ld", n);
	int rc = myrio_sysfs_write(path, val);
	if (rc < 0) {
		fprintf(stderr, "myrio-setup: writing %s: %s (run as root)\n", path, strerror(-rc));
		return rc;
	}
	long total, free_pages, size_kb;
	if (setup_hugepage_info(c, &total, &free_pages, &size_kb) == 0) {
		fprintf(c->out, "myrio-setup: %ld hugepages of %ld kB reserved (%ld free)\n", total,
			size_kb, free_pages);
		if (total < n)
			fprintf(stderr,
				"myrio-setup: only %ld of %ld could be reserved: memory is "
				"fragmented; retry after 'echo 3 > /proc/sys/vm/drop_caches' "
				"or reserve at boot with hugepages=%ld on the kernel "
				"command line\n",
				total, n, n);
	}
	if (setup_hugetlbfs_mounted(c, dir, sizeof(dir))) {
		fprintf(c->out, "myrio-setup: hugetlbfs mounted on %s\n", dir);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/hugepages", myrio_dev_root(&c->paths));
	mkdir(dir, 0755);
	if (mount("nodev", dir, "hugetlbfs", 0, NULL) != 0) {
		rc = -errno;
		fprintf(stderr, "myrio-setup: mount -t hugetlbfs nodev %s: %s\n", dir,
			strerror(-rc));
		return rc;
	}
	fprintf(c->out, "myrio-setup: hugetlbfs mounted on %s\n", dir);
	return 0;
}
