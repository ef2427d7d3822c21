/* SPDX-License-Identifier: BSD-3-Clause */
/* Soak: connections churn and move checked data both ways between two stacks over the
 * device model while faults are injected at random: frame loss, reordering, duplication,
 * corruption, link flaps, completion entries with impossible lengths. Every finished
 * stream must have delivered every byte exactly once and in order, no connection may fail,
 * and the heap must not grow.
 *
 * MYRIO_SOAK_SECONDS (wall clock; default 3 in the suite, scripts/soak.sh runs 600),
 * MYRIO_SOAK_SEED (default 1), MYRIO_SOAK_CONNS (concurrent, default 32),
 * MYRIO_SOAK_BAD_COMPLETIONS=0 to leave out completion entries with wrong lengths
 * (impossible ones, and plausible ones of the other ring, which put the driver's rings out
 * of step until myrio_rx_verify notices and the port resets the NIC). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/nic.h"
#include "port/port_ops.h"
#include "sim/model.h"
#include "sim/nic.h"
#include "stack_pair.h"
#include "tcp_lite/stack.h" /* connection table, for the diagnosis of a failure */
#include "test_env.h"
#include "wall_clock.h"

#define PORT 9000

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static double rnd_unit(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

static void soak_tweak(struct myrio_stack_conf *c)
{
	/* also the deadline of an orphan (closed handle) to finish its close: it starts at
	 * close and then drops the connection silently, so it must outlast the FIN's
	 * retransmissions through loss and flaps (docs/reliability.md, bug 5); the table holds
	 * the TIME_WAIT entries of a few seconds of churn */
	c->time_wait_ms = 5000;
	c->max_tcp_conns = 16384;
	c->max_retries = 15; /* flaps are short; no connection should time out */
	c->tso = env_u("MYRIO_SOAK_TSO", 1) != 0;
}

struct stats {
	uint64_t streams_done, bytes, flaps, bad_completions, fault_changes;
};

/* Streams live in the harness's table; a finished slot (both directions verified and
 * closed) is reused for a new connection. */
/* The length of a stream follows from the client's port, so the server knows how much
 * must arrive before the FIN. */
static uint64_t stream_len(uint16_t client_port)
{
	return 16 * 1024 + (client_port * 2654435761u) % (768 * 1024);
}

/* The driver's state of port k (0: a, 1: b): the port back-end's layout
 * (src/port/myri10ge_port.c). */
static struct myri_nic *driver_nic(struct stack_pair *m, int k)
{
	struct mirror {
		struct myrio_port port;
		struct myri_nic nic;
	};
	return &((struct mirror *)(k ? m->pb : m->pa))->nic;
}

/* Both ports up with no reset on its way: a watchdog reset frees the rings' buffers and
 * bookkeeping until the NIC is back, so the heap is compared only between such moments. */
static bool ports_settled(struct stack_pair *m)
{
	for (int k = 0; k < 2; k++) {
		struct myri_nic *dn = driver_nic(m, k);
		if (!dn->up || dn->wd.request)
			return false;
	}
	return true;
}

static void open_stream(struct stack_pair *m, unsigned slot)
{
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(m->a, SP_IP_B, PORT, NULL, &c), 0);
	struct sp_stream *s = &m->streams[slot];
	memset(s, 0, sizeof(*s));
	s->c = c;
	uint32_t lip, rip;
	uint16_t lport, rport;
	myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
	s->to_send = stream_len(lport);
	myrio_tcp_set_user(c, (void *)(uintptr_t)(slot + 1));
}

