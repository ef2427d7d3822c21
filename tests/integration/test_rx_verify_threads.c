/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio_rx_verify from the threads of a port's queues at once (one stack per queue does
 * that): every mismatch it finds is counted in rx_csum_mismatch, none lost between the
 * threads. Nothing polls meanwhile, so the reset the mismatches ask for waits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <string.h>

#include "myrio/myrio.h"
#include "queues_port.h"

#define THREADS 4
#define CALLS 2000000

struct verifier {
	struct myrio_port *port;
	struct myrio_pkt *pkt;
	pthread_barrier_t *start; /* all threads at once: they overlap even on one core */
	unsigned eio;
};

static void *verify_run(void *arg)
{
	struct verifier *v = arg;
	pthread_barrier_wait(v->start);
	for (unsigned i = 0; i < CALLS; i++)
		v->eio += myrio_rx_verify(v->port, v->pkt) == -EIO;
	return NULL;
}

static void mismatches_from_every_queue_thread_are_all_counted(void **state)
{
	(void)state;
	struct myrio_sim *w;
	struct myrio_port *p;
	assert_int_equal(queues_port_open(&w, &p, 2), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(p, 64, 2048, &pool), 0);
	struct verifier v[THREADS];
	pthread_t th[THREADS];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, THREADS);
	for (unsigned i = 0; i < THREADS; i++) {
		struct myrio_pkt *m = myrio_pkt_alloc(pool);
		assert_non_null(m);
		memset(myrio_pkt_data(m), 0x5a, 60);
		m->len = 60;
		m->ol_flags = MYRIO_PKT_RX_CSUM_PARTIAL;
		m->rx_csum = 0x1234; /* not the sum of the bytes: a buffer not as described */
		v[i] = (struct verifier){.port = p, .pkt = m, .start = &start};
	}
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, verify_run, &v[i]), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(v[i].eio, CALLS);
		myrio_pkt_free(v[i].pkt);
	}
	pthread_barrier_destroy(&start);
	struct myrio_port_stats st;
	assert_int_equal(myrio_port_stats(p, &st), 0);
	assert_int_equal(st.rx_csum_mismatch, (uint64_t)THREADS * CALLS);
	myrio_pool_destroy(pool);
	queues_port_close(w, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mismatches_from_every_queue_thread_are_all_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
