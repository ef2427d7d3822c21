/* SPDX-License-Identifier: BSD-3-Clause */
/* Device strings to buses. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bus/bus.h"
#include "util/log.h"
#include "util/pci_cap.h"

/* DDDD:BB:DD.F or BB:DD.F */
static bool looks_like_pci(const char *s)
{
	unsigned d, b, dev, f;
	char tail;
	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &f, &tail) == 4 ||
	       sscanf(s, "%x:%x.%x%c", &b, &dev, &f, &tail) == 3;
}

static int open_sim(const char *device, const char *name, struct myrio_sim *sim,
		    myrio_pci_claim_fn claim, struct myrio_bus **out)
{
	if (!sim) {
		log_err("%s: a sim: device needs an in-process model (myrio_port_conf.sim); "
			"to reach a NIC of the model daemon use simd:%s",
			device, name);
		return -EINVAL;
	}
	return myrio_sim_bus_open(sim, name, out);
}

static int open_simd(const char *device, const char *name, struct myrio_sim *sim,
		     myrio_pci_claim_fn claim, struct myrio_bus **out)
{
	char nic[64];
	const char *at = strchr(name, '@');
	size_t n = at ? (size_t)(at - name) : strlen(name);
	if (n == 0 || n >= sizeof(nic)) {
		log_err("%s: expected simd:NIC or simd:NIC@SOCKET", device);
		return -EINVAL;
	}
	memcpy(nic, name, n);
	nic[n] = '\0';
	return myrio_simd_bus_open(nic, at ? at + 1 : NULL, out);
}

static int open_vfio(const char *device, const char *name, struct myrio_sim *sim,
		     myrio_pci_claim_fn claim, struct myrio_bus **out)
{
	return myrio_vfio_bus_open(name, claim, out);
}

/* The buses, by the form of the device string: a prefix, or a PCI address. */
static const struct bus_kind {
	const char *prefix;		   /* taken off before open; NULL: match decides */
	bool (*match)(const char *device); /* for strings without a prefix */
	int (*open)(const char *device, const char *name, struct myrio_sim *sim,
		    myrio_pci_claim_fn claim, struct myrio_bus **out);
} bus_kinds[] = {
    {.prefix = "sim:", .open = open_sim},
    {.prefix = "simd:", .open = open_simd},
    {.match = looks_like_pci, .open = open_vfio},
};

int myrio_bus_open(const char *device, struct myrio_sim *sim, myrio_pci_claim_fn claim,
		   struct myrio_bus **out)
{
	*out = NULL;
	for (size_t i = 0; i < sizeof(bus_kinds) / sizeof(bus_kinds[0]); i++) {
		const struct bus_kind *k = &bus_kinds[i];
		size_t n = k->prefix ? strlen(k->prefix) : 0;
		if (k->prefix ? strncmp(device, k->prefix, n) == 0 : k->match(device))
			return k->open(device, device + n, sim, claim, out);
	}
	log_err("unknown device '%s': use sim:NAME (in-process model), simd:NAME[@SOCKET] "
		"(model daemon) or a PCI address such as 0000:03:00.0",
		device);
	return -ENODEV;
}

static int bus_cfg_read(void *bus, unsigned off, unsigned size, uint32_t *val)
{
	struct myrio_bus *b = bus;
	return b->ops->cfg_read(b, off, size, val);
}

unsigned myrio_bus_find_cap(struct myrio_bus *bus, unsigned id)
{
	return pci_cap_find(bus_cfg_read, bus, id);
}

int myrio_bus_msix_enable(struct myrio_bus *bus)
{
	unsigned msix = myrio_bus_find_cap(bus, PCI_CAP_ID_MSIX);
	unsigned msi = myrio_bus_find_cap(bus, PCI_CAP_ID_MSI);
	uint32_t v;
	if (!msix)
		return -ENOTSUP;
	if (msi && bus->ops->cfg_read(bus, msi + PCI_MSI_FLAGS, 2, &v) == 0)
		bus->ops->cfg_write(bus, msi + PCI_MSI_FLAGS, 2,
				    v & ~(uint32_t)PCI_MSI_FLAGS_ENABLE);
	int rc = bus->ops->cfg_read(bus, msix + PCI_MSI_FLAGS, 2, &v);
	if (rc < 0)
		return rc;
	v = (v | PCI_MSIX_FLAGS_ENABLE) & ~(uint32_t)PCI_MSIX_FLAGS_MASKALL;
	return bus->ops->cfg_write(bus, msix + PCI_MSI_FLAGS, 2, v);
}
