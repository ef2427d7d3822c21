/* Device strings to buses. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bus/bus.h"
#include "util/log.h"
#include "util/pci_cap.h"

/* DDDD:BB:DD.F or BB:DD.F */
static int looks_like_pci(const char *s)
{
	unsigned d, b, dev, f;
	char tail;
	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &f, &tail) == 4 ||
	       sscanf(s, "%x:%x.%x%c", &b, &dev, &f, &tail) == 3;
}

int myrio_bus_open(const char *device, struct myrio_sim *sim, myrio_pci_claim_fn claim,
		   struct myrio_bus **out)
{
	*out = NULL;
	if (strncmp(device, "sim:", 4) == 0) {
		if (!sim) {
			log_err(
			    "%s: a sim: device needs an in-process model (myrio_port_conf.sim); "
			    "to reach a NIC of the model daemon use simd:%s",
			    device, device + 4);
			return -EINVAL;
		}
		return myrio_sim_bus_open(sim, device + 4, out);
	}
	if (strncmp(device, "simd:", 5) == 0) {
		char nic[64];
		const char *at = strchr(device + 5, '@');
		size_t n = at ? (size_t)(at - (device + 5)) : strlen(device + 5);
		if (n == 0 || n >= sizeof(nic)) {
			log_err("%s: expected simd:NIC or simd:NIC@SOCKET", device);
			return -EINVAL;
		}
		memcpy(nic, device + 5, n);
		nic[n] = '\0';
		return myrio_simd_bus_open(nic, at ? at + 1 : NULL, out);
	}
	if (looks_like_pci(device))
		return myrio_vfio_bus_open(device, claim, out);
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
