/* SPDX-License-Identifier: BSD-3-Clause */
/* Publishing counters to other processes: what the writer puts in the segment reads back
 * whole and current, sources come and go (their items freed and reused), and the reader
 * trusts nothing in a segment: wrong magic, short file, counts past the end, strings
 * without their end or with terminal escapes are refused, cut or cleaned; a FIFO, a link or
 * another user's file under a process's name is refused without blocking. The writer never
 * writes into a file somebody else made. A port's counters are published by the thread that
 * polls it. */
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
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "myrio/pkt.h"
#include "myrio/port.h"
#include "myrio/publish.h"
#include "myrio/sim.h"
#include "port/publish_segment.h"

static int fake_pid; /* a live process of ours (a child that waits) whose name the fakes take */

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

/* A segment file for fake_pid with the given header and size. */
struct poller {
	struct myrio_port *port;
	unsigned rx;
	bool tx_too;	   /* a send burst (reaping only) before each receive burst */
	unsigned arm_every; /* arms the interrupt every so many bursts (0: never), as a
			     * program that sleeps when idle does */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Polls its port for 400 ms of wall time: several publishing periods. */
static void *poll_port(void *arg)
{
	struct poller *p = arg;
	struct myrio_pkt *pk[32];
	unsigned bursts = 0;
	for (uint64_t end = mono_ns() + 400000000u; mono_ns() < end;) {
		if (p->tx_too)
			myrio_tx_burst(p->port, NULL, 0);
		if (p->arm_every && ++bursts % p->arm_every == 0)
			myrio_port_irq_arm(p->port);
		uint16_t n = myrio_rx_burst(p->port, pk, 32);
		p->rx += n;
		myrio_pkt_free_bulk(pk, n);
	}
	return NULL;
}

/* a sends 10 broadcast frames from a new pool; b is polled on a worker thread (a send burst
 * before each receive burst with tx_too) for 400 ms: it received them, and the worker
 * published that. Returns the pool. */
static struct myrio_pool *worker_publishes_what_it_received(struct myrio_port *a,
							    struct myrio_port *b, bool tx_too,
							    unsigned arm_every)
{
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(a, 64, 2048, &pool), 0);
	for (int i = 0; i < 10; i++) {
		struct myrio_pkt *pk = myrio_pkt_alloc(pool);
		assert_non_null(pk);
		memset(myrio_pkt_data(pk), 0xff, 64); /* broadcast, for any receiver */
		pk->len = 64;
		assert_int_equal(myrio_tx_burst(a, &pk, 1), 1);
	}
	struct poller p = {b, 0, tx_too, arm_every};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, poll_port, &p), 0);
	pthread_join(t, NULL);
	assert_int_equal(p.rx, 10);
	struct myrio_published pub;
	assert_int_equal(myrio_published_read(getpid(), &pub), 0);
	struct myrio_port_info info;
	assert_int_equal(myrio_port_info(b, &info), 0);
	char group[80];
	snprintf(group, sizeof(group), "port %s", info.device);
	const struct myrio_published_counter *c = find(&pub, group, "rx_packets");
	assert_non_null(c);
	assert_int_equal(c->value, 10);
	myrio_published_free(&pub);
	return pool;
}

/* The usual threading: the port opened on the main thread, polled on a worker. What the
 * worker received is published (the first version copied only the opener's sources, from
 * the opener's polls: zeros for ever). */
static void a_port_polled_by_another_thread_publishes_what_it_sees(void **state)
{
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	struct myrio_port *a, *b;
	assert_int_equal(myrio_port_open(&a, "pair:pub/0", &pc), 0);
	assert_int_equal(myrio_port_open(&b, "pair:pub/1", &pc), 0);
	myrio_pool_destroy(worker_publishes_what_it_received(a, b, false, 0));
	myrio_port_close(b);
	myrio_port_close(a);
}

/* Two Myri-10G ports of a threaded model, the watchdog off unless irq (then interrupts
 * on): worker_publishes_what_it_received with send bursts, arming every arm_every. */
static void myri10ge_worker_publishes(bool irq, unsigned arm_every)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	struct myrio_sim *sim;
	assert_int_equal(myrio_sim_create(&sim, &sc), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = sim;
	pc.irq = irq;
	pc.watchdog_ms = irq ? 0 : UINT32_MAX;
	struct myrio_port *a, *b;
	assert_int_equal(myrio_port_open(&a, "sim:sim0", &pc), 0);
	assert_int_equal(myrio_port_open(&b, "sim:sim1", &pc), 0);
	struct myrio_pool *pool = worker_publishes_what_it_received(a, b, true, arm_every);
	myrio_port_tx_drain(a, pool, 1000);
	myrio_pool_destroy(pool);
	myrio_port_close(b);
	myrio_port_close(a);
	myrio_sim_destroy(sim);
}

/* The Myri-10G port's periodic work (publishing among it) rides on its watchdog's countdown,
 * which send and receive bursts both count down: it still runs with the watchdog off, and
 * whichever burst reaches 0. */
