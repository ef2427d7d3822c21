/* SPDX-License-Identifier: BSD-3-Clause */
/* Publishing on a port of several queues: a source added for queue q (a stack on that
 * queue, myrio_publish_add_queue) is copied only by the thread polling queue q, never by
 * queue 0's, which would read counters while their own thread writes them. Two threads
 * poll queues 0 and 1 of a port for 350 ms (three copy periods); each queue's source
 * records which thread copied it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "myrio/myrio.h"
#include "myrio/publish.h"
#include "queues_port.h"

struct queue_source {
	struct myrio_port *port;
	uint16_t q;
	pthread_barrier_t *start;
	pthread_t poller; /* set by the polling thread before the barrier */
	atomic_uint by_poller, by_other;
};

static int source_fn(void *arg, struct myrio_xstat_name *names, uint64_t *values, unsigned n)
{
	struct queue_source *s = arg;
	if (names && n > 0)
		snprintf(names[0].name, sizeof(names[0].name), "q%u_copies", s->q);
	if (values && n > 0) {
		if (pthread_equal(pthread_self(), s->poller))
			values[0] = atomic_fetch_add(&s->by_poller, 1) + 1;
		else
			values[0] = atomic_fetch_add(&s->by_other, 1) + 1;
	}
	return 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *poll_run(void *arg)
{
	struct queue_source *s = arg;
	s->poller = pthread_self();
	pthread_barrier_wait(s->start);
	struct myrio_pkt *pk[32];
	for (double end = now_s() + 0.35; now_s() < end;)
		myrio_pkt_free_bulk(pk, myrio_rx_burst_queue(s->port, s->q, pk, 32));
	return NULL;
}

static void each_queue_thread_copies_only_its_own_sources(void **state)
{
	(void)state;
	struct myrio_sim *w;
	struct myrio_port *p;
	assert_int_equal(queues_port_open(&w, &p, 2), 0);
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, 2);
	struct queue_source src[2] = {{.port = p, .q = 0, .start = &start},
				      {.port = p, .q = 1, .start = &start}};
	int handle[2];
	for (unsigned q = 0; q < 2; q++) {
		handle[q] = myrio_publish_add_queue(p, (uint16_t)q, "test", source_fn, &src[q]);
		assert_true(handle[q] > 0);
	}
	assert_int_equal(myrio_publish_add_queue(p, 2, "test", source_fn, &src[0]), -EINVAL);
	pthread_t th[2];
	for (unsigned q = 0; q < 2; q++)
		assert_int_equal(pthread_create(&th[q], NULL, poll_run, &src[q]), 0);
	for (unsigned q = 0; q < 2; q++)
		pthread_join(th[q], NULL);
	for (unsigned q = 0; q < 2; q++) {
		myrio_publish_remove(handle[q]);
		assert_int_equal(atomic_load(&src[q].by_other), 0);
		assert_true(atomic_load(&src[q].by_poller) >= 1);
	}
	pthread_barrier_destroy(&start);
	queues_port_close(w, p);
}

int main(void)
{
	unsetenv("MYRIO_PUBLISH"); /* this test is about publishing */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_queue_thread_copies_only_its_own_sources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
