/* SPDX-License-Identifier: BSD-3-Clause */
/* Load: many concurrent TCP connections between two stacks over the device model, each
 * moving its own checked data. All connections are established and held open at the same
 * time, then every one sends BYTES to the other side, then all close in order. Every byte
 * of every connection is verified (count and pattern).
 *
 * MYRIO_LOAD_CONNS (default 10000) and
 * MYRIO_LOAD_BYTES (per connection, default 4096) set the size. The test prints the
 * connections held, the heap used per connection (stack tables sized for them) and the
 * model time taken. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stack_pair.h"
#include "tcp_lite/stack.h" /* sizeof the connection record, for the report */
#include "test_env.h"
#include "wall_clock.h"

#define PORT 7000

static unsigned nconns;
static uint64_t bytes_per_conn;

static void big_tables(struct myrio_stack_conf *c)
{
	c->max_tcp_conns = nconns + 64;
	c->tx_pool_size = nconns < 4096 ? 8192 : 2 * nconns;
	c->snd_queue_segs = 8;
	c->rcv_buf = 64 * 1024;
	c->delayed_ack_ms = 0;
	c->time_wait_ms = 100;
}

static unsigned count(struct stack_pair *m, bool (*pred)(const struct sp_stream *))
{
	unsigned n = 0;
	for (unsigned i = 0; i < m->nstreams; i++)
		n += pred(&m->streams[i]);
	return n;
}

static bool is_connected(const struct sp_stream *s)
{
	return s->connected && s->c && myrio_tcp_state(s->c) == MYRIO_TCP_ESTABLISHED;
}

static bool is_done_rx(const struct sp_stream *s)
{
	return s->to_send == 0 && s->rcvd == bytes_per_conn;
}

static bool is_eof(const struct sp_stream *s)
{
	return s->eof || s->closed;
}

