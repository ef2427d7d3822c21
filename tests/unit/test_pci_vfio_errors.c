/* The VFIO open path's failures that can be provoked without VFIO: each must be refused
 * with the right error and a message that names the fix. The sysfs and /dev roots point at
 * a fake tree built in a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "myrio/log.h"
#include "pci/iommu_group.h"
#include "pci/vfio.h"

struct fake {
	char root[256];
	char sys[300], dev[300];
	struct myrio_vfio_paths paths;
	char log[8192];
};

static void capture(enum myrio_log_level level, const char *msg, void *arg)
{
	struct fake *f = arg;
	size_t n = strlen(f->log);
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

static void mkdirs(const char *fmt, ...)
{
	char path[512], cmd[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
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

static void link_to(const char *target, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
}

/* A device in sysfs: ids, and optionally a driver. */
static void add_device(struct fake *f, const char *addr, const char *vendor, const char *device,
		       const char *driver)
{
	mkdirs("%s/bus/pci/devices/%s", f->sys, addr);
	put(vendor, "%s/bus/pci/devices/%s/vendor", f->sys, addr);
	put(device, "%s/bus/pci/devices/%s/device", f->sys, addr);
	if (driver) {
		mkdirs("%s/bus/pci/drivers/%s", f->sys, driver);
		char target[128];
		snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s", driver);
		link_to(target, "%s/bus/pci/devices/%s/driver", f->sys, addr);
	}
}