static void a_myri10ge_port_publishes_with_its_watchdog_off(void **state)
{
	myri10ge_worker_publishes(false, 0);
}

/* A program that sleeps when idle arms the interrupt every few bursts; arming runs the
 * watchdog, which restarts the countdown the periodic work rides on: the periodic work
 * runs on arming too (the first version published nothing from such a program). */
static void a_myri10ge_port_armed_often_publishes(void **state)
{
	myri10ge_worker_publishes(true, 16);
}

static void fake_segment(const struct pub_header *h, size_t size, const pub_item *first)
{
	char name[32];
	snprintf(name, sizeof(name), PUB_PATH_FMT, fake_pid);
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
	snprintf(name, sizeof(name), PUB_PATH_FMT, fake_pid);
	struct pub_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PUB_MAGIC, sizeof(h.magic));
	h.layout = PUB_LAYOUT;
	h.capacity = PUB_CAPACITY;
	h.pid = fake_pid;
	memset(h.program, 'p', sizeof(h.program)); /* no terminating zero */
	h.n_used = 0xffffffffu;			   /* past the end */
	pub_item it;
	memset(&it, 'g', sizeof(it));
	struct myrio_published p;
	fake_segment(&h, sizeof(struct pub_segment), &it);
	assert_int_equal(myrio_published_read(fake_pid, &p), 0);
	assert_int_equal(strlen(p.program), sizeof(p.program) - 1);
	assert_int_equal(p.n, 1); /* the one item with a group; the rest is zeroes */
	assert_int_equal(strlen(p.counters[0].group), sizeof(it.group) - 1);
	assert_int_equal(strlen(p.counters[0].name), sizeof(it.name) - 1);
	myrio_published_free(&p);
	fake_segment(&h, sizeof(h) + 100, NULL); /* shorter than the layout */
	assert_int_equal(myrio_published_read(fake_pid, &p), -EPROTO);
	h.seq = 0;
	h.magic[0] = 'X';
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	assert_int_equal(myrio_published_read(fake_pid, &p), -EPROTO);
	h.magic[0] = PUB_MAGIC[0];
	h.pid = fake_pid + 1; /* somebody else's */
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	assert_int_equal(myrio_published_read(fake_pid, &p), -EPROTO);
	h.pid = fake_pid;
	h.seq = 1; /* a writer that died while writing: the reader gives up, it does not hang */
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	assert_int_equal(myrio_published_read(fake_pid, &p), -EPROTO);
	shm_unlink(name);
	assert_int_equal(myrio_published_read(fake_pid, &p), -ENOENT);
	/* a segment of a live process is found by its name */
	h.seq = 0;
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	int pids[4];
	char prog[64];
	memset(prog, 'p', sizeof(prog) - 1);
	prog[sizeof(prog) - 1] = '\0';
	assert_int_equal(myrio_published_find(prog, pids, 4), 1);
	shm_unlink(name);
}

static void path_of(int pid, char *path, size_t len)
{
	char name[32];
	snprintf(name, sizeof(name), PUB_PATH_FMT, pid);
	snprintf(path, len, PUB_DIR "%s", name);
}

/* A FIFO under a live pid's name would block an open without O_NONBLOCK for ever; a link
 * could point anywhere. Both are refused at once (the alarm fails the test otherwise). */
static void fifos_and_links_are_refused_without_blocking(void **state)
{
	char path[64];
	path_of(fake_pid, path, sizeof(path));
	unlink(path);
	assert_int_equal(mkfifo(path, 0666), 0);
	alarm(10);
	struct myrio_published p;
	assert_true(myrio_published_read(fake_pid, &p) < 0);
	int pids[4];
	assert_int_equal(myrio_published_find(NULL, pids, 4) >= 0, 1);
	alarm(0);
	unlink(path);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_true(myrio_published_read(fake_pid, &p) < 0);
	unlink(path);
}

static void fill_header(struct pub_header *h, int pid)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, PUB_MAGIC, sizeof(h->magic));
	h->layout = PUB_LAYOUT;
	h->capacity = PUB_CAPACITY;
	h->pid = pid;
	h->n_used = 1;
}

/* Another user's file under a pid of ours fakes that process's counters: refused. */
static void another_users_segment_is_refused(void **state)
{
	if (geteuid() != 0)
		skip(); /* only root can give a file away */
	struct pub_header h;
	fill_header(&h, fake_pid);
	snprintf(h.program, sizeof(h.program), "faked");
	fake_segment(&h, sizeof(struct pub_segment), NULL);
	char path[64];
	path_of(fake_pid, path, sizeof(path));
	struct myrio_published p;
	assert_int_equal(myrio_published_read(fake_pid, &p), 0);
	myrio_published_free(&p);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(myrio_published_read(fake_pid, &p), -EPERM);
	int pids[4];
	assert_int_equal(myrio_published_find("faked", pids, 4), 0);
	unlink(path);
}

