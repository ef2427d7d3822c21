/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver's bounded waits (a command's answer §3.1, the firmware's boot and handoff §2,
 * the close §8.4) end at a deadline on the bus's clock. A sleep on a loaded host lasts
 * longer than it asked for, so a bound counted in sleeps stretches with the load; on a
 * stepped model the bus's clock is the model's, which the sleeps advance. */
#ifndef MYRIO_MCP_WAIT_H
#define MYRIO_MCP_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"

struct mcp_wait {
	struct myrio_bus *bus;
	uint64_t start, until; /* ns on the bus's clock */
};

static inline void mcp_wait_start(struct mcp_wait *w, struct myrio_bus *bus, uint64_t timeout_us)
{
	w->bus = bus;
	w->start = myrio_bus_now_ns(bus);
	w->until = w->start + timeout_us * 1000u;
}

/* Whether the deadline has passed: the caller looks at its condition before asking, so
 * a device that answered during the last sleep is still seen. */
static inline bool mcp_wait_over(const struct mcp_wait *w)
{
	return myrio_bus_now_ns(w->bus) >= w->until;
}

static inline uint64_t mcp_wait_elapsed_us(const struct mcp_wait *w)
{
	return (myrio_bus_now_ns(w->bus) - w->start) / 1000u;
}

#endif
