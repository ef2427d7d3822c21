/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll's hook into publishing: a port's periodic work (myrio_port_periodic, run by the
 * thread that polls it) lets the publisher look at the clock. */
#ifndef MYRIO_PUBLISH_TICK_H
#define MYRIO_PUBLISH_TICK_H

#include <stdint.h>

struct myrio_port;
/* If the last copy (*last_ns) of port's queue is 100 ms old, copies the counters of the
 * queue's sources and of the calling thread's own. */
void myrio_publish_tick(uint64_t *last_ns, const struct myrio_port *port, uint16_t queue);

#endif
