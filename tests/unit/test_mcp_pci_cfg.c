/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver's config-space set-up through a VFIO-like layer: reads answer from the layer's
 * copy, and a write of the PCIe device control register reaches the device only when it
 * changes that copy (VFIO's handling of it); other writes pass through. After a reboot the device is back at its power-on
 * values while the copy is not; the driver must still get its settings to the device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "bus/bus.h"
#include "mcp/nic.h"

#define CAP_EXP 0x70u
#define DEVCTL (CAP_EXP + 8)
#define MRRS_MASK 0x7000u
#define MRRS_512 0x2000u
#define MRRS_4096 0x5000u

struct layered {
	struct myrio_bus bus;
	uint8_t copy[256];   /* what VFIO shows */
	uint8_t device[256]; /* what the device holds */
};

static uint32_t get16(const uint8_t *c, unsigned off)
{
	return (uint32_t)c[off] | (uint32_t)c[off + 1] << 8;
}

static void put16(uint8_t *c, unsigned off, uint32_t v)
{
	c[off] = (uint8_t)v;
	c[off + 1] = (uint8_t)(v >> 8);
}

static int l_read(struct myrio_bus *b, unsigned off, unsigned size, uint32_t *v)
{
	struct layered *l = (struct layered *)b;
	*v = 0;
	for (unsigned i = 0; i < size; i++)
		*v |= (uint32_t)l->copy[off + i] << (8 * i);
	return 0;
}

static int l_write(struct myrio_bus *b, unsigned off, unsigned size, uint32_t v)
{
	struct layered *l = (struct layered *)b;
	bool changed = false;
	for (unsigned i = 0; i < size; i++) {
		uint8_t byte = (uint8_t)(v >> (8 * i));
		changed |= l->copy[off + i] != byte;
		l->copy[off + i] = byte;
	}
	bool devctl = off < DEVCTL + 2 && off + size > DEVCTL;
	if (changed || !devctl)
		memcpy(l->device + off, l->copy + off, size);
	return 0;
}

static const struct myrio_bus_ops layered_ops = {.cfg_read = l_read, .cfg_write = l_write};

static void power_on(struct layered *l)
{
	memset(l->device, 0, sizeof(l->device));
	put16(l->device, 0x06, 0x0010); /* capability list */
	l->device[0x34] = CAP_EXP;
	l->device[CAP_EXP] = 0x10;
	put16(l->device, DEVCTL, MRRS_512);
}

static void mrrs_reaches_the_device_after_a_reboot(void **state)
{
	(void)state;
	struct layered l = {.bus.ops = &layered_ops, .bus.name = "layered"};
	power_on(&l);
	memcpy(l.copy, l.device, sizeof(l.copy));
	assert_int_equal(myri_nic_pci_setup(&l.bus), 4096);
	assert_int_equal(get16(l.device, DEVCTL) & MRRS_MASK, MRRS_4096);
	/* the NIC reboots: the device forgets, the copy still says 4096 */
	power_on(&l);
	assert_int_equal(myri_nic_pci_setup(&l.bus), 4096);
	assert_int_equal(get16(l.device, DEVCTL) & MRRS_MASK, MRRS_4096);
	assert_int_equal(get16(l.device, 0x04) & 0x6, 0x6); /* memory space, bus master */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mrrs_reaches_the_device_after_a_reboot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
