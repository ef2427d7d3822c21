/* SPDX-License-Identifier: BSD-3-Clause */
/* A bus's lifetime and clock: who holds it, what runs when its opener closes it. */
#include <time.h>

#include "bus/bus.h"

uint64_t myrio_host_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void myrio_bus_hold(struct myrio_bus *bus)
{
	bus->holds++;
}

void myrio_bus_release(struct myrio_bus *bus)
{
	if (--bus->holds == 0 && bus->closing)
		bus->ops->close(bus);
}

void myrio_bus_at_close(struct myrio_bus *bus, struct myrio_bus_hook *hook)
{
	hook->next = bus->at_close;
	bus->at_close = hook;
}

void myrio_bus_close(struct myrio_bus *bus)
{
	/* A hook may release the last hold: the bus must not close under the loop. */
	bus->holds++;
	struct myrio_bus_hook *h = bus->at_close, *next;
	bus->at_close = NULL;
	for (; h; h = next) {
		next = h->next;
		h->fn(h);
	}
	bus->closing = true;
	myrio_bus_release(bus);
}
