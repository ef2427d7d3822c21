/* SPDX-License-Identifier: BSD-3-Clause */
/* stdio on accelerated sockets. The C library's FILEs call the kernel from inside, past
 * any preload; a FILE made with fopencookie calls read/write/close through their symbols
 * instead, so here: fdopen of an accelerated socket, and a socket dup'ed onto fd 0, 1 or 2
 * (the classic way to speak on a socket with stdio, as nuttcp does), get one. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "preload.h"

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
	return read((int)(intptr_t)c, buf, n);
}

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	return write((int)(intptr_t)c, buf, n);
}

static int cookie_close(void *c)
{
	return close((int)(intptr_t)c);
}

static FILE *socket_file(int fd, const char *mode)
{
	cookie_io_functions_t io = {
	    .read = cookie_read, .write = cookie_write, .close = cookie_close};
	return fopencookie((void *)(intptr_t)fd, mode, io);
}

EXPORT FILE *fdopen(int fd, const char *mode)
{
	static FILE *(*kernel_fdopen)(int, const char *);
	if (psock_accelerated(fd))
		return socket_file(fd, mode);
	if (!kernel_fdopen)
		*(void **)&kernel_fdopen = dlsym(RTLD_NEXT, "fdopen");
	return kernel_fdopen(fd, mode);
}

void stdio_follow(int fd)
{
	if (fd < 0 || fd > 2)
		return;
	FILE **std = fd == 0 ? &stdin : fd == 1 ? &stdout : &stderr;
	fflush(*std);
	FILE *f = socket_file(fd, fd == 0 ? "r" : "w");
	if (!f)
		return;
	if (fd)
		setvbuf(f, NULL, _IOLBF, 0);
	*std = f; /* the old FILE is left open: closing it would close the fd */
}
