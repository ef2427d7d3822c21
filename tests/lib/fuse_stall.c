/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_stall.h"

static void fuse_stall_attr(struct fuse_attr *a, uint64_t node)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->nlink = 1;
	a->size = node == FUSE_ROOT_ID ? 0 : FUSE_STALL_FILE_LEN;
	a->blksize = 4096;
}

static void fuse_stall_reply(int fd, uint64_t unique, int error, const void *body, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header h = {
	    .len = (uint32_t)(sizeof(h) + len), .error = error, .unique = unique};
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), body, len);
	if (write(fd, buf, h.len) < 0)
		_exit(1);
}

static void fuse_stall_serve(int fd)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1u << 17)];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			_exit(0); /* unmounted */
		const struct fuse_in_header *in = (const void *)buf;
		const void *arg = buf + sizeof(*in);
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *i = arg;
			struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
						  .minor = i->minor < FUSE_KERNEL_MINOR_VERSION
							       ? i->minor
							       : FUSE_KERNEL_MINOR_VERSION,
						  .max_readahead = i->max_readahead,
						  .max_write = 4096};
			fuse_stall_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			if (strcmp((const char *)arg, "dma") != 0) {
				fuse_stall_reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			struct fuse_entry_out e = {.nodeid = 2, .generation = 1};
			fuse_stall_attr(&e.attr, 2);
			fuse_stall_reply(fd, in->unique, 0, &e, sizeof(e));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out a = {0};
			fuse_stall_attr(&a.attr, in->nodeid);
			fuse_stall_reply(fd, in->unique, 0, &a, sizeof(a));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = {.fh = 1};
			fuse_stall_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
			fuse_stall_reply(fd, in->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;
		case FUSE_READ:
		case FUSE_WRITE:
		case FUSE_STATFS:
		case FUSE_SETATTR:
		case FUSE_FALLOCATE:
		case FUSE_LSEEK:
			break; /* never answered */
		default:
			fuse_stall_reply(fd, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

int fuse_stall_start(struct fuse_stall *s)
{
	snprintf(s->mnt, sizeof(s->mnt), "/tmp/myrio-fuse-stall-%d", (int)getpid());
	if (mkdir(s->mnt, 0755) != 0 && errno != EEXIST)
		return -errno;
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rmdir(s->mnt);
		return -errno;
	}
	char opts[128];
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("myrio-stall", s->mnt, "fuse.myrio-stall", MS_NOSUID | MS_NODEV, opts) != 0) {
		int rc = -errno;
		close(fd);
		rmdir(s->mnt);
		return rc;
	}
	s->server = fork();
	if (s->server == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fuse_stall_serve(fd);
	}
	close(fd);
	return s->server > 0 ? 0 : -EAGAIN;
}

void fuse_stall_stop(struct fuse_stall *s)
{
	if (s->server > 0) {
		kill(s->server, SIGKILL);
		waitpid(s->server, NULL, 0);
		s->server = 0;
	}
	umount2(s->mnt, MNT_DETACH);
	rmdir(s->mnt);
}