/* Strings reach a terminal: no escape sequence or control character gets through. */
static void terminal_escapes_are_replaced(void **state)
{
	struct pub_header h;
	fill_header(&h, fake_pid);
	snprintf(h.program, sizeof(h.program), "ev\x1b]0;owned\a\x1b[2Jil");
	pub_item it;
	memset(&it, 0, sizeof(it));
	snprintf(it.group, sizeof(it.group), "port \x1b[31mred\r\n");
	snprintf(it.name, sizeof(it.name),
		 "rx\x9b"
		 "1m\x7f");
	fake_segment(&h, sizeof(struct pub_segment), &it);
	struct myrio_published p;
	assert_int_equal(myrio_published_read(fake_pid, &p), 0);
	assert_string_equal(p.program, "ev?]0;owned??[2Jil");
	assert_int_equal(p.n, 1);
	assert_string_equal(p.counters[0].group, "port ?[31mred??");
	assert_string_equal(p.counters[0].name, "rx?1m?");
	myrio_published_free(&p);
	char path[64];
	path_of(fake_pid, path, sizeof(path));
	unlink(path);
}

/* In a child (publishing is decided once a process): a file another user made under the
 * child's name is left alone and not written; a stale one of our own is replaced by a
 * fresh segment only we can read or write. */
static int publisher_child(void)
{
	char path[64];
	struct stat st;
	path_of(getpid(), path, sizeof(path));
	if (geteuid() == 0) {
		int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0666);
		if (fd < 0 || fchown(fd, 65534, 65534) != 0 || fchmod(fd, 0666) != 0)
			return 10;
		close(fd);
		if (myrio_publish_add("port z", source, "rx") != -ENOTSUP)
			return 11; /* it published into the other user's file */
		if (stat(path, &st) != 0 || st.st_size != 0 || st.st_uid != 65534)
			return 12;
		return unlink(path) == 0 ? 0 : 13;
	}
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0666);
	if (fd < 0 || write(fd, "stale", 5) != 5)
		return 20;
	close(fd);
	int hnd = myrio_publish_add("port z", source, "rx");
	if (hnd <= 0)
		return 21;
	if (stat(path, &st) != 0 || (st.st_mode & 0777) != 0600 || st.st_uid != geteuid() ||
	    (size_t)st.st_size != sizeof(struct pub_segment))
		return 22;
	myrio_publish_remove(hnd);
	return 0;
}

static void the_writer_never_uses_a_file_it_did_not_make(void **state)
{
	for (int as_user = 0; as_user < 2; as_user++) {
		pid_t c = fork();
		assert_true(c >= 0);
		if (c == 0) {
			if (as_user && geteuid() == 0) {
				/* root: the stale-file case as a plain user */
				if (setgid(65534) != 0 || setuid(65534) != 0)
					_exit(30);
			}
			_exit(publisher_child());
		}
		int status;
		assert_int_equal(waitpid(c, &status, 0), c);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

/* A segment a dead process of ours left is removed when looked for; another user's is not. */
static void stale_segments_of_ours_are_removed(void **state)
{
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	struct pub_header h;
	fill_header(&h, c);
	char name[32], path[64];
	snprintf(name, sizeof(name), PUB_PATH_FMT, c);
	path_of(c, path, sizeof(path));
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	if (geteuid() == 0) {
		assert_int_equal(fchown(fd, 65534, 65534), 0);
		int pids[4];
		myrio_published_find(NULL, pids, 4);
		assert_int_equal(access(path, F_OK), 0); /* not ours: left */
		assert_int_equal(fchown(fd, 0, 0), 0);
	}
	close(fd);
	int pids[4];
	myrio_published_find(NULL, pids, 4);
	assert_int_equal(access(path, F_OK), -1);
}

static int start_fake(void **state)
{
	fake_pid = fork();
	if (fake_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* it goes with the test, however that ends */
		pause();
		_exit(0);
	}
	return fake_pid > 0 ? 0 : -1;
}

static int stop_fake(void **state)
{
	kill(fake_pid, SIGKILL);
	waitpid(fake_pid, NULL, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counters_read_back_whole_and_current),
	    cmocka_unit_test(a_port_polled_by_another_thread_publishes_what_it_sees),
	    cmocka_unit_test(a_myri10ge_port_publishes_with_its_watchdog_off),
	    cmocka_unit_test(a_myri10ge_port_armed_often_publishes),
	    cmocka_unit_test(hostile_segments_are_refused_or_cut),
	    cmocka_unit_test(fifos_and_links_are_refused_without_blocking),
	    cmocka_unit_test(another_users_segment_is_refused),
	    cmocka_unit_test(terminal_escapes_are_replaced),
	    cmocka_unit_test(the_writer_never_uses_a_file_it_did_not_make),
	    cmocka_unit_test(stale_segments_of_ours_are_removed),
	};
	return cmocka_run_group_tests(tests, start_fake, stop_fake);
}
