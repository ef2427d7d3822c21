/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll's hook into publishing: myrio_rx_burst counts calls down and, every
 * PUBLISH_TICK_CALLS of them, lets the publisher look at the clock. */
#ifndef MYRIO_PUBLISH_TICK_H
#define MYRIO_PUBLISH_TICK_H

#include <stdint.h>

#define PUBLISH_TICK_CALLS 256u

struct myrio_port;
/* From myrio_rx_burst: resets *countdown and, if port's last copy (*last_ns) is 100 ms old,
 * copies the counters of port's sources and of the calling thread's own. */
void myrio_publish_tick(uint32_t *countdown, uint64_t *last_ns, const struct myrio_port *port);

#endif
