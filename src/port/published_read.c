/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the counters another process publishes (publish_segment.h). Nothing in the
 * segment is trusted: sizes and counts are checked, strings are cut at their buffers. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port/publish_segment.h"

/* The uid a live process runs as (the owner of /proc/PID), or -ESRCH. */
static int process_uid(int pid, uid_t *uid)
{
	char path[32];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) != 0)
		return -ESRCH;
	*uid = st.st_uid;
	return 0;
}

/* Opens pid's segment without following a link or blocking on a FIFO, and only if it is a
 * regular file of the process's own user at least as long as the layout. */
static int open_segment(int pid)
{
	char name[32];
	snprintf(name, sizeof(name), PUB_PATH_FMT, pid);
	int fd = shm_open(name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	struct stat st;
	uid_t uid;
	int rc = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < sizeof(struct pub_segment))
		rc = -EPROTO;
	else if (process_uid(pid, &uid) < 0)
		rc = -ENOENT;
	else if (st.st_uid != uid)
		rc = -EPERM; /* another user's file under this pid's name */
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static bool read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len;
}

/* A string from the segment: cut at its buffer, anything not printable ASCII (terminal
 * escapes) replaced. */
static void clean(char *s, size_t len)
{
	s[len - 1] = '\0';
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

int pub_segment_remove_stale(int pid)
{
	char path[64], name[32];
	struct stat st;
	snprintf(name, sizeof(name), PUB_PATH_FMT, pid);
	snprintf(path, sizeof(path), PUB_DIR "%s", name);
	if (lstat(path, &st) != 0)
		return -errno;
	if (st.st_uid != geteuid())
		return -EPERM; /* not ours to remove */
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return -EBUSY; /* its process still runs */
	return shm_unlink(name) == 0 ? 0 : -errno;
}

int myrio_published_read(int pid, struct myrio_published *out)
{
	memset(out, 0, sizeof(*out));
	int fd = open_segment(pid);
	if (fd < 0)
		return fd;
	int rc = -EPROTO;
	pub_item *items = calloc(PUB_CAPACITY, sizeof(*items));
	struct pub_header h;
	const off_t seq_at = offsetof(struct pub_segment, h.seq);
	const off_t items_at = offsetof(struct pub_segment, items);
	for (int tries = 0; items && tries < 1000 && rc == -EPROTO; tries++) {
		uint64_t seq2;
		if (!read_at(fd, &h, sizeof(h), 0))
			break; /* cut short since the fstat */
		if (h.seq & 1) {
			usleep(100); /* a writer is at work */
			continue;
		}
		uint32_t used = h.n_used <= PUB_CAPACITY ? h.n_used : PUB_CAPACITY;
		if (!read_at(fd, items, (size_t)used * sizeof(*items), items_at) ||
		    !read_at(fd, &seq2, sizeof(seq2), seq_at))
			break;
		if (seq2 != h.seq)
			continue;
		if (memcmp(h.magic, PUB_MAGIC, sizeof(h.magic)) != 0 || h.layout != PUB_LAYOUT ||
		    h.capacity != PUB_CAPACITY || h.pid != pid)
			break;
		rc = 0;
		out->counters = items;
		for (uint32_t i = 0; i < used; i++) {
			clean(items[i].group, sizeof(items[i].group));
			clean(items[i].name, sizeof(items[i].name));
			if (items[i].group[0])
				items[out->n++] = items[i];
		}
	}
	close(fd);
	if (rc < 0) {
		out->counters = NULL;
		free(items);
		return items ? rc : -ENOMEM;
	}
	out->pid = pid;
	clean(h.program, sizeof(h.program));
	snprintf(out->program, sizeof(out->program), "%s", h.program);
	out->updated_ns = h.updated_ns;
	return 0;
}

void myrio_published_free(struct myrio_published *p)
{
	free(p->counters);
	p->counters = NULL;
	p->n = 0;
}

int myrio_published_find(const char *program, int *pids, unsigned max)
{
	DIR *d = opendir(PUB_DIR);
	if (!d)
		return -errno;
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		if (strncmp(e->d_name, "myrio.", 6) != 0 || !isdigit((unsigned char)e->d_name[6]))
			continue;
		long pid = strtol(e->d_name + 6, &end, 10);
		if (*end || pid <= 0 || pid > 0x7fffffff)
			continue;
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			pub_segment_remove_stale((int)pid);
			continue;
		}
		struct myrio_published p;
		if (myrio_published_read((int)pid, &p) < 0)
			continue;
		bool match = !program || strcmp(p.program, program) == 0;
		myrio_published_free(&p);
		if (match) {
			if (n < max)
				pids[n] = (int)pid;
			n++;
		}
	}
	closedir(d);
	return (int)(n < max ? n : max);
}
