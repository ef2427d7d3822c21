/* SPDX-License-Identifier: BSD-3-Clause */
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

/* The tool's own code, linked from its library (myrio-setup_core). */
#include "setup.h"

#include "fake_sysfs.h"

struct fake {
	struct fake_tree t;
	struct setup_ctx c;
	char *out;
	size_t out_len;
};

/* A Myri-10G at addr, bound to driver unless NULL, in IOMMU group `group` if >= 0. */
static void add_device(struct fake *f, const char *addr, const char *driver, int group)
{
	ft_add_device(&f->t, addr, "0x14c1\n", "0x0008\n", driver, group);
}

/* What the device's driver_override file holds. */
static const char *override_of(struct fake *f, const char *addr)
{
	return ft_slurp("%s/bus/pci/devices/%s/driver_override", f->t.sys, addr);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	ft_create(&f->t, "setup");
	ft_mkdirs("%s/vfio", f->t.dev);
	ft_mkdirs("%s/sys/vm", f->t.proc);
	ft_put("", "%s/bus/pci/drivers_probe", f->t.sys);
	ft_put("ro quiet\n", "%s/cmdline", f->t.proc);
	ft_put("HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n",
	       "%s/meminfo", f->t.proc);
	ft_put("proc /proc proc rw 0 0\n", "%s/mounts", f->t.proc);
	f->c.paths.sysfs = f->t.sys;
	f->c.paths.dev = f->t.dev;
	f->c.proc = f->t.proc;
	f->c.out = open_memstream(&f->out, &f->out_len);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	fclose(f->c.out);
	free(f->out);
	ft_remove(&f->t);
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
	assert_non_null(strstr(o, "14c1:0008 (Myri-10G, driver myri10ge)"));
	assert_non_null(strstr(o, "0000:03:00.0 has no IOMMU group"));
	assert_true(f->c.problems >= 5);
}

static void check_finds_nothing_on_a_ready_host(void **state)
{
	struct fake *f = *state;
	struct rlimit rl;
	ft_put("HugePages_Total:     512\nHugePages_Free:      500\nHugepagesize:       2048 kB\n",
	       "%s/meminfo", f->t.proc);
	ft_put("nodev /dev/hugepages hugetlbfs rw 0 0\n", "%s/mounts", f->t.proc);
	ft_put("ro intel_iommu=on\n", "%s/cmdline", f->t.proc);
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	ft_put("", "%s/vfio/7", f->t.dev);
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	const char *o = output(f);
	assert_non_null(strstr(o, "512 hugepages of 2048 kB reserved"));
	assert_non_null(strstr(o, "hugetlbfs mounted on /dev/hugepages"));
	assert_non_null(strstr(o, "requested on the kernel command line"));
	assert_non_null(strstr(o, "ok   0000:03:00.0: vfio-pci"));
	assert_non_null(strstr(o, "/vfio/7 accessible"));
	/* Only the memlock limit depends on who runs the test. */
	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (setup_has_ipc_lock() || rl.rlim_cur == RLIM_INFINITY) {
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
	ft_mkdirs("%s/bus/pci/drivers/vfio-pci", f->t.sys);
	/* The fake kernel does not rebind, so the tool must notice and fail. */
	assert_int_equal(setup_bind(&f->c, "03:00.0", false), -EIO);
	assert_string_equal(override_of(f, "0000:03:00.0"), "vfio-pci");
	assert_string_equal(ft_slurp("%s/bus/pci/drivers/ixgbe/unbind", f->t.sys), "0000:03:00.0");
	assert_string_equal(ft_slurp("%s/bus/pci/drivers_probe", f->t.sys), "0000:03:00.0");
}

static void bind_group_leaves_bridges_and_bound_members_alone(void **state)
{
	struct fake *f = *state;
	ft_mkdirs("%s/bus/pci/drivers/vfio-pci", f->t.sys);
	add_device(f, "0000:00:01.0", "pcieport", 7);
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	add_device(f, "0000:03:00.1", "igb", 7);
	assert_int_equal(setup_bind(&f->c, "0000:03:00.0", true), -EIO);
	assert_string_equal(override_of(f, "0000:00:01.0"), "");
	assert_string_equal(override_of(f, "0000:03:00.0"), "");
	assert_string_equal(override_of(f, "0000:03:00.1"), "vfio-pci");
	assert_string_equal(ft_slurp("%s/bus/pci/drivers/igb/unbind", f->t.sys), "0000:03:00.1");
	const char *o = output(f);
	assert_non_null(strstr(o, "0000:00:01.0 is a PCIe port"));
	assert_non_null(strstr(o, "0000:03:00.0 is already bound to vfio-pci"));
}

static void unbind_clears_the_override_and_reprobes(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "vfio-pci", 7);
	ft_put("vfio-pci", "%s/bus/pci/devices/0000:03:00.0/driver_override", f->t.sys);
	assert_int_equal(setup_unbind(&f->c, "0000:03:00.0", false), 0);
	assert_string_equal(override_of(f, "0000:03:00.0"), "\n");
	assert_string_equal(ft_slurp("%s/bus/pci/drivers/vfio-pci/unbind", f->t.sys),
			    "0000:03:00.0");
	assert_string_equal(ft_slurp("%s/bus/pci/drivers_probe", f->t.sys), "0000:03:00.0");
}

