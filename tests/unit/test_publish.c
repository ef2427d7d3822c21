/* Publishing counters to other processes: what the writer puts in the segment reads back
 * whole and current, sources come and go (their items freed and reused), and the reader
 * trusts nothing in a segment: wrong magic, short file, counts past the end, strings
 * without their end are refused or cut. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "myrio/publish.h"
#include "port/publish_segment.h"

#define FAKE_PID 999999 /* above any pid this test's hosts hand out by default */

static uint64_t counter_a = 5, counter_b = 7;

static int source(void *arg, struct myrio_xstat_name *names, uint64_t *values, unsigned n)
{
	const char *prefix = arg;
	for (unsigned i = 0; i < 2 && i < n; i++) {
		if (names)
			snprintf(names[i].name, sizeof(names[i].name), "%s_%u", prefix, i);
		if (values)
			values[i] = i ? counter_b : counter_a;
	}
	return 2;
}

static const struct myrio_published_counter *find(const struct myrio_published *p,
						  const char *group, const char *name)
{
	for (unsigned i = 0; i < p->n; i++)
		if (!strcmp(p->counters[i].group, group) && !strcmp(p->counters[i].name, name))
			return &p->counters[i];
	return NULL;
}

static void counters_read_back_whole_and_current(void **state)
{
	int h1 = myrio_publish_add("port x", source, "rx");
	int h2 = myrio_publish_add("stack 10.0.0.1", source, "tcp");
	assert_true(h1 > 0 && h2 > 0 && h1 != h2);
	struct myrio_published p;
	assert_int_equal(myrio_published_read(getpid(), &p), 0);
	assert_int_equal(p.pid, getpid());
	assert_string_equal(p.program, "test_publish");
	assert_int_equal(p.n, 4);
	assert_int_equal(find(&p, "port x", "rx_1")->value, 0); /* not copied yet */
	myrio_published_free(&p);
	myrio_publish_now();
	assert_int_equal(myrio_published_read(getpid(), &p), 0);
	assert_int_equal(find(&p, "port x", "rx_0")->value, 5);
	assert_int_equal(find(&p, "stack 10.0.0.1", "tcp_1")->value, 7);
	myrio_published_free(&p);
	counter_b = 1000;
	myrio_publish_now();
	assert_int_equal(myrio_published_read(getpid(), &p), 0);
	assert_int_equal(find(&p, "port x", "rx_1")->value, 1000);
	myrio_published_free(&p);
	/* a source that goes leaves no trace; its items are reused */
	myrio_publish_remove(h1);
	assert_int_equal(myrio_published_read(getpid(), &p), 0);
	assert_int_equal(p.n, 2);
	assert_null(find(&p, "port x", "rx_0"));
	myrio_published_free(&p);
	for (int i = 0; i < 5000; i++) { /* far more than the segment holds at once */
		int h = myrio_publish_add("port y", source, "rx");
		assert_true(h > 0);
		myrio_publish_remove(h);
	}
	int pids[4];
	assert_true(myrio_published_find("test_publish", pids, 4) >= 1);
	assert_int_equal(myrio_published_find("no-such-program", pids, 4), 0);
	myrio_publish_remove(h2);
	/* the last source gone, the segment is gone too */
	assert_int_equal(myrio_published_read(getpid(), &p), -ENOENT);
}

/* A segment file for FAKE_PID with the given header and size. */
static void fake_segment(const struct pub_header *h, size_t size, const pub_item *first)
{
	char name[32];
	snprintf(name, sizeof(name), PUB_PATH_FMT, FAKE_PID);
	int fd = shm_open(name, O_CREAT | O_TRUNC | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	assert_int_equal(pwrite(fd, h, sizeof(*h), 0), (ssize_t)sizeof(*h));
	if (first && size >= sizeof(*h) + sizeof(*first))
		assert_int_equal(pwrite(fd, first, sizeof(*first), sizeof(*h)),
				 (ssize_t)sizeof(*first));
	close(fd);
}

static void hostile_segments_are_refused_or_cut(void **state)
{
	char name[32];
	snprintf(name, sizeof(name), PUB_PATH_FMT, FAKE_PID);
	struct pub_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PUB_MAGIC, sizeof(h.magic));
	h.layout = PUB_LAYOUT;
	h.capacity = PUB_CAPACITY;
	h.pid = FAKE_PID;
	memset(h.program, 'p', sizeof(h.program)); /* no terminating zero */
	h.n_used = 0xffffffffu;			   /* past the end */
	pub_item it;
	memset(&it, 'g', sizeof(it));
	struct myrio_published p;
	fake_segment(&h, sizeof(struct pub_segment), &it);
	assert_int_equal(myrio_published_read(FAKE_PID, &p), 0);
	assert_int_equal(strlen(p.program), sizeof(p.program) - 1);
	assert_int_equal(p.n, 1); /* the one item with a group; the rest is zeroes */
	assert_int_equal(strlen(p.counters[0].group), sizeof(it.group) - 1);
	assert_int_equal(strlen(p.counters[0].name), sizeof(it.name) - 1);
	myrio_published_free(&p);
	fake_segment(&h, sizeof(h) + 100, NULL); /* shorter than the layout */
	assert_int_equal(myrio_published_read(FAKE_PID, &p), -EPROTO);
	h.seq = 0;
	h.magic[0] = 'X';
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	assert_int_equal(myrio_published_read(FAKE_PID, &p), -EPROTO);
	h.magic[0] = PUB_MAGIC[0];
	h.pid = FAKE_PID + 1; /* somebody else's */
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	assert_int_equal(myrio_published_read(FAKE_PID, &p), -EPROTO);
	h.pid = FAKE_PID;
	h.seq = 1; /* a writer that died while writing: the reader gives up, it does not hang */
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	assert_int_equal(myrio_published_read(FAKE_PID, &p), -EPROTO);
	shm_unlink(name);
	assert_int_equal(myrio_published_read(FAKE_PID, &p), -ENOENT);
	/* a segment of a process that is gone is not found by name */
	h.seq = 0;
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	int pids[4];
	char prog[64];
	memset(prog, 'p', sizeof(prog) - 1);
	prog[sizeof(prog) - 1] = '\0';
	bool gone = kill(FAKE_PID, 0) != 0 && errno == ESRCH;
	assert_int_equal(myrio_published_find(prog, pids, 4), gone ? 0 : 1);
	if (gone) /* and its segment was removed */
		assert_int_equal(myrio_published_read(FAKE_PID, &p), -ENOENT);
	shm_unlink(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counters_read_back_whole_and_current),
	    cmocka_unit_test(hostile_segments_are_refused_or_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