static void soak(void **state)
{
	(void)state;
	unsigned secs = env_u("MYRIO_SOAK_SECONDS", 3);
	unsigned nconns = env_u("MYRIO_SOAK_CONNS", 32);
	bool bad_completions = env_u("MYRIO_SOAK_BAD_COMPLETIONS", 1) != 0;
	rng_state = env_u("MYRIO_SOAK_SEED", 1) * 0x9E3779B97F4A7C15ULL + 1;
	/* slots [0, nconns) are the clients; accepted streams are appended after them and
	 * recycled through a free list of their own */
	struct stack_pair m;
	assert_int_equal(
	    sp_open(&m, "sim:link=10g,seed=5",
		    &(struct sp_opts){.streams = 64 * nconns + 64, .tweak = soak_tweak}),
	    0);
	assert_int_equal(sp_static_arp(&m), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(m.b, PORT, 256, NULL, &l), 0);
	m.nstreams = nconns;
	for (unsigned i = 0; i < nconns; i++)
		open_stream(&m, i);
	for (int i = 0; i < 200; i++)
		sp_round(&m);
	size_t heap0 = 0; /* mallinfo2 reads 0 under ASan, whose leak checker covers it */
	bool warm = false;
	struct sim_nic *nic1 = sim_nic_find(m.sim, "sim1"), *nic0 = sim_nic_find(m.sim, "sim0");
	struct stats st = {0};
	double t0 = wall_s(), deadline = t0 + secs;
	uint64_t round = 0;
	bool link_down = false;
	uint64_t link_back = 0;
	while (wall_s() < deadline) {
		if (!warm && wall_s() > t0 + secs / 3.0 && ports_settled(&m)) {
			heap0 = heap_used(); /* after warm-up */
			warm = true;
		}
		sp_round(&m);
		round++;
		if (link_down && round >= link_back) {
			myrio_sim_set_link(m.sim, "sim0", true);
			link_down = false;
		}
		if (round % 2500 == 0) { /* every 50 ms of model time: change the weather */
			st.fault_changes++;
			struct myrio_sim_faults f = {0};
			if (rnd_unit() < 0.6) {
				f.loss = rnd_unit() * 0.02;
				f.reorder = rnd_unit() * 0.02;
				f.duplicate = rnd_unit() * 0.01;
				f.corrupt = rnd_unit() * 0.01;
			}
			myrio_sim_set_faults(m.sim, "sim0", &f);
			myrio_sim_set_faults(m.sim, "sim1", &f);
			double r = rnd_unit();
			if (r < 0.15 && !link_down) {
				myrio_sim_set_link(m.sim, "sim0", false);
				link_down = true;
				link_back = round + 50 + rnd() % 1500; /* 1..30 ms */
				st.flaps++;
			} else if (r < 0.35 && bad_completions) {
				static const uint32_t bad[] = {0xffff, 9001, 1519, 60, 1000, 1514};
				sim_nic_inject(rnd() & 1 ? nic0 : nic1, SIM_FAULT_BAD_COMPLETION,
					       bad[rnd() % 6]);
				st.bad_completions++;
			}
		}
		if (round % 64)
			continue;
		/* streams: the client side sends; when the server side has everything and the
		 * FIN, both close and the client slot starts a new connection */
		for (unsigned i = 0; i < m.nstreams; i++) {
			struct sp_stream *s = &m.streams[i];
			if (s->c && s->sent < s->to_send)
				sp_stream_write(s);
		}
		for (unsigned i = nconns; i < m.nstreams; i++) {
			struct sp_stream *srv = &m.streams[i];
			if (!srv->c || !srv->eof)
				continue;
			uint32_t lip, rip;
			uint16_t lport, rport;
			myrio_tcp_addr(srv->c, &lip, &lport, &rip, &rport);
			assert_int_equal(srv->bad, 0);
			assert_int_equal(srv->rcvd, stream_len(rport)); /* all of it, then FIN */
			st.bytes += srv->rcvd;
			myrio_tcp_close(srv->c);
			srv->c = NULL;
			srv->eof = false;
			srv->closed = true;
		}
		for (unsigned i = 0; i < nconns; i++) {
			struct sp_stream *s = &m.streams[i];
			if (s->c && s->sent == s->to_send && myrio_tcp_unacked(s->c) == 0) {
				/* orderly close once the data is acknowledged */
				myrio_tcp_close(s->c);
				s->c = NULL;
				st.streams_done++;
			}
			if (!s->c && !s->error)
				open_stream(&m, i);
		}
		/* keep the accepted-stream table from growing without bound */
		if (m.nstreams > 63 * nconns) {
			unsigned w = nconns;
			for (unsigned i = nconns; i < m.nstreams; i++) {
				if (m.streams[i].c) {
					m.streams[w] = m.streams[i];
					myrio_tcp_set_user(m.streams[w].c, (void *)(uintptr_t)(w + 1));
					w++;
				}
			}
			m.nstreams = w;
		}
		if (m.errors) {
			for (unsigned i = 0; i < m.nstreams; i++)
				if (m.streams[i].error)
					printf("  stream %u (%s): error %d after %lu bytes in, %lu out\n", i,
					       i < nconns ? "client" : "server", m.streams[i].err,
					       (unsigned long)m.streams[i].rcvd,
					       (unsigned long)m.streams[i].sent);
			struct myrio_stack *stk[2] = {m.a, m.b};
			for (int k = 0; k < 2; k++) {
				unsigned hist[16] = {0};
				for (uint32_t i = 0; i < stk[k]->nconns; i++)
					if (stk[k]->conns[i].in_use)
						hist[stk[k]->conns[i].state & 15]++;
				printf("  stack %c:", 'a' + k);
				for (int j = 0; j < 16; j++)
					if (hist[j])
						printf(" %s %u", myrio_tcp_state_name(j), hist[j]);
				struct myrio_stack_stats x;
				myrio_stack_stats(stk[k], &x);
				printf("; table_full %lu backlog %lu no_conn %lu oow %lu rst in/out %lu/%lu "
				       "challenge %lu retx %lu\n",
				       (unsigned long)x.drop_tcp_table_full,
				       (unsigned long)x.drop_tcp_syn_backlog,
				       (unsigned long)x.drop_tcp_no_conn,
				       (unsigned long)x.drop_tcp_out_of_window,
				       (unsigned long)x.tcp_resets_rcvd, (unsigned long)x.tcp_resets_sent,
				       (unsigned long)x.tcp_challenge_acks, (unsigned long)x.tcp_retransmits);
			}
			/* the driver's consumer index of each rx ring against the NIC's */
			struct sim_nic *nics[2] = {nic0, nic1};
			for (int k = 0; k < 2; k++) {
				struct myri_nic *dn = driver_nic(&m, k);
				printf("  nic %d: small ring nic %u driver %u, big ring nic %u driver "
				       "%u\n",
				       k, nics[k]->sl[0].small.cons, dn->rings.small.done, nics[k]->sl[0].big.cons,
				       dn->rings.big.done);
				printf("  nic %d: %lu resets, the last at %.3f s; reset pending: %s; "
				       "port %s\n",
				       k, (unsigned long)dn->wd.resets, dn->wd.last_reset_ns / 1e9,
				       dn->wd.request ? "yes" : "no", dn->up ? "up" : "down");
			}
			fail_msg("a connection failed at %.3f s model time",
				 myrio_sim_now_ns(m.sim) / 1e9);
		}
	}
	struct myrio_stack_stats sa;
	myrio_stack_stats(m.a, &sa);
	struct myrio_port_stats pa, pb;
	myrio_port_stats(m.pa, &pa);
	myrio_port_stats(m.pb, &pb);
	printf("  %.0f s wall, %.2f s model: %lu streams done, %.1f MiB verified, %lu weather "
	       "changes, %lu link flaps, %lu bad completions (impossible %lu, buffers not as "
	       "described %lu, NIC resets %lu)\n",
	       wall_s() - t0, myrio_sim_now_ns(m.sim) / 1e9, (unsigned long)st.streams_done,
	       st.bytes / 1048576.0, (unsigned long)st.fault_changes, (unsigned long)st.flaps,
	       (unsigned long)st.bad_completions,
	       (unsigned long)(pa.rx_bad_completion + pb.rx_bad_completion),
	       (unsigned long)(pa.rx_csum_mismatch + pb.rx_csum_mismatch),
	       (unsigned long)(pa.watchdog_resets + pb.watchdog_resets));
	printf("  retransmits %lu, errors %lu\n", (unsigned long)sa.tcp_retransmits,
	       (unsigned long)m.errors);
	assert_int_equal(m.errors, 0);
	assert_true(st.streams_done > 0);
	assert_true(warm); /* the warm-up ended inside the run */
	/* calm weather, so every buffer comes home and a reset under way finishes; then the
	 * heap is where it was after the warm-up: nothing grew with the traffic */
	struct myrio_sim_faults calm = {0};
	myrio_sim_set_faults(m.sim, "sim0", &calm);
	myrio_sim_set_faults(m.sim, "sim1", &calm);
	myrio_sim_set_link(m.sim, "sim0", true);
	for (int i = 0; i < 5000 || (!ports_settled(&m) && i < 500000); i++)
		sp_round(&m);
	assert_true(ports_settled(&m));
	size_t heap1 = heap_used();
	printf("  heap %+ld bytes after the warm-up\n", (long)(heap1 - heap0));
	assert_true(heap1 <= heap0 + 4096);
	sp_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(soak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
