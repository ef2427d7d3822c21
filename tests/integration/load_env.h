/* SPDX-License-Identifier: BSD-3-Clause */
/* What the load tests share: their sizes from the environment, and the heap in use (to
 * report memory per connection and check that nothing is allocated on the data path). */
#ifndef LOAD_ENV_H
#define LOAD_ENV_H

#include <malloc.h>
#include <stdlib.h>

static inline unsigned env_u(const char *name, unsigned dflt)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : dflt;
}

static inline size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

#endif
