/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-setup: checks what libmyrio needs on a real NIC and fixes it.
 *
 *   myrio-setup check [PCI_ADDR]      report hugepages, IOMMU, vfio-pci, the device's IOMMU
 *                                     group, /dev/vfio permissions, memlock; each problem
 *                                     with the command that fixes it (exit 1 if any)
 *   myrio-setup bind [--group] ADDR   give the device (and with --group every member of its
 *                                     IOMMU group) to vfio-pci
 *   myrio-setup unbind [--group] ADDR give it back to its kernel driver
 *   myrio-setup bridge ADDR           on the device's upstream bridge, mask Surprise Down
 *                                     in AER and turn ECRC generation on (a root port), as
 *                                     Linux's myri10ge does
 *   myrio-setup hugepages N           reserve N hugepages and mount hugetlbfs
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "setup.h"

static int usage(void)
{
	fprintf(stderr, "usage: myrio-setup check [PCI_ADDR]\n"
			"       myrio-setup bind [--group] PCI_ADDR\n"
			"       myrio-setup unbind [--group] PCI_ADDR\n"
			"       myrio-setup bridge PCI_ADDR\n"
			"       myrio-setup hugepages N\n");
	return 2;
}

int main(int argc, char **argv)
{
	/* Run as root, the tool trusts nothing its caller's environment says: the fake
	 * roots exist only in a build made for testing it (-DMYRIO_SETUP_TEST_ROOTS). */
	struct setup_ctx c = {
#ifdef MYRIO_SETUP_TEST_ROOTS
	    .paths = {.sysfs = getenv("MYRIO_SYSFS_ROOT"), .dev = getenv("MYRIO_DEV_ROOT")},
	    .proc = getenv("MYRIO_PROC_ROOT") ? getenv("MYRIO_PROC_ROOT") : "/proc",
#else
	    .proc = "/proc",
#endif
	    .out = stdout,
	};
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	bool group = argc > 2 && strcmp(argv[2], "--group") == 0;
	const char *arg = argc > 2 + group ? argv[2 + group] : NULL;
	int rc;
	if (strcmp(cmd, "check") == 0 && argc <= 3)
		rc = setup_check(&c, arg);
	else if (strcmp(cmd, "bind") == 0 && arg && argc == 3 + group)
		rc = setup_bind(&c, arg, group);
	else if (strcmp(cmd, "unbind") == 0 && arg && argc == 3 + group)
		rc = setup_unbind(&c, arg, group);
	else if (strcmp(cmd, "bridge") == 0 && arg && !group && argc == 3)
		rc = setup_bridge(&c, arg);
	else if (strcmp(cmd, "hugepages") == 0 && argc == 3) {
		char *end;
		long n = strtol(argv[2], &end, 10);
		if (*end || n < 0)
			return usage();
		rc = setup_hugepages(&c, n);
	} else
		return usage();
	return rc == 0 && c.problems == 0 ? 0 : 1;
}
