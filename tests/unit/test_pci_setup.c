/* myrio-setup on a fake sysfs, /proc and /dev: the doctor names the fix for each problem,
 * and bind/unbind/hugepages write what the kernel expects where it expects it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The tool's own sources, so that the test runs exactly its code. */
#include "../../tools/myrio-setup/bind.c"
#include "../../tools/myrio-setup/check.c"
#include "../../tools/myrio-setup/hugepages.c"
#include "../../tools/myrio-setup/report.c"

struct fake {
	char root[64], sys[96], dev[96], proc[96];
	struct setup_ctx c;
	char *out;
	size_t out_len;
};

static void run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static void put(const char *text, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static char *slurp(const char *fmt, ...)
{
	static char buf[256];
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = '\0';
	FILE *fp = fopen(path, "r");
	if (fp) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
		buf[n] = '\0';
		fclose(fp);
	}
	return buf;
}

static void add_device(struct fake *f, const char *addr, const char *driver, int group)
{
	run("mkdir -p %s/bus/pci/devices/%s", f->sys, addr);
	put("0x14c1\n", "%s/bus/pci/devices/%s/vendor", f->sys, addr);
	put("0x0008\n", "%s/bus/pci/devices/%s/device", f->sys, addr);
	put("", "%s/bus/pci/devices/%s/driver_override", f->sys, addr);
	if (driver) {
		run("mkdir -p %s/bus/pci/drivers/%s && touch %s/bus/pci/drivers/%s/unbind", f->sys,
		    driver, f->sys, driver);
		run("ln -sfn ../../../../bus/pci/drivers/%s %s/bus/pci/devices/%s/driver", driver,
		    f->sys, addr);
	}
	if (group >= 0) {
		run("mkdir -p %s/kernel/iommu_groups/%d/devices", f->sys, group);
		run("ln -sfn ../../../../kernel/iommu_groups/%d %s/bus/pci/devices/%s/iommu_group",
		    group, f->sys, addr);
		run("ln -sfn ../../../../bus/pci/devices/%s %s/kernel/iommu_groups/%d/devices/%s",
		    addr, f->sys, group, addr);
	}
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	strcpy(f->root, "/tmp/myrio-fake-setup-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->dev, sizeof(f->dev), "%s/dev", f->root);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	run("mkdir -p %s/bus/pci/devices %s/kernel/iommu_groups %s/vfio %s/sys/vm", f->sys, f->sys,
	    f->dev, f->proc);
	put("", "%s/bus/pci/drivers_probe", f->sys);
	put("ro quiet\n", "%s/cmdline", f->proc);
	put("HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n",
	    "%s/meminfo", f->proc);
	put("proc /proc proc rw 0 0\n", "%s/mounts", f->proc);
	f->c.paths.sysfs = f->sys;
	f->c.paths.dev = f->dev;
	f->c.proc = f->proc;
	f->c.out = open_memstream(&f->out, &f->out_len);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	fclose(f->c.out);
	free(f->out);
	run("rm -rf %s", f->root);
	free(f);
	return 0;
}

static const char *output(struct fake *f)
{
	fflush(f->c.out);
	return f->out;
}

static void check_names_the_fix_for_each_problem(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "myri10ge", -1);
	assert_int_equal(setup_check(&f->c, "03:00.0"), 0);
	const char *o = output(f);
	assert_non_null(
	    strstr(o, "FIX  no hugepages reserved\n       -> myrio-setup hugepages 512"));
	assert_non_null(strstr(o, "-> mkdir -p /dev/hugepages && mount -t hugetlbfs nodev"));
	assert_non_null(strstr(o, "IOMMU off"));
	assert_non_null(strstr(o, "intel_iommu=on"));
	assert_non_null(strstr(o, "-> modprobe vfio-pci"));
	assert_non_null(strstr(o, "14c1:0008 (Myri-10G)"));
	assert_non_null(strstr(o, "0000:03:00.0 has no IOMMU group"));
	assert_true(f->c.problems >= 5);
}

static void check_finds_nothing_on_a_ready_host(void **state)
{
	struct fake *f = *state;
	struct rlimit rl;
	put("HugePages_Total:     512\nHugePages_Free:      500\nHugepagesize:       2048 kB\n",
	    "%s/meminfo", f->proc);
	put("nodev /dev/hugepages hugetlbfs rw 0 0\n", "%s/mounts", f->proc);
	put("ro intel_iommu=on\n", "%s/cmdline", f->proc);
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	put("", "%s/vfio/7", f->dev);
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	const char *o = output(f);
	assert_non_null(strstr(o, "512 hugepages of 2048 kB reserved"));
	assert_non_null(strstr(o, "hugetlbfs mounted on /dev/hugepages"));
	assert_non_null(strstr(o, "requested on the kernel command line"));
	assert_non_null(strstr(o, "ok   0000:03:00.0: vfio-pci"));
	assert_non_null(strstr(o, "/vfio/7 accessible"));
	/* Only the memlock limit depends on who runs the test. */
	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (has_ipc_lock() || rl.rlim_cur == RLIM_INFINITY) {
		assert_int_equal(f->c.problems, 0);
		assert_non_null(strstr(o, "everything libmyrio needs is in place"));
	}
	assert_null(strstr(o, "FIX  0000"));
}