static void many_connections_all_verified(void **state)
{
	(void)state;
	nconns = env_u("MYRIO_LOAD_CONNS", 10000);
	bytes_per_conn = env_u("MYRIO_LOAD_BYTES", 4096);
	double t0 = wall_s();
	size_t heap0 = heap_used();
	struct stack_pair m;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.rx_pool_size = 4096;
	assert_int_equal(sp_open(&m, "sim:link=10g",
				 &(struct sp_opts){.streams = 2 * nconns + 8,
						   .tweak = big_tables,
						   .port_conf = &pc}),
			 0);
	size_t heap1 = heap_used();
	assert_int_equal(sp_static_arp(&m), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(m.b, PORT, 1024, NULL, &l), 0);

	/* Phase 1: open in waves no larger than the listener's backlog, hold them all. */
	unsigned opened = 0;
	while (opened < nconns) {
		unsigned wave = nconns - opened < 512 ? nconns - opened : 512;
		for (unsigned i = 0; i < wave; i++) {
			struct myrio_tcp_conn *c;
			int rc = myrio_tcp_connect(m.a, SP_IP_B, PORT, NULL, &c);
			assert_int_equal(rc, 0);
			assert_non_null(sp_stream_new(&m, c));
		}
		opened += wave;
		for (int r = 0; r < 20000 && (m.connected < opened || m.accepted < opened); r++)
			sp_round(&m);
		assert_int_equal(m.errors, 0);
		assert_int_equal(m.connected, opened);
		assert_int_equal(m.accepted, opened);
	}
	unsigned held = count(&m, is_connected);
	assert_int_equal(held, 2 * nconns); /* both ends of every connection established */
	double t_open = wall_s() - t0;

	/* Phase 2: every connection moves its own data, all at once. */
	for (unsigned i = 0; i < m.nstreams; i++) {
		struct sp_stream *s = &m.streams[i];
		/* streams of side a were created by connect (their user was set first) */
		uint32_t lip;
		uint16_t lport;
		uint32_t rip;
		uint16_t rport;
		myrio_tcp_addr(s->c, &lip, &lport, &rip, &rport);
		if (lip == SP_IP_A) {
			s->to_send = bytes_per_conn;
			sp_stream_write(s);
		}
	}
	uint64_t rounds = 0;
	while (count(&m, is_done_rx) < nconns && rounds < 2000000 && !m.errors) {
		sp_round(&m);
		rounds++;
		if (rounds % 64 == 0) /* refused writes resume on WRITABLE; poke the rest */
			for (unsigned i = 0; i < m.nstreams; i++)
				if (m.streams[i].c && m.streams[i].sent < m.streams[i].to_send)
					sp_stream_write(&m.streams[i]);
	}
	assert_int_equal(m.errors, 0);
	assert_int_equal(count(&m, is_done_rx), nconns);
	for (unsigned i = 0; i < m.nstreams; i++)
		assert_int_equal(m.streams[i].bad, 0);

	/* Phase 3: orderly close, both directions. */
	/* A FIN takes a transmit buffer until it is acknowledged: with more connections than
	 * buffers, shutdown says -ENOBUFS and is retried once ACKs free some. */
	bool *shut = calloc(m.nstreams, sizeof(bool));
	unsigned nshut = 0;
	for (int r = 0; r < 300000 && (r % 256 || count(&m, is_eof) < nconns); r++) {
		for (unsigned i = 0; r % 16 == 0 && nshut < nconns && i < m.nstreams; i++) {
			if (!m.streams[i].to_send || shut[i])
				continue;
			int rc = myrio_tcp_shutdown(m.streams[i].c);
			if (rc == 0) {
				shut[i] = true;
				nshut++;
			} else {
				assert_int_equal(rc, -ENOBUFS);
			}
		}
		sp_round(&m);
	}
	free(shut);
	if (getenv("V")) {
		unsigned st[16] = {0};
		for (unsigned i = 0; i < m.nstreams; i++)
			if (m.streams[i].c && !is_eof(&m.streams[i]))
				st[myrio_tcp_state(m.streams[i].c)]++;
		struct myrio_stack_stats sa;
		myrio_stack_stats(m.a, &sa);
		printf("model %.3f s, tx_ring_full %lu tx_pool_empty %lu retx %lu rto %lu "
		       "copy_nic_busy %lu segs_out %lu tx_frames %lu free %u/%u\n",
		       myrio_sim_now_ns(m.sim) / 1e9, (unsigned long)sa.tx_ring_full,
		       (unsigned long)sa.tx_pool_empty, (unsigned long)sa.tcp_retransmits,
		       (unsigned long)sa.tcp_rto_expired, (unsigned long)sa.tcp_tx_copy_nic_busy,
		       (unsigned long)sa.tcp_segs_out, (unsigned long)sa.tx_frames,
		       myrio_pool_free_count(m.a->pool), m.a->pool->count);
		struct myrio_port_stats pa;
		myrio_port_stats(m.pa, &pa);
		printf("port a: tx %lu ring_full %lu dropped_bad %lu\n", (unsigned long)pa.tx_packets,
		       (unsigned long)pa.tx_ring_full, (unsigned long)pa.tx_dropped_bad);
		struct myrio_stack_stats sb;
		myrio_stack_stats(m.b, &sb);
		printf("b: segs_in %lu oow %lu no_conn %lu rcv_full %lu csum %lu bad_ack %lu paws %lu "
		       "challenge %lu dup %lu rx_frames %lu\n",
		       (unsigned long)sb.tcp_segs_in, (unsigned long)sb.drop_tcp_out_of_window,
		       (unsigned long)sb.drop_tcp_no_conn, (unsigned long)sb.drop_tcp_rcv_full,
		       (unsigned long)sb.drop_tcp_csum, (unsigned long)sb.drop_tcp_bad_ack,
		       (unsigned long)sb.tcp_paws_drops, (unsigned long)sb.tcp_challenge_acks,
		       (unsigned long)sb.tcp_dup_segs, (unsigned long)sb.rx_frames);
		struct myrio_port_stats pb;
		myrio_port_stats(m.pb, &pb);
		printf("port b: rx %lu missed %lu refill_failed %lu bad_completion %lu\n",
		       (unsigned long)pb.rx_packets, (unsigned long)pb.rx_missed,
		       (unsigned long)pb.rx_refill_failed, (unsigned long)pb.rx_bad_completion);
		for (int k = 0; k < 16; k++)
			if (st[k])
				printf("not eof: %u in %s\n", st[k], myrio_tcp_state_name(k));
	}
	assert_int_equal(nshut, nconns);
	assert_int_equal(count(&m, is_eof), nconns);

	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(m.streams[0].c, &cs);
	printf("  %u connections held at once (%u endpoints), %lu bytes each, all verified\n",
	       nconns, held, (unsigned long)bytes_per_conn);
	printf("  heap for both stacks and ports: %.1f MiB, %.0f bytes per connection end "
	       "(tables sized for %u)\n",
	       (double)(heap1 - heap0) / (1 << 20), (double)(heap1 - heap0) / (2.0 * (nconns + 64)),
	       nconns + 64);
	printf("  connection record %zu bytes; transmit/receive buffers come from fixed pools\n",
	       sizeof(struct myrio_tcp_conn));
	printf("  model time %.3f s; wall time: open %.2f s, total %.2f s\n",
	       (double)myrio_sim_now_ns(m.sim) / 1e9, t_open, wall_s() - t0);
	sp_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_connections_all_verified),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
