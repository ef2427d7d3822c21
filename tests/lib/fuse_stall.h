/* SPDX-License-Identifier: BSD-3-Clause */
/* A FUSE file system that stalls: it answers what it takes to open its one file ("dma",
 * 1 MiB, regular) and never answers anything that reads the file or its file system
 * (READ, STATFS, ...), so whoever asks waits until the server dies. Spoken straight to
 * /dev/fuse (no libfuse), served by a child process. Needs root. */
#ifndef MYRIO_TEST_FUSE_STALL_H
#define MYRIO_TEST_FUSE_STALL_H

#include <sys/types.h>

#define FUSE_STALL_FILE_LEN (1u << 20)

struct fuse_stall {
	char mnt[64];
	pid_t server;
};

/* Mounts the file system on a new directory and starts its server: 0, or -errno when
 * FUSE cannot be used here. */
int fuse_stall_start(struct fuse_stall *s);
/* Whoever still waits on the file system gets an error: the server is gone. */
void fuse_stall_stop(struct fuse_stall *s);

#endif