static void check_names_the_member_that_blocks_the_group(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	add_device(f, "0000:03:00.1", "igb", 7);
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	const char *o = output(f);
	assert_non_null(strstr(o, "FIX  0000:03:00.1: igb, blocks the group"));
	assert_non_null(strstr(o, "-> myrio-setup bind --group 0000:03:00.0"));
	assert_non_null(strstr(o, "/vfio/7 missing"));
}

static void bind_overrides_unbinds_and_probes(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "ixgbe", 7);
	run("mkdir -p %s/bus/pci/drivers/vfio-pci", f->sys);
	/* The fake kernel does not rebind, so the tool must notice and fail. */
	assert_int_equal(setup_bind(&f->c, "03:00.0", false), -EIO);
	assert_string_equal(slurp("%s/bus/pci/devices/0000:03:00.0/driver_override", f->sys),
			    "vfio-pci");
	assert_string_equal(slurp("%s/bus/pci/drivers/ixgbe/unbind", f->sys), "0000:03:00.0");
	assert_string_equal(slurp("%s/bus/pci/drivers_probe", f->sys), "0000:03:00.0");
}

static void bind_group_leaves_bridges_and_bound_members_alone(void **state)
{
	struct fake *f = *state;
	run("mkdir -p %s/bus/pci/drivers/vfio-pci", f->sys);
	add_device(f, "0000:00:01.0", "pcieport", 7);
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	add_device(f, "0000:03:00.1", "igb", 7);
	assert_int_equal(setup_bind(&f->c, "0000:03:00.0", true), -EIO);
	assert_string_equal(slurp("%s/bus/pci/devices/0000:00:01.0/driver_override", f->sys), "");
	assert_string_equal(slurp("%s/bus/pci/devices/0000:03:00.0/driver_override", f->sys), "");
	assert_string_equal(slurp("%s/bus/pci/devices/0000:03:00.1/driver_override", f->sys),
			    "vfio-pci");
	assert_string_equal(slurp("%s/bus/pci/drivers/igb/unbind", f->sys), "0000:03:00.1");
	const char *o = output(f);
	assert_non_null(strstr(o, "0000:00:01.0 is a PCIe port"));
	assert_non_null(strstr(o, "0000:03:00.0 is already bound to vfio-pci"));
}

static void unbind_clears_the_override_and_reprobes(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	put("vfio-pci", "%s/bus/pci/devices/0000:03:00.0/driver_override", f->sys);
	assert_int_equal(setup_unbind(&f->c, "0000:03:00.0", false), 0);
	assert_string_equal(slurp("%s/bus/pci/devices/0000:03:00.0/driver_override", f->sys), "\n");
	assert_string_equal(slurp("%s/bus/pci/drivers/vfio-pci/unbind", f->sys), "0000:03:00.0");
	assert_string_equal(slurp("%s/bus/pci/drivers_probe", f->sys), "0000:03:00.0");
}

static void hugepages_reserves_and_reports(void **state)
{
	struct fake *f = *state;
	put("0\n", "%s/sys/vm/nr_hugepages", f->proc);
	put("HugePages_Total:      64\nHugePages_Free:       64\nHugepagesize:       2048 kB\n",
	    "%s/meminfo", f->proc);
	put("nodev /mnt/huge hugetlbfs rw 0 0\n", "%s/mounts", f->proc);
	assert_int_equal(setup_hugepages(&f->c, 64), 0);
	assert_string_equal(slurp("%s/sys/vm/nr_hugepages", f->proc), "64");
	const char *o = output(f);
	assert_non_null(strstr(o, "64 hugepages of 2048 kB reserved (64 free)"));
	assert_non_null(strstr(o, "hugetlbfs mounted on /mnt/huge"));
}

static void rejects_bad_addresses(void **state)
{
	struct fake *f = *state;
	assert_int_equal(setup_bind(&f->c, "3:0.0", false), -EINVAL);
	assert_int_equal(setup_unbind(&f->c, "0000:03:00.0.1", true), -EINVAL);
	assert_int_equal(setup_check(&f->c, "nonsense"), 0);
	assert_non_null(strstr(output(f), "'nonsense' is not a PCI address"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(check_names_the_fix_for_each_problem, setup, teardown),
	    cmocka_unit_test_setup_teardown(check_finds_nothing_on_a_ready_host, setup, teardown),
	    cmocka_unit_test_setup_teardown(check_names_the_member_that_blocks_the_group, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(bind_overrides_unbinds_and_probes, setup, teardown),
	    cmocka_unit_test_setup_teardown(bind_group_leaves_bridges_and_bound_members_alone,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(unbind_clears_the_override_and_reprobes, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(hugepages_reserves_and_reports, setup, teardown),
	    cmocka_unit_test_setup_teardown(rejects_bad_addresses, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
