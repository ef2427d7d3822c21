/* Reading the counters another process publishes (publish_segment.h). Nothing in the
 * segment is trusted: sizes and counts are checked, strings are cut at their buffers. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port/publish_segment.h"

static int map_segment(int pid, const struct pub_segment **out)
{
	char name[32];
	snprintf(name, sizeof(name), PUB_PATH_FMT, pid);
	int fd = shm_open(name, O_RDONLY, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct pub_segment))
		m = mmap(NULL, sizeof(struct pub_segment), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -EPROTO;
	*out = m;
	return 0;
}

static void cut(char *s, size_t len)
{
	s[len - 1] = '\0';
}

int myrio_published_read(int pid, struct myrio_published *out)
{
	memset(out, 0, sizeof(*out));
	const struct pub_segment *seg = NULL;
	int rc = map_segment(pid, &seg);
	if (rc < 0)
		return rc;
	rc = -EPROTO;
	pub_item *items = calloc(PUB_CAPACITY, sizeof(*items));
	struct pub_header h;
	for (int tries = 0; items && tries < 1000 && rc == -EPROTO; tries++) {
		uint64_t seq = __atomic_load_n(&seg->h.seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			usleep(100); /* a writer is at work */
			continue;
		}
		memcpy(&h, &seg->h, sizeof(h));
		uint32_t used = h.n_used <= PUB_CAPACITY ? h.n_used : PUB_CAPACITY;
		memcpy(items, seg->items, used * sizeof(*items));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&seg->h.seq, __ATOMIC_RELAXED) != seq)
			continue;
		if (memcmp(h.magic, PUB_MAGIC, sizeof(h.magic)) != 0 || h.layout != PUB_LAYOUT ||
		    h.capacity != PUB_CAPACITY || h.pid != pid)
			break;
		rc = 0;
		out->counters = items;
		for (uint32_t i = 0; i < used; i++) {
			cut(items[i].group, sizeof(items[i].group));
			cut(items[i].name, sizeof(items[i].name));
			if (items[i].group[0])
				items[out->n++] = items[i];
		}
	}
	munmap((void *)seg, sizeof(*seg));
	if (rc < 0) {
		free(items);
		return items ? rc : -ENOMEM;
	}
	out->pid = pid;
	cut(h.program, sizeof(h.program));
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
	DIR *d = opendir("/dev/shm");
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
			/* left behind by a process that died without closing its ports */
			char name[32];
			snprintf(name, sizeof(name), PUB_PATH_FMT, (int)pid);
			shm_unlink(name);
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
