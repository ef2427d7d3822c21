/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one reading of real (monotonic) time: for timeouts, stall detection and the
 * wall-time figures tests print. Model time and a stack's fake clock are elsewhere
 * (myrio_sim_now_ns, fake_clock.h). */
#ifndef MYRIO_TEST_WALL_CLOCK_H
#define MYRIO_TEST_WALL_CLOCK_H

#include <stdint.h>

uint64_t wall_ns(void);
double wall_s(void);

#endif
