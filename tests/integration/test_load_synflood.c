/* SPDX-License-Identifier: BSD-3-Clause */
/* Load: a SYN flood from spoofed addresses against a listening stack over the device model,
 * while legitimate clients connect and move data. Expected: the flooded stack allocates
 * nothing (heap unchanged: every table is preallocated), its half-open connections stay
 * within the listener's backlog, the excess SYNs are dropped and counted, and the
 * legitimate connections are established and deliver every byte intact. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_pair.h"
#include "syn_frame.h"
#include "tcp_lite/stack.h" /* the connection table, to count half-open connections */
#include "test_env.h"

#define PORT 8000
#define BACKLOG 32
#define LEGIT 16

static void tables(struct myrio_stack_conf *c)
{
	c->max_tcp_conns = 256;
	c->arp_entries = 64;
	c->delayed_ack_ms = 0;
}

/* A SYN from a spoofed address of the subnet (the victim must resolve it to answer, and
 * nobody answers) or from beyond it (no route). */
static void flood_frame(uint8_t *f, const uint8_t dst_mac[6], uint32_t n)
{
	uint32_t src = (n & 1) ? 0x0a000000u | (3 + n % 250) : 0xc0a80000u | (n & 0xffff);
	syn_frame(f, dst_mac, src, SP_IP_B, (uint16_t)(1024 + n % 60000), PORT, n * 2654435761u,
		  (uint16_t)n);
}

static unsigned half_open(struct myrio_stack *s)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < s->nconns; i++)
		n += s->conns[i].in_use && s->conns[i].state == MYRIO_TCP_SYN_RCVD;
	return n;
}

/* legit: start legitimate clients during the flood and require them to succeed. */
static void syn_flood(bool legit)
{
	struct stack_pair m;
	assert_int_equal(sp_open(&m, "sim:link=10g",
				 &(struct sp_opts){.streams = 2 * LEGIT + 8, .tweak = tables}),
			 0);
	assert_int_equal(sp_static_arp(&m), 0);
	struct myrio_port_info ib;
	assert_int_equal(myrio_port_info(m.pb, &ib), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(m.b, PORT, BACKLOG, NULL, &l), 0);
	struct myrio_pool *fp;
	assert_int_equal(myrio_port_pool_create(m.pa, 512, 2048, &fp), 0);
	for (int i = 0; i < 100; i++)
		sp_round(&m);
	size_t heap0 = heap_used();

	uint32_t n = 0;
	unsigned max_half_open = 0;
	bool legit_started = false;
	/* 2 s of model time; 16 SYNs per 20 us round = 800,000 SYNs/s */
	for (unsigned r = 0; r < 100000; r++) {
		struct myrio_pkt *p[16];
		unsigned k = myrio_pkt_alloc_bulk(fp, p, 16) ? 16 : 0;
		for (unsigned i = 0; i < k; i++) {
			flood_frame(myrio_pkt_data(p[i]), ib.mac, n++);
			p[i]->len = 60;
		}
		uint16_t took = myrio_tx_burst(m.pa, p, (uint16_t)k);
		myrio_pkt_free_bulk(p + took, k - took);
		sp_round(&m);
		unsigned h = half_open(m.b);
		if (h > max_half_open)
			max_half_open = h;
		if (legit && r == 20000 && !legit_started) { /* the flood is in full swing */
			legit_started = true;
			for (unsigned i = 0; i < LEGIT; i++) {
				struct myrio_tcp_conn *c;
				assert_int_equal(myrio_tcp_connect(m.a, SP_IP_B, PORT, NULL, &c),
						 0);
				sp_stream_new(&m, c)->to_send = 64 * 1024;
			}
		}
	}
	size_t heap1 = heap_used();
	struct myrio_stack_stats sb;
	myrio_stack_stats(m.b, &sb);
	printf("  %u spoofed SYNs; victim: %lu dropped at the backlog, %lu table full, "
	       "at most %u half-open (backlog %u), heap %+ld bytes\n",
	       n, (unsigned long)sb.drop_tcp_syn_backlog, (unsigned long)sb.drop_tcp_table_full,
	       max_half_open, BACKLOG, (long)(heap1 - heap0));
	printf("  legitimate: %lu of %u connected, %lu errors\n", (unsigned long)m.connected,
	       LEGIT, (unsigned long)m.errors);
	assert_true(n > 1000000);
	assert_true(max_half_open <= BACKLOG);
	assert_true(sb.drop_tcp_syn_backlog > 0);
	assert_true(heap1 <= heap0); /* nothing allocated on the data path */
	if (!legit) {
		for (int i = 0; i < 200; i++)
			sp_round(&m);
		assert_int_equal(myrio_pool_free_count(fp), 512); /* the NIC sent them all */
		myrio_pool_destroy(fp);
		sp_close(&m);
		return;
	}

	/* the flood stops; every legitimate connection must be up and deliver its data */
	for (unsigned r = 0; r < 500000; r++) {
		unsigned done = 0;
		for (unsigned i = 0; i < m.nstreams; i++)
			done += m.streams[i].to_send == 0 && m.streams[i].rcvd == 64 * 1024;
		if (done == LEGIT)
			break;
		sp_round(&m);
	}
	unsigned done = 0;
	for (unsigned i = 0; i < m.nstreams; i++) {
		assert_int_equal(m.streams[i].bad, 0);
		done += m.streams[i].to_send == 0 && m.streams[i].rcvd == 64 * 1024;
	}
	assert_int_equal(m.errors, 0);
	assert_int_equal(m.connected, LEGIT);
	assert_int_equal(done, LEGIT);
	struct myrio_stack_stats sb2;
	myrio_stack_stats(m.b, &sb2);
	printf("  SYN cookies: %lu sent, %lu returned valid, %lu invalid\n",
	       (unsigned long)sb2.tcp_syncookies_sent, (unsigned long)sb2.tcp_syncookies_ok,
	       (unsigned long)sb2.tcp_syncookies_failed);
	assert_true(sb2.tcp_syncookies_ok > 0); /* got in during the flood, through cookies */
	for (int i = 0; i < 200; i++) /* the last flood frames may still be in the send ring */
		sp_round(&m);
	assert_int_equal(myrio_pool_free_count(fp), 512);
	myrio_pool_destroy(fp); /* before the port: it is mapped on the port's bus */
	sp_close(&m);
}

static void syn_flood_memory_and_backlog_bounded(void **state)
{
	(void)state;
	syn_flood(false);
}

/* Once the backlog is full, SYNs are answered with SYN cookies: legitimate clients get in
 * during the flood without any half-open entry (docs/reliability.md, bug 3). */
static void syn_flood_legit_connections_succeed(void **state)
{
	(void)state;
	syn_flood(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syn_flood_memory_and_backlog_bounded),
		cmocka_unit_test(syn_flood_legit_connections_succeed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
