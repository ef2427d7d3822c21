/* SPDX-License-Identifier: BSD-3-Clause */
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_env.h"

unsigned env_u(const char *name, unsigned dflt)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : dflt;
}

uint64_t env_bytes(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	double d = strtod(v, &end);
	if (*end == 'K' || *end == 'k')
		d *= 1024;
	else if (*end == 'M' || *end == 'm')
		d *= 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		d *= 1024.0 * 1024 * 1024;
	return (uint64_t)d;
}

size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

void test_private_netns(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0) {
		printf("skipped: needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) for a private network "
		       "namespace\n");
		exit(77);
	}
}
