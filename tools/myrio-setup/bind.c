/* SPDX-License-Identifier: BSD-3-Clause */
/* Binding devices to vfio-pci and back, through driver_override (kernel 3.16+). */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pci/iommu_group.h"
#include "pci/pci_addr.h"
#include "setup.h"

static int canonical(const char *in, char *out)
{
	struct myrio_pci_addr a;
	if (myrio_pci_addr_parse(in, &a) != 0) {
		fprintf(stderr, "myrio-setup: '%s' is not a PCI address (e.g. 0000:03:00.0)\n", in);
		return -EINVAL;
	}
	myrio_pci_addr_str(&a, out);
	return 0;
}

/* modprobe by absolute path with an environment of our own: PATH and the rest of the
 * caller's environment are not root's to trust. */
static int run_modprobe(const char *mod)
{
	static const char *const where[] = {"/usr/sbin/modprobe", "/sbin/modprobe"};
	char *argv[] = {"modprobe", (char *)mod, NULL};
	char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	const char *exe = NULL;
	pid_t pid;
	int st;
	for (unsigned i = 0; i < sizeof(where) / sizeof(where[0]) && !exe; i++)
		if (access(where[i], X_OK) == 0)
			exe = where[i];
	if (!exe || posix_spawn(&pid, exe, NULL, NULL, argv, envp) != 0)
		return -ENOENT;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -EIO;
	return 0;
}

static int write_attr(struct setup_ctx *c, const char *addr, const char *file, const char *val)
{
	char path[PATH_MAX];
	int rc = myrio_sysfs_dev_path(&c->paths, addr, file, path, sizeof(path));
	if (rc == 0)
		rc = myrio_sysfs_write(path, val);
	if (rc < 0)
		fprintf(stderr, "myrio-setup: writing '%s' to %s: %s\n", val, path, strerror(-rc));
	return rc;
}

static int probe(struct setup_ctx *c, const char *addr)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bus/pci/drivers_probe", myrio_sysfs_root(&c->paths));
	int rc = myrio_sysfs_write(path, addr);
	/* Probing a device that no driver wants fails with ENODEV/EINVAL: not an error. */
	return rc == -ENODEV || rc == -EINVAL ? 0 : rc;
}

static int unbind_driver(struct setup_ctx *c, const char *addr, const char *driver)
{
	if (!driver[0])
		return 0;
	int rc = write_attr(c, addr, "driver/unbind", addr);
	if (rc == 0)
		fprintf(c->out, "myrio-setup: %s released by %s\n", addr, driver);
	return rc;
}

static int bind_one(struct setup_ctx *c, const char *addr)
{
	char driver[64];
	int rc = myrio_pci_driver(&c->paths, addr, driver, sizeof(driver));
	if (rc < 0)
		return rc;
	if (strcmp(driver, "vfio-pci") == 0) {
		fprintf(c->out, "myrio-setup: %s is already bound to vfio-pci\n", addr);
		return 0;
	}
	if (strcmp(driver, "pcieport") == 0) {
		fprintf(c->out, "myrio-setup: %s is a PCIe port; it stays with pcieport\n", addr);
		return 0;
	}
	if ((rc = write_attr(c, addr, "driver_override", "vfio-pci")) < 0 ||
	    (rc = unbind_driver(c, addr, driver)) < 0 || (rc = probe(c, addr)) < 0)
		return rc;
	rc = myrio_pci_driver(&c->paths, addr, driver, sizeof(driver));
	if (rc == 0 && strcmp(driver, "vfio-pci") != 0) {
		fprintf(stderr,
			"myrio-setup: %s did not bind to vfio-pci (driver now: %s); see "
			"dmesg (the IOMMU must be on)\n",
			addr, driver[0] ? driver : "none");
		return -EIO;
	}
	if (rc == 0)
		fprintf(c->out, "myrio-setup: %s bound to vfio-pci\n", addr);
	return rc;
}

static int unbind_one(struct setup_ctx *c, const char *addr)
{
	char driver[64];
	int rc = myrio_pci_driver(&c->paths, addr, driver, sizeof(driver));
	if (rc < 0)
		return rc;
	if (strcmp(driver, "pcieport") == 0)
		return 0;
	if ((rc = write_attr(c, addr, "driver_override", "\n")) < 0)
		return rc;
	if (strcmp(driver, "vfio-pci") == 0 && (rc = unbind_driver(c, addr, driver)) < 0)
		return rc;
	if ((rc = probe(c, addr)) < 0)
		return rc;
	rc = myrio_pci_driver(&c->paths, addr, driver, sizeof(driver));
	if (rc == 0)
		fprintf(c->out, "myrio-setup: %s now bound to %s\n", addr,
			driver[0] ? driver : "no driver");
	return rc;
}

static int for_targets(struct setup_ctx *c, const char *in, bool group,
		       int (*fn)(struct setup_ctx *, const char *))
{
	char addr[MYRIO_PCI_ADDR_STRLEN + 1];
	int rc = canonical(in, addr);
	if (rc < 0)
		return rc;
	if (!group)
		return fn(c, addr);
	struct myrio_iommu_group g;
	rc = myrio_iommu_group_read(&c->paths, addr, &g);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < g.n && rc == 0; i++)
		rc = fn(c, g.m[i].addr);
	return rc;
}

int setup_bind(struct setup_ctx *c, const char *addr, bool group)
{
	char canon[MYRIO_PCI_ADDR_STRLEN + 1];
	if (canonical(addr, canon) < 0)
		return -EINVAL;
	if (myrio_vfio_pci_loaded(&c->paths) != 0) {
		if (run_modprobe("vfio-pci") != 0 || myrio_vfio_pci_loaded(&c->paths) != 0) {
			fprintf(stderr, "myrio-setup: the vfio-pci driver is not loaded and "
					"'modprobe vfio-pci' failed; install the kernel's modules "
					"package and load it\n");
			return -ENODEV;
		}
	}
	return for_targets(c, canon, group, bind_one);
}

int setup_unbind(struct setup_ctx *c, const char *addr, bool group)
{
	return for_targets(c, addr, group, unbind_one);
}
