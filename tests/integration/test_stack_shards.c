/* SPDX-License-Identifier: BSD-3-Clause */
/* tcp_lite, one stack per queue: four client stacks on four queues of one model NIC and
 * four server stacks on four queues of the other, one thread per queue pair, a cable
 * losing 1% of the frames. 64 connections carry 100 MB in all, checked byte for byte at the
 * server; every connection lives on the stack its RSS hash names, at both ends (the
 * client's by the source port it picked). ARP is learned by one stack and used by all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "myrio/myrio.h"
#include "test_pattern.h"

#define NQ 4
#define CONNS_PER_STACK 16
#define TOTAL_DEFAULT (100ull * 1000 * 1000)
#define PER_CONN (total_bytes / (NQ * CONNS_PER_STACK))
static uint64_t total_bytes = TOTAL_DEFAULT; /* MYRIO_TEST_BYTES overrides */
#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define SRV_PORT 5001
#define DEADLINE_S 240

struct conn_state {
	uint64_t done;	  /* bytes written (client) or checked (server) */
	uint64_t key;	  /* the pattern's offset: the client's port */
	bool eof, closed; /* server: the client's FIN; client: the server's close */
	struct myrio_tcp_conn *c;
};

struct shard {
	unsigned q;
	struct myrio_port *pa, *pb;
	struct myrio_stack *cli, *srv;
	struct conn_state cs[CONNS_PER_STACK], ss[CONNS_PER_STACK * NQ];
	unsigned nss;
	unsigned wrong_stack, bad_bytes, errors;
	uint64_t received;
	uint8_t buf[65536];
};

/* Every thread runs until every connection is done: a server stack serves connections of
 * every client stack. */
static atomic_uint clients_closed;
static _Atomic uint64_t checked;

static void write_some(struct conn_state *st)
{
	while (st->done < PER_CONN) {
		uint8_t chunk[8192];
		size_t n =
		    PER_CONN - st->done < sizeof(chunk) ? PER_CONN - st->done : sizeof(chunk);
		for (size_t i = 0; i < n; i++)
			chunk[i] = test_pattern(st->done + i + (st->key << 32));
		ssize_t w = myrio_tcp_write(st->c, chunk, n);
		if (w <= 0)
			return;
		st->done += (uint64_t)w;
	}
	if (st->done == PER_CONN)
		myrio_tcp_shutdown(st->c);
}

static void read_some(struct shard *sh, struct conn_state *st)
{
	ssize_t r;
	while ((r = myrio_tcp_read(st->c, sh->buf, sizeof(sh->buf))) > 0) {
		for (ssize_t i = 0; i < r; i++)
			sh->bad_bytes +=
			    sh->buf[i] != test_pattern(st->done + (uint64_t)i + (st->key << 32));
		st->done += (uint64_t)r;
		sh->received += (uint64_t)r;
		atomic_fetch_add(&checked, (uint64_t)r);
	}
	if (!st->eof && myrio_tcp_eof(st->c)) {
		st->eof = true;
		myrio_tcp_close(st->c); /* our FIN; the stack finishes the close */
	}
}

static void client_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct shard *sh = arg;
	struct conn_state *st = myrio_tcp_user(c);
	switch (ev) {
	case MYRIO_TCP_EV_CONNECTED: {
		uint32_t lip, rip;
		uint16_t lport, rport;
		myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
		int q = myrio_port_rss_flow_queue(sh->pa, 6, htonl(rip), htonl(lip), htons(rport),
						  htons(lport), NULL);
		sh->wrong_stack += q != (int)sh->q;
		st->key = lport;
		write_some(st);
		break;
	}
	case MYRIO_TCP_EV_WRITABLE:
		write_some(st);
		break;
	case MYRIO_TCP_EV_READABLE:
		if (myrio_tcp_eof(c) && !st->closed) {
			st->closed = true;
			atomic_fetch_add(&clients_closed, 1);
			myrio_tcp_close(c);
		}
		break;
	case MYRIO_TCP_EV_CLOSED:
	case MYRIO_TCP_EV_ERROR:
		if (ev == MYRIO_TCP_EV_ERROR)
			sh->errors++;
		if (!st->closed) {
			st->closed = true;
			atomic_fetch_add(&clients_closed, 1);
			myrio_tcp_close(c);
		}
		break;
	default:
		break;
	}
}

static void server_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct shard *sh = arg;
	struct conn_state *st = myrio_tcp_user(c);
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED: {
		uint32_t lip, rip;
		uint16_t lport, rport;
		myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
		int q = myrio_port_rss_flow_queue(sh->pb, 6, htonl(rip), htonl(lip), htons(rport),
						  htons(lport), NULL);
		sh->wrong_stack += q != (int)sh->q;
		if (sh->nss == CONNS_PER_STACK * NQ) {
			myrio_tcp_abort(c);
			sh->errors++;
			return;
		}
		st = &sh->ss[sh->nss++];
		st->c = c;
		st->key = rport;
		myrio_tcp_set_user(c, st);
		read_some(sh, st);
		break;
	}
	case MYRIO_TCP_EV_READABLE:
		read_some(sh, st);
		break;
	case MYRIO_TCP_EV_ERROR:
		sh->errors++;
		break;
	default:
		break;
	}
}

