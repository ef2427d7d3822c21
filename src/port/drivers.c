/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver table: device-string prefixes and PCI IDs to the back-ends that open them. */
#include <errno.h>
#include <string.h>

#include "bus/bus.h"
#include "port/port_ops.h"
#include "util/log.h"

static const struct myrio_driver drivers[] = {
    {.name = "pair",
     .nic = "in-process pair link",
     .prefix = "pair:",
     .open_device = myrio_pair_port_open},
    {.name = "myri10ge",
     .nic = "Myri-10G",
     .ids = myrio_myri10ge_pci_ids,
     .open_bus = myrio_myri10ge_open},
    {.name = "e1000e",
     .nic = "Intel 82574",
     .ids = myrio_e1000e_pci_ids,
     .open_bus = myrio_e1000e_open},
};

#define N_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

const struct myrio_driver *myrio_driver_for_pci(uint16_t vendor, uint16_t device)
{
	for (size_t i = 0; i < N_DRIVERS; i++)
		for (const struct myrio_pci_id *id = drivers[i].ids; id && id->vendor; id++)
			if (id->vendor == vendor && id->device == device)
				return &drivers[i];
	return NULL;
}

int myrio_port_driver_for_pci(uint16_t vendor, uint16_t device, const char **driver,
			      const char **nic)
{
	const struct myrio_driver *d = myrio_driver_for_pci(vendor, device);
	if (!d)
		return -ENODEV;
	if (driver)
		*driver = d->name;
	if (nic)
		*nic = d->nic;
	return 0;
}

/* The driver of a function, or NULL, said with what to do. */
static const struct myrio_driver *claimant(const char *name, uint16_t vendor, uint16_t device)
{
	const struct myrio_driver *d = myrio_driver_for_pci(vendor, device);
	if (!d)
		log_err("%s is %04x:%04x, a PCI function no libmyrio driver claims; "
			"'myrio-setup check' lists the NICs libmyrio drives",
			name, vendor, device);
	return d;
}

bool myrio_driver_claims(const char *name, uint16_t vendor, uint16_t device)
{
	return claimant(name, vendor, device) != NULL;
}

const struct myrio_driver *myrio_driver_for_prefix(const char *device)
{
	for (size_t i = 0; i < N_DRIVERS; i++)
		if (drivers[i].prefix &&
		    strncmp(device, drivers[i].prefix, strlen(drivers[i].prefix)) == 0)
			return &drivers[i];
	return NULL;
}

int myrio_port_open_bus(struct myrio_bus *bus, const struct myrio_port_conf *conf,
			struct myrio_port **out)
{
	uint32_t vendor = 0, device = 0;
	*out = NULL;
	int rc = bus->ops->cfg_read(bus, 0x00, 2, &vendor);
	if (rc == 0)
		rc = bus->ops->cfg_read(bus, 0x02, 2, &device);
	if (rc < 0) {
		log_err("%s: cannot read the PCI vendor and device IDs (%s)", bus->name,
			strerror(-rc));
		myrio_bus_close(bus);
		return rc;
	}
	const struct myrio_driver *d = claimant(bus->name, (uint16_t)vendor, (uint16_t)device);
	if (!d) {
		myrio_bus_close(bus);
		return -ENODEV;
	}
	log_debug("%s: %04x:%04x, driver %s (%s)", bus->name, vendor, device, d->name, d->nic);
	rc = d->open_bus(bus, conf, out);
	if (rc == 0)
		(*out)->driver = d->name;
	return rc;
}
