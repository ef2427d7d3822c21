/* SPDX-License-Identifier: BSD-3-Clause */
/* One queue's extended stat, by its name's format ("rx_q%u_packets") and the queue; the
 * test fails when the port has no such stat. Include after cmocka.h. */
#ifndef QUEUE_XSTAT_H
#define QUEUE_XSTAT_H

#include <stdint.h>
#include <stdio.h>

#include "myrio/myrio.h"

static inline uint64_t queue_xstat(struct myrio_port *p, const char *fmt, unsigned q)
{
	char name[64];
	snprintf(name, sizeof(name), fmt, q);
	uint64_t v = ~0ull;
	assert_int_equal(myrio_port_xstat(p, name, &v), 0);
	return v;
}

#endif
