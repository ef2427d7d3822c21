/* SPDX-License-Identifier: BSD-3-Clause */
#include <time.h>

#include "wall_clock.h"

uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double wall_s(void)
{
	return (double)wall_ns() / 1e9;
}
