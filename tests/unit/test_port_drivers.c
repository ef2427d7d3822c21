/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver table: PCI IDs and device-string prefixes to back-ends, and the refusal of a
 * function no driver claims (with its bus closed, nothing leaked). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "bus/bus.h"
#include "myrio/log.h"
#include "port/port_ops.h"

struct fake_bus {
	struct myrio_bus bus;
	uint16_t vendor, device;
	int cfg_error;
	int closed;
};

static char logged[2048];

static void capture(enum myrio_log_level level, const char *msg, void *arg)
{
	size_t n = strlen(logged);
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static int fb_cfg_read(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t *val)
{
	struct fake_bus *f = (struct fake_bus *)bus;
	if (f->cfg_error)
		return f->cfg_error;
	*val = off == 0 ? f->vendor : off == 2 ? f->device : 0;
	return 0;
}

static void fb_close(struct myrio_bus *bus)
{
	((struct fake_bus *)bus)->closed++;
}

static const struct myrio_bus_ops fb_ops = {.cfg_read = fb_cfg_read, .close = fb_close};

static void fake_init(struct fake_bus *f, uint16_t vendor, uint16_t device)
{
	memset(f, 0, sizeof(*f));
	f->bus.ops = &fb_ops;
	strcpy(f->bus.kind, "vfio");
	strcpy(f->bus.name, "0000:07:00.0");
	f->vendor = vendor;
	f->device = device;
	logged[0] = '\0';
	myrio_log_set(capture, NULL, MYRIO_LOG_WARN);
}

static void finds_the_driver_of_each_id(void **state)
{
	const struct myrio_driver *d = myrio_driver_for_pci(0x14c1, 0x0008);
	assert_non_null(d);
	assert_string_equal(d->name, "myri10ge");
	assert_ptr_equal(myrio_driver_for_pci(0x14c1, 0x0009), d);
	assert_null(myrio_driver_for_pci(0x14c1, 0x000a));
	assert_null(myrio_driver_for_pci(0x1234, 0x0008));
	assert_null(myrio_driver_for_pci(0, 0)); /* the list's end is no ID */
}

static void finds_the_driver_of_each_prefix(void **state)
{
	const struct myrio_driver *d = myrio_driver_for_prefix("pair:l/0");
	assert_non_null(d);
	assert_string_equal(d->name, "pair");
	assert_null(myrio_driver_for_prefix("pai"));
	assert_null(myrio_driver_for_prefix("sim:sim0")); /* a bus: its IDs decide */
	assert_null(myrio_driver_for_prefix("0000:03:00.0"));
}

static void refuses_a_function_no_driver_claims(void **state)
{
	struct fake_bus f;
	struct myrio_port *port = (struct myrio_port *)0x1;
	fake_init(&f, 0x1af4, 0x1041);
	assert_int_equal(myrio_port_open_bus(&f.bus, NULL, &port), -ENODEV);
	assert_null(port);
	assert_int_equal(f.closed, 1);
	assert_non_null(strstr(logged, "0000:07:00.0 is 1af4:1041"));
	assert_non_null(strstr(logged, "no libmyrio driver claims"));
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
}

static void refuses_a_function_whose_ids_cannot_be_read(void **state)
{
	struct fake_bus f;
	struct myrio_port *port = (struct myrio_port *)0x1;
	fake_init(&f, 0x14c1, 0x0008);
	f.cfg_error = -EIO;
	assert_int_equal(myrio_port_open_bus(&f.bus, NULL, &port), -EIO);
	assert_null(port);
	assert_int_equal(f.closed, 1);
	assert_non_null(strstr(logged, "cannot read the PCI vendor and device IDs"));
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(finds_the_driver_of_each_id),
	    cmocka_unit_test(finds_the_driver_of_each_prefix),
	    cmocka_unit_test(refuses_a_function_no_driver_claims),
	    cmocka_unit_test(refuses_a_function_whose_ids_cannot_be_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
