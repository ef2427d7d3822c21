/* SPDX-License-Identifier: BSD-3-Clause */
/* stdio on accelerated sockets. The C library's FILEs call the kernel from inside, past
 * any preload; a FILE made with fopencookie calls read/write/close through their symbols
 * instead, so here: fdopen of an accelerated socket, and a socket dup'ed onto fd 0, 1 or 2
 * (the classic way to speak on a socket with stdio, as nuttcp does), get one. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload.h"

/* A socket's FILE: its fd, and the FILE, so that fileno() names the fd as the C library's
 * own FILEs do (it gives -1 and EBADF for a fopencookie one; nuttcp polls its control
 * connection by fileno). */
struct socket_file {
	int fd;
	FILE *f;
	struct socket_file *next;
};
static struct socket_file *socket_files;
static pthread_mutex_t socket_files_lock = PTHREAD_MUTEX_INITIALIZER;

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
	return read(((struct socket_file *)c)->fd, buf, n);
}

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	return write(((struct socket_file *)c)->fd, buf, n);
}

static int cookie_close(void *c)
{
	struct socket_file *sf = c;
	pthread_mutex_lock(&socket_files_lock);
	for (struct socket_file **p = &socket_files; *p; p = &(*p)->next)
		if (*p == sf) {
			*p = sf->next;
			break;
		}
	pthread_mutex_unlock(&socket_files_lock);
	int fd = sf->fd;
	free(sf);
	return close(fd);
}

static FILE *socket_file(int fd, const char *mode)
{
	struct socket_file *sf = malloc(sizeof *sf);
	if (!sf)
		return NULL;
	cookie_io_functions_t io = {
	    .read = cookie_read, .write = cookie_write, .close = cookie_close};
	sf->fd = fd;
	sf->f = fopencookie(sf, mode, io);
	if (!sf->f) {
		free(sf);
		return NULL;
	}
	pthread_mutex_lock(&socket_files_lock);
	sf->next = socket_files;
	socket_files = sf;
	pthread_mutex_unlock(&socket_files_lock);
	return sf->f;
}

/* The fd of one of the socket FILEs, or -1. */
static int socket_file_fd(FILE *f)
{
	int fd = -1;
	pthread_mutex_lock(&socket_files_lock);
	for (struct socket_file *sf = socket_files; sf && fd < 0; sf = sf->next)
		if (sf->f == f)
			fd = sf->fd;
	pthread_mutex_unlock(&socket_files_lock);
	return fd;
}

/* A socket FILE's fd, else what the C library's function (looked up once) says. */
static int fileno_with(FILE *f, int (**kernel)(FILE *), const char *name)
{
	int fd = socket_file_fd(f);
	if (fd >= 0)
		return fd;
	if (!*kernel)
		*(void **)kernel = dlsym(RTLD_NEXT, name);
	return (*kernel)(f);
}

EXPORT int fileno(FILE *f)
{
	static int (*kernel_fileno)(FILE *);
	return fileno_with(f, &kernel_fileno, "fileno");
}

EXPORT int fileno_unlocked(FILE *f)
{
	static int (*kernel_fileno_unlocked)(FILE *);
	return fileno_with(f, &kernel_fileno_unlocked, "fileno_unlocked");
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
