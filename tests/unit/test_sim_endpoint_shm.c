/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared-memory cable (src/sim/endpoint_shm.c, myrio_sim_host_open("shm:NAME/N")):
 * frames cross both ways in order, byte for byte, within a process and to a forked one; a
 * full ring drops and counts; the name leaves /dev/shm once both ends hold it; and what
 * "the other side" writes into the file (a header of another layout, an index or a length
 * out of range) is refused and counted, never followed beyond a slot. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* after the headers it needs */
#include <cmocka.h>

#include "myrio/port.h"
#include "myrio/sim.h"
#include "sim/endpoint_shm.h"

#define WAIT_MS 30000 /* generous: a loaded machine */

static char name[64], path[96], spec0[80], spec1[80];

static int setup(void **state)
{
	(void)state;
	static unsigned n;
	snprintf(name, sizeof(name), "test%d.%u", (int)getpid(), n++);
	snprintf(path, sizeof(path), "/myrio-shm-%s", name);
	snprintf(spec0, sizeof(spec0), "shm:%s/0", name);
	snprintf(spec1, sizeof(spec1), "shm:%s/1", name);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	shm_unlink(path); /* a failed test's leftovers */
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool name_exists(void)
{
	int fd = shm_open(path, O_RDONLY, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* Frame i: 60 + i % 1400 bytes, its number in the first four, a pattern of it after. */
static uint32_t frame_make(uint8_t *f, uint32_t i)
{
	uint32_t len = 60 + i % 1400;
	memcpy(f, &i, 4);
	for (uint32_t k = 4; k < len; k++)
		f[k] = (uint8_t)(i * 7 + k);
	return len;
}

struct rx {
	uint32_t next; /* the frame number expected */
	bool bad;
	struct myrio_sim_host *echo; /* sends every frame back when set */
};

static void on_frame(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct rx *r = ctx;
	uint8_t want[SIM_EP_MAX_FRAME];
	uint32_t want_len = frame_make(want, r->next);
	if (len != want_len || memcmp(frame, want, len) != 0)
		r->bad = true;
	r->next++;
	if (r->echo)
		myrio_sim_host_send(r->echo, frame, len);
}

static void send_range(struct myrio_sim_host *h, uint32_t from, uint32_t to)
{
	uint8_t f[SIM_EP_MAX_FRAME];
	for (uint32_t i = from; i < to; i++)
		myrio_sim_host_send(h, f, frame_make(f, i));
}

/* 1000 frames each way in bursts of 100, more than the ring holds in all: in order. */
static void both_ways_in_order(void **state)
{
	(void)state;
	struct myrio_sim_host *a, *b;
	assert_int_equal(myrio_sim_host_open(&a, spec0), 0);
	assert_true(name_exists());
	assert_int_equal(myrio_sim_host_open(&b, spec1), 0);
	assert_false(name_exists()); /* both ends hold it: unlinked */
	struct rx at_b = {0}, at_a = {0};
	for (uint32_t i = 0; i < 1000; i += 100) {
		send_range(a, i, i + 100);
		send_range(b, i, i + 100);
		assert_int_equal(myrio_sim_host_recv(b, on_frame, &at_b, 1000), 100);
		assert_int_equal(myrio_sim_host_recv(a, on_frame, &at_a, 1000), 100);
	}
	assert_int_equal(at_b.next, 1000);
	assert_int_equal(at_a.next, 1000);
	assert_false(at_a.bad || at_b.bad);
	struct myrio_sim_host_stats st;
	myrio_sim_host_stats(a, &st);
	assert_true(st.to_host == 1000 && st.from_host == 1000 && st.drops == 0);
	assert_int_equal(myrio_sim_host_fd(a), -1);
	myrio_sim_host_close(a);
	myrio_sim_host_close(b);
}

/* A forked process at end 1 echoes what it receives; end 0 sends 5000 frames, never more
 * than half a ring ahead of the echoes, and checks them all. */
static void to_a_forked_process(void **state)
{
	(void)state;
	const uint32_t total = 5000;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct myrio_sim_host *b;
		if (myrio_sim_host_open(&b, spec1) != 0)
			_exit(2);
		struct rx r = {.echo = b};
		uint64_t until = now_ms() + WAIT_MS;
		while (r.next < total && !r.bad && now_ms() < until)
			myrio_sim_host_recv(b, on_frame, &r, 64);
		myrio_sim_host_close(b);
		_exit(r.next == total && !r.bad ? 0 : 1);
	}
	struct myrio_sim_host *a;
	assert_int_equal(myrio_sim_host_open(&a, spec0), 0);
	struct rx r = {0};
	uint32_t sent = 0;
	uint64_t until = now_ms() + WAIT_MS;
	while (r.next < total && !r.bad && now_ms() < until) {
		if (sent < total && sent - r.next < SHM_SLOTS / 2) {
			send_range(a, sent, sent + 1);
			sent++;
		}
		myrio_sim_host_recv(a, on_frame, &r, 64);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(r.next, total);
	assert_false(r.bad);
	struct myrio_sim_host_stats st;
	myrio_sim_host_stats(a, &st);
	assert_int_equal(st.drops, 0);
	myrio_sim_host_close(a);
	assert_false(name_exists());
}

static void full_ring_drops_and_counts(void **state)
{
	(void)state;
	struct myrio_sim_host *a, *b;
	assert_int_equal(myrio_sim_host_open(&a, spec0), 0);
	assert_int_equal(myrio_sim_host_open(&b, spec1), 0);
	send_range(a, 0, SHM_SLOTS + 10);
	struct myrio_sim_host_stats st;
	myrio_sim_host_stats(a, &st);
	assert_int_equal(st.to_host, SHM_SLOTS);
	assert_int_equal(st.drops, 10);
	struct rx r = {0};
	assert_int_equal(myrio_sim_host_recv(b, on_frame, &r, 1000), SHM_SLOTS);
	assert_false(r.bad);
	/* and room again */
	r.next = 0;
	send_range(a, 0, 1);
	assert_int_equal(myrio_sim_host_recv(b, on_frame, &r, 1000), 1);
	assert_false(r.bad);
	myrio_sim_host_close(a);
	myrio_sim_host_close(b);
}

/* The test plays the other process: it maps the file between the two opens. */
static struct shm_cable *map_cable(void)
{
	int fd = shm_open(path, O_RDWR, 0);
	assert_true(fd >= 0);
	void *p = mmap(NULL, sizeof(struct shm_cable), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

static void hostile_indices_and_lengths(void **state)
{
	(void)state;
	struct myrio_sim_host *a, *b;
	assert_int_equal(myrio_sim_host_open(&a, spec0), 0);
	struct shm_cable *c = map_cable();
	assert_int_equal(myrio_sim_host_open(&b, spec1), 0);
	struct shm_ring *ab = &c->ring[0];
	struct myrio_sim_host_stats st;
	struct rx r = {0};

	/* lengths: huge, one past the largest frame, a runt; each dropped, the next taken */
	const uint32_t bad_len[] = {UINT32_MAX, SIM_EP_MAX_FRAME + 1, 3};
	for (unsigned k = 0; k < 3; k++) {
		send_range(a, r.next, r.next + 1);
		ab->slot[(atomic_load(&ab->head) - 1) % SHM_SLOTS].len = bad_len[k];
		assert_int_equal(myrio_sim_host_recv(b, on_frame, &r, 8), 0);
		myrio_sim_host_stats(b, &st);
		assert_int_equal(st.drops, k + 1);
	}
	r.next = 0;
	send_range(a, 0, 1);
	assert_int_equal(myrio_sim_host_recv(b, on_frame, &r, 8), 1);
	assert_false(r.bad);

	/* a head far ahead of anything sent: nothing read, counted */
	uint32_t head = atomic_load(&ab->head);
	atomic_store(&ab->head, head + 100000);
	assert_int_equal(myrio_sim_host_recv(b, on_frame, &r, 8), 0);
	myrio_sim_host_stats(b, &st);
	assert_int_equal(st.drops, 4);
	/* a head behind the tail (it wraps to far ahead): the same */
	atomic_store(&ab->head, atomic_load(&ab->tail) - 1);
	assert_int_equal(myrio_sim_host_recv(b, on_frame, &r, 8), 0);
	myrio_sim_host_stats(b, &st);
	assert_int_equal(st.drops, 5);

	/* a tail the sender never reached: taken as full, the frame dropped and counted */
	struct shm_ring *ba = &c->ring[1];
	atomic_store(&ba->tail, atomic_load(&ba->head) + 7);
	send_range(b, 0, 1);
	myrio_sim_host_stats(b, &st);
	assert_int_equal(st.to_host, 0);
	assert_int_equal(st.drops, 6);
	assert_int_equal(myrio_sim_host_recv(a, on_frame, &r, 8), 0); /* nothing published */

	munmap(c, sizeof(*c));
	myrio_sim_host_close(a);
	myrio_sim_host_close(b);
}

/* A file of the right size whose header says another layout, or one of another size. */
static void foreign_header_refused(void **state)
{
	(void)state;
	struct myrio_sim_host *a;
	int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, sizeof(struct shm_cable)), 0);
	struct shm_cable *c =
	    mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(c != MAP_FAILED);
	c->hdr.version = SHM_VERSION;
	c->hdr.slots = SHM_SLOTS;
	c->hdr.max_frame = SIM_EP_MAX_FRAME;
	c->hdr.size = sizeof(*c);
	atomic_store(&c->hdr.magic, SHM_MAGIC ^ 1);
	assert_int_equal(myrio_sim_host_open(&a, spec1), -EPROTO);
	atomic_store(&c->hdr.magic, SHM_MAGIC);
	c->hdr.version = SHM_VERSION + 1;
	assert_int_equal(myrio_sim_host_open(&a, spec1), -EPROTO);
	c->hdr.version = SHM_VERSION;
	c->hdr.slots = SHM_SLOTS * 2;
	assert_int_equal(myrio_sim_host_open(&a, spec1), -EPROTO);
	c->hdr.slots = SHM_SLOTS;
	c->hdr.max_frame = UINT32_MAX;
	assert_int_equal(myrio_sim_host_open(&a, spec1), -EPROTO);
	c->hdr.max_frame = SIM_EP_MAX_FRAME;
	munmap(c, sizeof(*c));
	assert_int_equal(ftruncate(fd, 4096), 0); /* too small to hold the rings */
	assert_int_equal(myrio_sim_host_open(&a, spec1), -EPROTO);
	close(fd);
}

static void bad_specs_and_taken_ends(void **state)
{
	(void)state;
	struct myrio_sim_host *a, *b;
	const char *bad[] = {"shm:x", "shm:x/2", "shm:/0", "shm:a/b/0", "shm:x/01"};
	for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		assert_int_equal(myrio_sim_host_open(&a, bad[k]), -EINVAL);
	assert_int_equal(myrio_sim_host_open(&a, spec0), 0);
	assert_int_equal(myrio_sim_host_open(&b, spec0), -EBUSY);
	myrio_sim_host_close(a);
	assert_false(name_exists()); /* the other end never came: unlinked at close */
}

/* Two processes' models, each a world of one NIC sim0: the ends give them different
 * addresses (the second end's NIC is the pair's second), or neither could reach the other. */
static void two_worlds_two_addresses(void **state)
{
	(void)state;
	struct myrio_sim_host *h[2];
	struct myrio_sim *w[2];
	struct myrio_port *p[2];
	struct myrio_port_info info[2];
	const char *spec[2] = {spec0, spec1};
	for (int i = 0; i < 2; i++) {
		struct myrio_sim_conf sc;
		myrio_sim_conf_init(&sc);
		sc.stepped = true;
		assert_int_equal(myrio_sim_host_open(&h[i], spec[i]), 0);
		assert_int_equal(myrio_sim_create_cabled(&w[i], &sc, h[i]), 0);
		struct myrio_port_conf pc;
		myrio_port_conf_init(&pc);
		pc.sim = w[i];
		assert_int_equal(myrio_port_open(&p[i], "sim:sim0", &pc), 0);
		assert_int_equal(myrio_port_info(p[i], &info[i]), 0);
	}
	assert_memory_not_equal(info[0].mac, info[1].mac, 6);
	for (int i = 0; i < 2; i++) {
		myrio_port_close(p[i]);
		myrio_sim_destroy(w[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(both_ways_in_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(to_a_forked_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(full_ring_drops_and_counts, setup, teardown),
	    cmocka_unit_test_setup_teardown(hostile_indices_and_lengths, setup, teardown),
	    cmocka_unit_test_setup_teardown(foreign_header_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(bad_specs_and_taken_ends, setup, teardown),
	    cmocka_unit_test_setup_teardown(two_worlds_two_addresses, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