static void hugepages_reserves_and_reports(void **state)
{
	struct fake *f = *state;
	ft_put("0\n", "%s/sys/vm/nr_hugepages", f->t.proc);
	ft_put("HugePages_Total:      64\nHugePages_Free:       64\nHugepagesize:       2048 kB\n",
	       "%s/meminfo", f->t.proc);
	ft_put("nodev /mnt/huge hugetlbfs rw 0 0\n", "%s/mounts", f->t.proc);
	assert_int_equal(setup_hugepages(&f->c, 64), 0);
	assert_string_equal(ft_slurp("%s/sys/vm/nr_hugepages", f->t.proc), "64");
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

/* A Myri-10G at 0000:03:00.0 behind the root port 0000:00:01.0, whose 4 KiB config file
 * has a PCIe capability (root port) and AER with the given mask and control registers. */
static void add_bridged_device(struct fake *f, uint32_t aer_mask, uint32_t aer_ctl)
{
	const char *bdir = "devices/pci0000:00/0000:00:01.0";
	ft_mkdirs("%s/%s/0000:03:00.0", f->t.sys, bdir);
	ft_link("../../../devices/pci0000:00/0000:00:01.0/0000:03:00.0",
		"%s/bus/pci/devices/0000:03:00.0", f->t.sys);
	ft_put("0x14c1\n", "%s/bus/pci/devices/0000:03:00.0/vendor", f->t.sys);
	ft_put("0x0008\n", "%s/bus/pci/devices/0000:03:00.0/device", f->t.sys);
	ft_add_to_group(&f->t, "0000:03:00.0", 7);
	static uint8_t cfg[4096];
	memset(cfg, 0, sizeof(cfg));
	cfg[0x06] = 0x10; /* capability list */
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x10;  /* PCIe */
	cfg[0x42] = 0x42;  /* v2, root port */
	cfg[0x100] = 0x01; /* AER, v1, last */
	cfg[0x102] = 0x01;
	memcpy(cfg + 0x108, &aer_mask, 4); /* little-endian host, as config space */
	memcpy(cfg + 0x118, &aer_ctl, 4);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/config", f->t.sys, bdir);
	FILE *cf = fopen(path, "wb");
	assert_non_null(cf);
	assert_int_equal(fwrite(cfg, 1, sizeof(cfg), cf), sizeof(cfg));
	fclose(cf);
}

static uint32_t bridge_reg(struct fake *f, unsigned off)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/config", f->t.sys);
	FILE *cf = fopen(path, "rb");
	uint32_t v = 0;
	assert_non_null(cf);
	assert_int_equal(fseek(cf, (long)off, SEEK_SET), 0);
	assert_int_equal(fread(&v, 4, 1, cf), 1);
	fclose(cf);
	return v;
}

/* check names the two bridge settings Linux makes and VFIO does not, with the setpci
 * commands; bridge makes them, and check then finds them in place. */
static void bridge_settings_checked_and_applied(void **state)
{
	struct fake *f = *state;
	add_bridged_device(f, 0x00000000u, 0x000000a0u); /* ECRC gen+check capable, off */
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	const char *o = output(f);
	assert_non_null(strstr(o, "FIX  upstream bridge 0000:00:01.0: Surprise Down not masked"));
	assert_non_null(
	    strstr(o, "-> setpci -s 0000:00:01.0 ECAP_AER+0x08.L=0x00000020:0x00000020"));
	assert_non_null(strstr(o, "FIX  root port 0000:00:01.0: ECRC generation off"));
	assert_non_null(
	    strstr(o, "-> setpci -s 0000:00:01.0 ECAP_AER+0x18.L=0x00000040:0x00000040"));
	assert_int_equal(setup_bridge(&f->c, "03:00.0"), 0);
	assert_int_equal(bridge_reg(f, 0x108), 0x00000020u);
	assert_int_equal(bridge_reg(f, 0x118), 0x000000e0u);
	f->c.problems = 0;
	fflush(f->c.out);
	size_t before = f->out_len;
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	o = output(f) + before;
	assert_non_null(strstr(o, "ok   upstream bridge 0000:00:01.0: Surprise Down masked"));
	assert_non_null(strstr(o, "ok   root port 0000:00:01.0 generates ECRC"));
	assert_null(strstr(o, "FIX  upstream"));
	assert_null(strstr(o, "FIX  root port"));
}

/* A root port that cannot generate ECRC, and a bridge with a corrupt extended capability
 * chain: reported, nothing written out of bounds. */
static void bridge_without_ecrc_or_with_a_bad_chain(void **state)
{
	struct fake *f = *state;
	add_bridged_device(f, 0x00000020u, 0x00000000u);
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	const char *o = output(f);
	assert_non_null(strstr(o, "ok   upstream bridge 0000:00:01.0: Surprise Down masked"));
	assert_non_null(strstr(o, "cannot generate ECRC"));
	/* a chain pointing past the end of config space: no AER found */
	char path[512];
	snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/config", f->t.sys);
	FILE *cf = fopen(path, "r+b");
	uint32_t bad = 0xffc00002u; /* id 2, next 0xffc */
	fseek(cf, 0x100, SEEK_SET);
	fwrite(&bad, 4, 1, cf);
	fclose(cf);
	fflush(f->c.out);
	size_t before = f->out_len;
	assert_int_equal(setup_check(&f->c, "0000:03:00.0"), 0);
	assert_non_null(strstr(output(f) + before, "has no AER capability"));
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
	    cmocka_unit_test_setup_teardown(bridge_settings_checked_and_applied, setup, teardown),
	    cmocka_unit_test_setup_teardown(bridge_without_ecrc_or_with_a_bad_chain, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
