/* SPDX-License-Identifier: BSD-3-Clause */
/* Publishing this process's counters into its shared-memory segment (publish_segment.h).
 * Sources are refreshed from the poll (myrio_publish_tick, a port's periodic work): a port's,
 * and a stack's on one of its queues, by the thread polling that queue; others by the
 * thread that added them. Counters are so only ever read by the thread that writes them:
 * a stack on queue 1 is not copied by queue 0's thread while its own writes them. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "port/publish_segment.h"
#include "port/publish_tick.h"
#include "util/log.h"

#define MAX_SOURCES 256
#define PUBLISH_PERIOD_NS 100000000ull /* at most ten copies a second */

struct source {
	int handle;		       /* 0: free */
	pthread_t owner;	       /* who copies it, when port is NULL */
	const struct myrio_port *port; /* else: whoever polls this port's queue */
	uint16_t queue;
	myrio_counters_fn fn;
	void *arg;
	uint32_t first, count; /* its run of items */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct source sources[MAX_SOURCES];
static struct pub_segment *seg;
static pid_t seg_pid;
static int next_handle = 1;
static int disabled = -1; /* -1: not decided yet */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void unlink_segment(void)
{
	char name[32];
	if (seg && seg_pid == getpid()) {
		snprintf(name, sizeof(name), PUB_PATH_FMT, (int)seg_pid);
		shm_unlink(name);
	}
}

/* The segment of this process, created on first use (again after a fork). */
static struct pub_segment *segment(void)
{
	if (disabled < 0) {
		const char *e = getenv("MYRIO_PUBLISH");
		disabled = e && strcmp(e, "0") == 0;
	}
	if (disabled)
		return NULL;
	if (seg && seg_pid == getpid())
		return seg;
	if (seg) { /* a forked child: the parent's mapping is not ours to write */
		munmap(seg, sizeof(*seg));
		seg = NULL;
		for (int i = 0; i < MAX_SOURCES; i++)
			sources[i].handle = 0;
	}
	char name[32];
	pid_t pid = getpid();
	snprintf(name, sizeof(name), PUB_PATH_FMT, (int)pid);
	/* A file under our pid's name is a dead process's (ours goes with us): removed if it is
	 * ours. One of another user's stays, and then we do not publish: never write into a
	 * file somebody else made (or can truncate under us). Only our user (and root) reads. */
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), PUB_DIR "%s", name);
	if (lstat(path, &st) == 0 && st.st_uid == geteuid())
		shm_unlink(name);
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600);
	if (fd < 0) {
		myrio_log(errno == EEXIST ? MYRIO_LOG_WARN : MYRIO_LOG_DEBUG,
			  "counters not published: %s%s: %s", PUB_DIR, name, strerror(errno));
		disabled = 1;
		return NULL;
	}
	void *m = MAP_FAILED;
	if (ftruncate(fd, sizeof(*seg)) == 0)
		m = mmap(NULL, sizeof(*seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		log_debug("publishing counters: cannot map %s", name);
		shm_unlink(name);
		disabled = 1;
		return NULL;
	}
	seg = m;
	seg_pid = pid;
	memcpy(seg->h.magic, PUB_MAGIC, sizeof(seg->h.magic));
	seg->h.layout = PUB_LAYOUT;
	seg->h.capacity = PUB_CAPACITY;
	seg->h.pid = (int32_t)pid;
	snprintf(seg->h.program, sizeof(seg->h.program), "%s", program_invocation_short_name);
	static int registered;
	if (!registered++)
		atexit(unlink_segment);
	return seg;
}

