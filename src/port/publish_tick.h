/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll's hook into publishing: myrio_rx_burst counts calls down and, every
 * PUBLISH_TICK_CALLS of them, lets the publisher look at the clock. */
#ifndef MYRIO_PUBLISH_TICK_H
#define MYRIO_PUBLISH_TICK_H

#include <stdint.h>

#define PUBLISH_TICK_CALLS 256u

/* Resets *countdown; copies the calling thread's counters if the last copy is 100 ms old. */
void myrio_publish_tick(uint32_t *countdown);

#endif