static void add_to_group(struct fake *f, const char *addr, int group)
{
	char target[128];
	mkdirs("%s/kernel/iommu_groups/%d/devices", f->sys, group);
	snprintf(target, sizeof(target), "../../../../kernel/iommu_groups/%d", group);
	link_to(target, "%s/bus/pci/devices/%s/iommu_group", f->sys, addr);
	snprintf(target, sizeof(target), "../../../../bus/pci/devices/%s", addr);
	link_to(target, "%s/kernel/iommu_groups/%d/devices/%s", f->sys, group, addr);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	strcpy(f->root, "/tmp/myrio-fake-sysfs-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->dev, sizeof(f->dev), "%s/dev", f->root);
	mkdirs("%s/bus/pci/devices", f->sys);
	mkdirs("%s/kernel/iommu_groups", f->sys);
	mkdirs("%s", f->dev);
	f->paths.sysfs = f->sys;
	f->paths.dev = f->dev;
	myrio_log_set(capture, f, MYRIO_LOG_DEBUG);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	char cmd[400];
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* A host that is ready up to the VFIO character devices. */
static void ready_host(struct fake *f)
{
	add_device(f, "0000:03:00.0", "0x14c1", "0x0008", "vfio-pci");
	add_to_group(f, "0000:03:00.0", 7);
}

static int open_myri(struct fake *f, const char *addr)
{
	struct myrio_bus *bus = (struct myrio_bus *)0x1;
	f->log[0] = '\0';
	int rc = myrio_vfio_open_myri_at(&f->paths, addr, &bus);
	assert_null(bus);
	return rc;
}

static void rejects_a_malformed_address(void **state)
{
	struct fake *f = *state;
	assert_int_equal(open_myri(f, "03:00"), -EINVAL);
	assert_non_null(strstr(f->log, "not a PCI address"));
}

static void rejects_a_missing_device(void **state)
{
	struct fake *f = *state;
	assert_int_equal(open_myri(f, "0000:04:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "no PCI device 0000:04:00.0"));
	assert_non_null(strstr(f->log, "lspci"));
}

static void rejects_a_device_that_is_not_a_myri10ge(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:05:00.0", "0x8086", "0x10d3", "e1000e");
	assert_int_equal(open_myri(f, "05:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "8086:10d3, not a Myri-10G"));
}

static void explains_how_to_turn_the_iommu_on(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "0x14c1", "0x0009", "myri10ge");
	assert_int_equal(open_myri(f, "0000:03:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "IOMMU is off"));
	assert_non_null(strstr(f->log, "intel_iommu=on"));
	assert_int_equal(myrio_iommu_active(&f->paths), -ENODEV);
}

static void explains_a_device_outside_any_group(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	add_device(f, "0000:06:00.0", "0x14c1", "0x0008", "vfio-pci");
	assert_int_equal(open_myri(f, "0000:06:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "in no IOMMU group although the IOMMU is on"));
}

static void asks_to_load_vfio_pci(void **state)
{
	struct fake *f = *state;
	add_device(f, "0000:03:00.0", "0x14c1", "0x0008", "myri10ge");
	add_to_group(f, "0000:03:00.0", 7);
	assert_int_equal(open_myri(f, "0000:03:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "modprobe vfio-pci"));
}

static void names_the_driver_holding_the_device(void **state)
{
	struct fake *f = *state;
	mkdirs("%s/bus/pci/drivers/vfio-pci", f->sys);
	add_device(f, "0000:03:00.0", "0x14c1", "0x0008", "myri10ge");
	add_to_group(f, "0000:03:00.0", 7);
	assert_int_equal(open_myri(f, "0000:03:00.0"), -EBUSY);
	assert_non_null(strstr(f->log, "bound to myri10ge, not vfio-pci"));
	assert_non_null(strstr(f->log, "myrio-setup bind 0000:03:00.0"));
}

static void asks_to_bind_an_unbound_device(void **state)
{
	struct fake *f = *state;
	mkdirs("%s/bus/pci/drivers/vfio-pci", f->sys);
	add_device(f, "0000:03:00.0", "0x14c1", "0x0008", NULL);
	add_to_group(f, "0000:03:00.0", 7);
	assert_int_equal(open_myri(f, "0000:03:00.0"), -EBUSY);
	assert_non_null(strstr(f->log, "bound to no driver"));
	assert_non_null(strstr(f->log, "myrio-setup bind 0000:03:00.0"));
}

static void names_the_group_member_that_blocks(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	add_device(f, "0000:03:00.1", "0x8086", "0x1533", "igb");
	add_to_group(f, "0000:03:00.1", 7);
	add_device(f, "0000:00:01.0", "0x8086", "0x1901", "pcieport");
	add_to_group(f, "0000:00:01.0", 7);
	assert_int_equal(open_myri(f, "0000:03:00.0"), -EBUSY);
	assert_non_null(strstr(f->log, "shares IOMMU group 7 with 0000:03:00.1, which is bound "
				       "to igb"));
	assert_non_null(strstr(f->log, "myrio-setup bind --group 0000:03:00.0"));
	assert_null(strstr(f->log, "0000:00:01.0")); /* a bridge does not block */

	struct myrio_iommu_group g;
	assert_int_equal(myrio_iommu_group_read(&f->paths, "0000:03:00.0", &g), 0);
	assert_int_equal(g.id, 7);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.m[0].addr, "0000:00:01.0");
	assert_string_equal(g.m[0].driver, "pcieport");
	assert_string_equal(g.m[2].addr, "0000:03:00.1");
	assert_string_equal(g.m[2].driver, "igb");
}

static void asks_to_load_vfio_when_dev_vfio_is_missing(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	assert_int_equal(open_myri(f, "0000:03:00.0"), -ENOENT);
	assert_non_null(strstr(f->log, "/dev/vfio/vfio does not exist"));
	assert_non_null(strstr(f->log, "modprobe vfio-pci"));
}

static void refuses_something_that_is_not_vfio(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	mkdirs("%s/vfio", f->dev);
	put("", "%s/vfio/vfio", f->dev); /* a plain file: every ioctl fails */
	assert_int_equal(open_myri(f, "0000:03:00.0"), -ENOTTY);
	assert_non_null(strstr(f->log, "is not the VFIO container device"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(rejects_a_malformed_address, setup, teardown),
	    cmocka_unit_test_setup_teardown(rejects_a_missing_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(rejects_a_device_that_is_not_a_myri10ge, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(explains_how_to_turn_the_iommu_on, setup, teardown),
	    cmocka_unit_test_setup_teardown(explains_a_device_outside_any_group, setup, teardown),
	    cmocka_unit_test_setup_teardown(asks_to_load_vfio_pci, setup, teardown),
	    cmocka_unit_test_setup_teardown(names_the_driver_holding_the_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(asks_to_bind_an_unbound_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(names_the_group_member_that_blocks, setup, teardown),
	    cmocka_unit_test_setup_teardown(asks_to_load_vfio_when_dev_vfio_is_missing, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(refuses_something_that_is_not_vfio, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
