/* SPDX-License-Identifier: BSD-3-Clause */
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
#include "port/port_ops.h"

#include "fake_sysfs.h"

struct fake {
	struct fake_tree t;
	struct myrio_vfio_paths paths;
	myrio_pci_claim_fn claim; /* NULL: any function */
	char log[8192];
};

static void capture(enum myrio_log_level level, const char *msg, void *arg)
{
	struct fake *f = arg;
	size_t n = strlen(f->log);
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	ft_create(&f->t, "sysfs");
	f->paths.sysfs = f->t.sys;
	f->paths.dev = f->t.dev;
	myrio_log_set(capture, f, MYRIO_LOG_DEBUG);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
	ft_remove(&f->t);
	free(f);
	return 0;
}

/* A host that is ready up to the VFIO character devices. */
static void ready_host(struct fake *f)
{
	ft_add_device(&f->t, "0000:03:00.0", "0x14c1", "0x0008", "vfio-pci", 7);
}

static int open_vfio(struct fake *f, const char *addr)
{
	struct myrio_bus *bus = (struct myrio_bus *)0x1;
	f->log[0] = '\0';
	int rc = myrio_vfio_open_at(&f->paths, addr, f->claim, &bus);
	assert_null(bus);
	return rc;
}

static void rejects_a_malformed_address(void **state)
{
	struct fake *f = *state;
	assert_int_equal(open_vfio(f, "03:00"), -EINVAL);
	assert_non_null(strstr(f->log, "not a PCI address"));
}

static void rejects_a_missing_device(void **state)
{
	struct fake *f = *state;
	assert_int_equal(open_vfio(f, "0000:04:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "no PCI device 0000:04:00.0"));
	assert_non_null(strstr(f->log, "lspci"));
}

/* The bus opens any function: what a driver makes of its IDs is the driver table's
 * business, so an Intel NIC is refused only for the kernel driver holding it. */
static void judges_no_device_by_its_ids(void **state)
{
	struct fake *f = *state;
	ft_mkdirs("%s/bus/pci/drivers/vfio-pci", f->t.sys);
	ft_add_device(&f->t, "0000:05:00.0", "0x8086", "0x10d3", "e1000e", 7);
	assert_int_equal(open_vfio(f, "05:00.0"), -EBUSY);
	assert_null(strstr(f->log, "not a Myri-10G"));
	assert_non_null(strstr(f->log, "bound to e1000e"));
}

/* A function bound to vfio-pci that no driver claims is refused from its sysfs IDs, before
 * the VFIO device is opened (that would reset somebody else's device): the container device
 * here is a plain file, so any attempt to open VFIO would fail on it instead. */
static void refuses_an_unclaimed_function_before_opening_it(void **state)
{
	struct fake *f = *state;
	ft_mkdirs("%s/bus/pci/drivers/vfio-pci", f->t.sys);
	ft_add_device(&f->t, "0000:05:00.0", "0x8086", "0x1521", "vfio-pci", 7); /* an I350 */
	ft_mkdirs("%s/vfio", f->t.dev);
	ft_put("", "%s/vfio/vfio", f->t.dev);
	assert_int_equal(open_vfio(f, "05:00.0"), -ENOTTY); /* with no claim, VFIO is reached */
	f->claim = myrio_driver_claims;
	assert_int_equal(open_vfio(f, "05:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "0000:05:00.0 is 8086:1521, a PCI function no libmyrio driver claims"));
	assert_null(strstr(f->log, "VFIO container"));
}

static void explains_how_to_turn_the_iommu_on(void **state)
{
	struct fake *f = *state;
	ft_add_device(&f->t, "0000:03:00.0", "0x14c1", "0x0009", "myri10ge", -1);
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "IOMMU is off"));
	assert_non_null(strstr(f->log, "intel_iommu=on"));
	assert_int_equal(myrio_iommu_active(&f->paths), -ENODEV);
}

static void explains_a_device_outside_any_group(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	ft_add_device(&f->t, "0000:06:00.0", "0x14c1", "0x0008", "vfio-pci", -1);
	assert_int_equal(open_vfio(f, "0000:06:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "in no IOMMU group although the IOMMU is on"));
}

static void asks_to_load_vfio_pci(void **state)
{
	struct fake *f = *state;
	ft_add_device(&f->t, "0000:03:00.0", "0x14c1", "0x0008", "myri10ge", 7);
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -ENODEV);
	assert_non_null(strstr(f->log, "modprobe vfio-pci"));
}

static void names_the_driver_holding_the_device(void **state)
{
	struct fake *f = *state;
	ft_mkdirs("%s/bus/pci/drivers/vfio-pci", f->t.sys);
	ft_add_device(&f->t, "0000:03:00.0", "0x14c1", "0x0008", "myri10ge", 7);
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -EBUSY);
	assert_non_null(strstr(f->log, "bound to myri10ge, not vfio-pci"));
	assert_non_null(strstr(f->log, "myrio-setup bind 0000:03:00.0"));
}

static void asks_to_bind_an_unbound_device(void **state)
{
	struct fake *f = *state;
	ft_mkdirs("%s/bus/pci/drivers/vfio-pci", f->t.sys);
	ft_add_device(&f->t, "0000:03:00.0", "0x14c1", "0x0008", NULL, 7);
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -EBUSY);
	assert_non_null(strstr(f->log, "bound to no driver"));
	assert_non_null(strstr(f->log, "myrio-setup bind 0000:03:00.0"));
}

static void names_the_group_member_that_blocks(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	ft_add_device(&f->t, "0000:03:00.1", "0x8086", "0x1533", "igb", 7);
	ft_add_device(&f->t, "0000:00:01.0", "0x8086", "0x1901", "pcieport", 7);
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -EBUSY);
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
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -ENOENT);
	assert_non_null(strstr(f->log, "/dev/vfio/vfio does not exist"));
	assert_non_null(strstr(f->log, "modprobe vfio-pci"));
}

static void refuses_something_that_is_not_vfio(void **state)
{
	struct fake *f = *state;
	ready_host(f);
	ft_mkdirs("%s/vfio", f->t.dev);
	ft_put("", "%s/vfio/vfio", f->t.dev); /* a plain file: every ioctl fails */
	assert_int_equal(open_vfio(f, "0000:03:00.0"), -ENOTTY);
	assert_non_null(strstr(f->log, "is not the VFIO container device"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(rejects_a_malformed_address, setup, teardown),
	    cmocka_unit_test_setup_teardown(rejects_a_missing_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(judges_no_device_by_its_ids, setup, teardown),
	    cmocka_unit_test_setup_teardown(refuses_an_unclaimed_function_before_opening_it, setup,
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
