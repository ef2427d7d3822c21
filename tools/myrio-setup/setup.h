/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-setup: the setup doctor and binder for libmyrio on real hardware. */
#ifndef MYRIO_SETUP_H
#define MYRIO_SETUP_H

#include <stdbool.h>
#include <stdio.h>

#include "pci/sysfs.h"

struct setup_ctx {
	struct myrio_vfio_paths paths; /* test builds: MYRIO_SYSFS_ROOT / _DEV_ROOT */
	const char *proc;	       /* /proc (test builds: MYRIO_PROC_ROOT) */
	FILE *out;		       /* where check and the commands report */
	int problems;
};

/* Prints "  ok   what" or "  FIX  what\n       -> command", counting problems. */
void setup_ok(struct setup_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void setup_fix(struct setup_ctx *c, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int setup_check(struct setup_ctx *c, const char *addr);
/* VFIO pins without limit for a process that holds CAP_IPC_LOCK (root, normally). */
bool setup_has_ipc_lock(void);
/* The NIC's upstream bridge (bridge.c): AER Surprise Down mask and ECRC, reported by check
 * and applied by bridge. */
void setup_check_bridge(struct setup_ctx *c, const char *addr);
int setup_bridge(struct setup_ctx *c, const char *addr);
int setup_bind(struct setup_ctx *c, const char *addr, bool group);
int setup_unbind(struct setup_ctx *c, const char *addr, bool group);
int setup_hugepages(struct setup_ctx *c, long n);
/* Reads /proc/meminfo's HugePages_Total and Hugepagesize (kB); -errno. */
int setup_hugepage_info(struct setup_ctx *c, long *total, long *free_pages, long *size_kb);
/* Whether a hugetlbfs is mounted; its mount point into dir. */
bool setup_hugetlbfs_mounted(struct setup_ctx *c, char *dir, unsigned len);

#endif