static void write_begin(void)
{
	__atomic_store_n(&seg->h.seq, seg->h.seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(void)
{
	seg->h.updated_ns = now_ns();
	__atomic_store_n(&seg->h.seq, seg->h.seq + 1, __ATOMIC_RELEASE);
}

/* First fit for count free items. */
static int find_run(uint32_t count, uint32_t *first)
{
	uint32_t run = 0;
	for (uint32_t i = 0; i < PUB_CAPACITY; i++) {
		run = seg->items[i].group[0] ? 0 : run + 1;
		if (run == count) {
			*first = i + 1 - count;
			return 0;
		}
	}
	return -ENOSPC;
}

static int add(const struct myrio_port *port, uint16_t queue, const char *group,
	       myrio_counters_fn fn, void *arg)
{
	int n = fn(arg, NULL, NULL, 0);
	if (n <= 0 || n > (int)PUB_CAPACITY)
		return n < 0 ? n : -EINVAL;
	struct myrio_xstat_name *names = calloc((size_t)n, sizeof(*names));
	if (!names)
		return -ENOMEM;
	if (fn(arg, names, NULL, (unsigned)n) != n) {
		free(names);
		return -EIO;
	}
	pthread_mutex_lock(&lock);
	int rc = -ENOSPC, slot = -1;
	uint32_t first = 0;
	for (int i = 0; i < MAX_SOURCES && slot < 0; i++)
		if (!sources[i].handle)
			slot = i;
	if (!segment())
		rc = -ENOTSUP;
	else if (slot >= 0 && find_run((uint32_t)n, &first) == 0) {
		write_begin();
		for (int i = 0; i < n; i++) {
			pub_item *it = &seg->items[first + (uint32_t)i];
			snprintf(it->group, sizeof(it->group), "%s", group[0] ? group : "-");
			snprintf(it->name, sizeof(it->name), "%s", names[i].name);
			it->value = 0;
		}
		if (first + (uint32_t)n > seg->h.n_used)
			seg->h.n_used = first + (uint32_t)n;
		write_end();
		sources[slot] = (struct source){.handle = next_handle++,
						.owner = pthread_self(),
						.port = port,
						.queue = queue,
						.fn = fn,
						.arg = arg,
						.first = first,
						.count = (uint32_t)n};
		rc = sources[slot].handle;
	} else {
		log_warn("%s: counters not published: the segment is full", group);
	}
	pthread_mutex_unlock(&lock);
	free(names);
	return rc;
}

int myrio_publish_add(const char *group, myrio_counters_fn fn, void *arg)
{
	return add(NULL, 0, group, fn, arg);
}

int myrio_publish_add_port(struct myrio_port *port, const char *group, myrio_counters_fn fn,
			   void *arg)
{
	return myrio_publish_add_queue(port, 0, group, fn, arg);
}

int myrio_publish_add_queue(struct myrio_port *port, uint16_t queue, const char *group,
			    myrio_counters_fn fn, void *arg)
{
	return port && queue < myrio_port_queues(port) ? add(port, queue, group, fn, arg) : -EINVAL;
}

void myrio_publish_remove(int handle)
{
	if (handle <= 0)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_SOURCES; i++) {
		struct source *s = &sources[i];
		if (s->handle != handle)
			continue;
		if (seg && seg_pid == getpid()) {
			write_begin();
			for (uint32_t k = 0; k < s->count; k++)
				memset(&seg->items[s->first + k], 0, sizeof(pub_item));
			write_end();
		}
		s->handle = 0;
	}
	/* The last source gone: so is the segment (a child that ends with _exit, which runs
	 * no atexit handler, leaves nothing behind once it closed its ports). */
	bool any = false;
	for (int i = 0; i < MAX_SOURCES && !any; i++)
		any = sources[i].handle != 0;
	if (!any && seg && seg_pid == getpid()) {
		unlink_segment();
		munmap(seg, sizeof(*seg));
		seg = NULL;
	}
	pthread_mutex_unlock(&lock);
}

/* Copies the values of the sources of port's queue (port NULL: none) and of the calling
 * thread's own. */
static void refresh(const struct myrio_port *port, uint16_t queue)
{
	if (!seg || seg_pid != getpid())
		return;
	uint64_t values[512];
	write_begin();
	for (int i = 0; i < MAX_SOURCES; i++) {
		struct source *s = &sources[i];
		bool mine = s->port ? s->port == port && s->queue == queue
				    : pthread_equal(s->owner, pthread_self());
		if (!s->handle || !mine)
			continue;
		unsigned n = s->count < 512 ? s->count : 512;
		if (s->fn(s->arg, NULL, values, n) < 0)
			continue;
		for (unsigned k = 0; k < n; k++)
			seg->items[s->first + k].value = values[k];
	}
	write_end();
}

void myrio_publish_now(void)
{
	pthread_mutex_lock(&lock);
	refresh(NULL, 0);
	pthread_mutex_unlock(&lock);
}

void myrio_publish_tick(uint64_t *last_ns, const struct myrio_port *port, uint16_t queue)
{
	uint64_t t = now_ns();
	if (t - *last_ns < PUBLISH_PERIOD_NS)
		return;
	if (pthread_mutex_trylock(&lock) != 0)
		return; /* another thread is copying: next time */
	*last_ns = t;
	refresh(port, queue);
	pthread_mutex_unlock(&lock);
}