static void *run_shard(void *arg)
{
	struct shard *sh = arg;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		myrio_stack_poll(sh->cli);
		myrio_stack_poll(sh->srv);
		if (atomic_load(&clients_closed) == NQ * CONNS_PER_STACK &&
		    atomic_load(&checked) == total_bytes)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > DEADLINE_S)
			break;
	}
	return NULL;
}

static void stacks_on_queues_carry_100mb(void **state)
{
	struct myrio_sim *w;
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	assert_int_equal(myrio_sim_conf_parse(&sc, "eeprom_fw=rss,loss=0.01,seed=7"), 0);
	assert_int_equal(myrio_sim_create(&w, &sc), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = w;
	struct myrio_port *pa, *pb;
	assert_int_equal(myrio_port_open_queues(&pa, "sim:sim0", &pc, NQ), 0);
	assert_int_equal(myrio_port_open_queues(&pb, "sim:sim1", &pc, NQ), 0);
	static struct shard sh[NQ];
	struct myrio_stack_conf cc, scf;
	myrio_stack_conf_init(&cc);
	cc.delayed_ack_ms = 0;
	cc.rto_min_ms = 20;
	cc.max_tcp_conns = 128;
	cc.tx_pool_size = 2048;
	scf = cc;
	cc.ip = IP_A;
	scf.ip = IP_B;
	for (unsigned q = 0; q < NQ; q++) {
		memset(&sh[q], 0, sizeof(sh[q]));
		sh[q].q = q;
		sh[q].pa = pa;
		sh[q].pb = pb;
		cc.tcp_event = client_event;
		cc.event_arg = &sh[q];
		scf.tcp_event = server_event;
		scf.event_arg = &sh[q];
		assert_int_equal(myrio_stack_create_queue(&sh[q].cli, pa, (uint16_t)q, &cc,
							  q ? sh[0].cli : NULL),
				 0);
		assert_int_equal(myrio_stack_create_queue(&sh[q].srv, pb, (uint16_t)q, &scf,
							  q ? sh[0].srv : NULL),
				 0);
		assert_int_equal(myrio_stack_queue(sh[q].srv), q);
		struct myrio_tcp_listener *l;
		assert_int_equal(myrio_tcp_listen(sh[q].srv, SRV_PORT, 64, NULL, &l), 0);
	}
	for (unsigned q = 0; q < NQ; q++)
		for (unsigned i = 0; i < CONNS_PER_STACK; i++)
			assert_int_equal(myrio_tcp_connect(sh[q].cli, IP_B, SRV_PORT, &sh[q].cs[i],
							   &sh[q].cs[i].c),
					 0);
	pthread_t th[NQ];
	for (unsigned q = 0; q < NQ; q++)
		assert_int_equal(pthread_create(&th[q], NULL, run_shard, &sh[q]), 0);
	for (unsigned q = 0; q < NQ; q++)
		pthread_join(th[q], NULL);
	uint64_t total = 0, retrans = 0;
	for (unsigned q = 0; q < NQ; q++) {
		struct myrio_stack_stats st;
		myrio_stack_stats(sh[q].cli, &st);
		retrans += st.tcp_retransmits;
		unsigned closed = 0;
		for (unsigned i = 0; i < CONNS_PER_STACK; i++)
			closed += sh[q].cs[i].closed;
		printf("# queue %u: %u connections accepted, %.1f MB checked, %u of %u client "
		       "connections closed, %u errors, %u on the wrong stack\n",
		       q, sh[q].nss, (double)sh[q].received / 1e6, closed, CONNS_PER_STACK,
		       sh[q].errors, sh[q].wrong_stack);
		fflush(stdout);
		assert_int_equal(sh[q].wrong_stack, 0);
		assert_int_equal(sh[q].bad_bytes, 0);
		assert_int_equal(sh[q].errors, 0);
		assert_true(sh[q].nss > 0); /* every stack has connections */
		for (unsigned i = 0; i < sh[q].nss; i++)
			assert_int_equal(sh[q].ss[i].done, PER_CONN);
		total += sh[q].received;
	}
	assert_int_equal(total, total_bytes);
	assert_true(retrans > 0); /* the loss was real */
	printf("# %llu bytes over %d connections, %llu retransmissions\n",
	       (unsigned long long)total, NQ * CONNS_PER_STACK, (unsigned long long)retrans);
	for (unsigned q = 0; q < NQ; q++) {
		myrio_stack_destroy(sh[q].cli);
		myrio_stack_destroy(sh[q].srv);
	}
	myrio_port_close(pa);
	myrio_port_close(pb);
	myrio_sim_destroy(w);
}

int main(void)
{
	const char *env = getenv("MYRIO_TEST_BYTES");
	if (env && strtoull(env, NULL, 0) >= NQ * CONNS_PER_STACK)
		total_bytes =
		    strtoull(env, NULL, 0) / (NQ * CONNS_PER_STACK) * (NQ * CONNS_PER_STACK);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(stacks_on_queues_carry_100mb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
