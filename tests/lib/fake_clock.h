/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one fake clock: nanoseconds in a uint64_t the test advances itself. A stack
 * reads it with conf.clock = fake_clock_read, conf.clock_arg = &now_ns. */
#ifndef MYRIO_TEST_FAKE_CLOCK_H
#define MYRIO_TEST_FAKE_CLOCK_H

#include <stdint.h>

uint64_t fake_clock_read(void *now_ns);

#endif
