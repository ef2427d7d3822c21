/* Device strings to buses. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bus/bus.h"
#include "myrio/pkt.h"
#include "util/log.h"

/* DDDD:BB:DD.F or BB:DD.F */
static int looks_like_pci(const char *s)
{
	unsigned d, b, dev, f;
	char tail;
	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &f, &tail) == 4 ||
	       sscanf(s, "%x:%x.%x%c", &b, &dev, &f, &tail) == 3;
}

int myrio_bus_open(const char *device, struct myrio_sim *sim, struct myrio_bus **out)
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
		return myrio_vfio_bus_open(device, out);
	log_err("unknown device '%s': use sim:NAME (in-process model), simd:NAME[@SOCKET] "
		"(model daemon) or a PCI address such as 0000:03:00.0",
		device);
	return -ENODEV;
}

void myrio_bus_add_pool(struct myrio_bus *bus, struct myrio_pool *pool)
{
	pool->next_on_bus = bus->pools;
	bus->pools = pool;
}

void myrio_bus_remove_pool(struct myrio_bus *bus, struct myrio_pool *pool)
{
	for (struct myrio_pool **pp = &bus->pools; *pp; pp = &(*pp)->next_on_bus) {
		if (*pp == pool) {
			*pp = pool->next_on_bus;
			return;
		}
	}
}

void myrio_bus_close(struct myrio_bus *bus)
{
	/* Orphaned pools whose buffers all came back when the driver let go of its rings. */
	struct myrio_pool *p = bus->pools, *next;
	for (; p; p = next) {
		next = p->next_on_bus;
		if (p->orphaned && p->free_top == p->count)
			myrio_pool_destroy(p);
		else if (p->orphaned)
			log_warn("%s: a destroyed pool still misses %u buffers; its memory stays "
				 "mapped until the process ends",
				 bus->name, p->count - p->free_top);
	}
	bus->closing = true;
	if (!bus->pools)
		bus->ops->close(bus);
}

unsigned myrio_bus_find_cap(struct myrio_bus *bus, unsigned id)
{
	uint32_t v, cap;
	if (bus->ops->cfg_read(bus, PCI_STATUS, 2, &v) < 0 || v == 0xffff ||
	    !(v & PCI_STATUS_CAP_LIST) || bus->ops->cfg_read(bus, PCI_CAP_PTR, 1, &cap) < 0)
		return 0;
	for (int hops = 0; cap >= 0x40 && cap < 0x100 && hops < 48; hops++) {
		uint32_t hdr;
		cap &= ~3u;
		if (bus->ops->cfg_read(bus, cap, 2, &hdr) < 0)
			return 0;
		if ((hdr & 0xff) == id)
			return cap;
		cap = (hdr >> 8) & 0xff;
	}
	return 0;
}
