/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel's socket calls, found past this library with dlsym(RTLD_NEXT), and the
 * one-time log lines for what the layer refuses. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

struct kernel_calls kern;

#define RESOLVE(name)                                                                              \
	do {                                                                                       \
		if (!kern.name)                                                                    \
			*(void **)&kern.name = dlsym(RTLD_NEXT, #name);                            \
		if (!kern.name) {                                                                  \
			static const char msg[] = "myrio-preload: no " #name "\n";                 \
			(void)!write(2, msg, sizeof msg - 1);                                      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

void kernel_calls_resolve(void)
{
	if (kern.epoll_pwait) /* the last one: all are there */
		return;
	RESOLVE(socket);
	RESOLVE(bind);
	RESOLVE(listen);
	RESOLVE(accept4);
	RESOLVE(connect);
	RESOLVE(shutdown);
	RESOLVE(close);
	RESOLVE(dup);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(read);
	RESOLVE(write);
	RESOLVE(readv);
	RESOLVE(writev);
	RESOLVE(recvfrom);
	RESOLVE(sendto);
	RESOLVE(recvmsg);
	RESOLVE(sendmsg);
	RESOLVE(sendmmsg);
	RESOLVE(recvmmsg);
	RESOLVE(sendfile);
	RESOLVE(getsockname);
	RESOLVE(getpeername);
	RESOLVE(setsockopt);
	RESOLVE(getsockopt);
	RESOLVE(fcntl);
	RESOLVE(ioctl);
	RESOLVE(poll);
	RESOLVE(ppoll);
	RESOLVE(epoll_ctl);
	RESOLVE(select);
	RESOLVE(pselect);
	RESOLVE(close_range);
	/* NULL where the C library lacks it: the call is then ENOSYS */
	*(void **)&kern.epoll_pwait2 = dlsym(RTLD_NEXT, "epoll_pwait2");
	RESOLVE(epoll_pwait);
}

__attribute__((constructor)) static void kernel_calls_init(void)
{
	kernel_calls_resolve();
}

void preload_log(const char *fmt, ...)
{
	char line[256];
	int n = snprintf(line, sizeof line, "myrio-preload[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	line[len++] = '\n';
	kernel_calls_resolve();
	(void)!kern.write(2, line, len);
}

/* Each message is a string literal: its address names it. Few distinct ones exist. */
void preload_log_once(const char *what)
{
	static const char *seen[64];
	static unsigned nseen;
	for (unsigned i = 0; i < __atomic_load_n(&nseen, __ATOMIC_ACQUIRE); i++)
		if (seen[i] == what)
			return;
	unsigned i = __atomic_fetch_add(&nseen, 1, __ATOMIC_ACQ_REL);
	if (i < 64)
		seen[i] = what;
	preload_log("%s", what);
}
