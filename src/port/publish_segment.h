/* SPDX-License-Identifier: BSD-3-Clause */
/* The layout of a process's published-counters segment, /dev/shm/myrio.PID: a header, then
 * capacity items. Each source owns a run of items (its names are written once, its values
 * at each copy); an item with an empty group is free. Writers hold the process's lock and
 * make seq odd while they write; readers retry until they see the same even seq before and
 * after copying (a seqlock), and check everything they read. */
#ifndef MYRIO_PUBLISH_SEGMENT_H
#define MYRIO_PUBLISH_SEGMENT_H

#include <stdint.h>

#include "myrio/publish.h"

#define PUB_MAGIC "MYRIOPUB"
#define PUB_LAYOUT 1u
#define PUB_CAPACITY 4096u
#define PUB_DIR "/dev/shm"	 /* where shm_open keeps its files */
#define PUB_PATH_FMT "/myrio.%d" /* shm_open name; the file is PUB_DIR "/myrio.PID" */

struct pub_header {
	char magic[8];
	uint32_t layout;
	uint32_t capacity;
	int32_t pid;
	uint32_t n_used; /* items [0, n_used) may be in use */
	char program[64];
	uint64_t seq;
	uint64_t updated_ns;
};

typedef struct myrio_published_counter pub_item;

struct pub_segment {
	struct pub_header h;
	pub_item items[PUB_CAPACITY];
};

/* Removes pid's segment if this user owns it and pid no longer runs: what a process that
 * died without closing its ports leaves behind (0, or a negative errno). */
int pub_segment_remove_stale(int pid);

#endif
