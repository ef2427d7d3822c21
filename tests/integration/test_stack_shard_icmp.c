/* SPDX-License-Identifier: BSD-3-Clause */
/* tcp_lite, one stack per queue: an ICMP error about a connection lands on the queue its
 * addresses hash to (the NIC looks no deeper than IPv4 for ICMP), which need not be the
 * connection's. Its stack passes it to the connection's stack, so "fragmentation needed"
 * still lowers that connection's MSS; a bogus quote is still ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ipv4_frame.h"
#include "myrio/myrio.h"
#include "tcp_lite/stack.h"

#define NQ 2
#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define SRV_PORT 5001

struct env {
	struct myrio_sim *w;
	struct myrio_port *pa, *pb;
	struct myrio_stack *a[NQ], *b;
	struct myrio_tcp_conn *c;
	struct myrio_pool *raw; /* B's frames built by hand */
};

static void poll_all(struct env *e, unsigned ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (unsigned q = 0; q < NQ; q++)
			myrio_stack_poll(e->a[q]);
		myrio_stack_poll(e->b);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Polls until queue 1 counts n ICMP messages since before (5 s at most: a loaded machine
 * may take long to deliver), then once more, so queue 0 takes what queue 1 passed it. */
static void poll_until_icmp(struct env *e, const struct myrio_stack_stats *before, unsigned n)
{
	struct myrio_stack_stats st;
	for (unsigned waited = 0; waited < 5000; waited += 10) {
		myrio_stack_stats(e->a[1], &st);
		if (st.icmp_rx - before->icmp_rx >= n)
			break;
		poll_all(e, 10);
	}
	poll_all(e, 10);
}

static void env_up(struct env *e)
{
	memset(e, 0, sizeof(*e));
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	assert_int_equal(myrio_sim_conf_parse(&sc, "eeprom_fw=rss"), 0);
	assert_int_equal(myrio_sim_create(&e->w, &sc), 0);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = e->w;
	assert_int_equal(myrio_port_open_queues(&e->pa, "sim:sim0", &pc, NQ), 0);
	assert_int_equal(myrio_port_open(&e->pb, "sim:sim1", &pc), 0);
	struct myrio_stack_conf cf;
	myrio_stack_conf_init(&cf);
	cf.ip = IP_A;
	for (uint16_t q = 0; q < NQ; q++)
		assert_int_equal(
		    myrio_stack_create_queue(&e->a[q], e->pa, q, &cf, q ? e->a[0] : NULL), 0);
	cf.ip = IP_B;
	assert_int_equal(myrio_stack_create(&e->b, e->pb, &cf), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(e->b, SRV_PORT, 4, NULL, &l), 0);
	assert_int_equal(myrio_port_pool_create(e->pb, 16, 2048, &e->raw), 0);
}

static void env_down(struct env *e)
{
	myrio_port_tx_drain(e->pb, e->raw, 1000);
	myrio_pool_destroy(e->raw);
	for (unsigned q = NQ; q-- > 0;)
		myrio_stack_destroy(e->a[q]);
	myrio_stack_destroy(e->b);
	myrio_port_close(e->pa);
	myrio_port_close(e->pb);
	myrio_sim_destroy(e->w);
}

/* A router's address whose ICMP messages to A the NIC puts on queue q. */
static uint32_t router_on(struct env *e, int q)
{
	for (uint32_t r = 0x0a000064u;; r++)
		if (myrio_port_rss_flow_queue(e->pa, 1, htonl(r), htonl(IP_A), 0, 0, NULL) == q)
			return r;
}

/* From router to A: "fragmentation needed, next hop MTU mtu", quoting our segment with
 * sequence number seq. */
static void send_frag_needed(struct env *e, uint32_t router, uint16_t lport, uint32_t seq,
			     uint16_t mtu)
{
	struct myrio_port_info ia, ib;
	myrio_port_info(e->pa, &ia);
	myrio_port_info(e->pb, &ib);
	struct myrio_pkt *p = myrio_pkt_alloc(e->raw);
	assert_non_null(p);
	uint8_t *f = myrio_pkt_data(p), quote[34];
	ipv4_frame(quote, ib.mac, ia.mac, 6, 1500, IP_A, IP_B, 7); /* our segment's headers */
	quote[14 + 6] = 0x40;					   /* DF */
	uint8_t *m = ipv4_frame(f, ia.mac, ib.mac, 1, 20 + 8 + 28, router, IP_A, 1);
	memset(m, 0, 36);
	m[0] = 3; /* destination unreachable */
	m[1] = 4; /* fragmentation needed */
	put_be16(m + 6, mtu);
	memcpy(m + 8, quote + 14, 20);
	put_be16(m + 28, lport);
	put_be16(m + 30, SRV_PORT);
	put_be32(m + 32, seq);
	put_be16(m + 2, csum_finish(csum_add(0, m, 36)));
	p->len = 14 + 20 + 36;
	assert_int_equal(myrio_tx_burst(e->pb, &p, 1), 1);
}

static void frag_needed_reaches_the_connections_stack(void **state)
{
	(void)state;
	struct env e;
	env_up(&e);
	assert_int_equal(myrio_tcp_connect(e.a[0], IP_B, SRV_PORT, NULL, &e.c), 0);
	for (int i = 0; i < 100 && myrio_tcp_state(e.c) != MYRIO_TCP_ESTABLISHED; i++)
		poll_all(&e, 10);
	assert_int_equal(myrio_tcp_state(e.c), MYRIO_TCP_ESTABLISHED);
	uint32_t lip, rip;
	uint16_t lport, rport;
	myrio_tcp_addr(e.c, &lip, &lport, &rip, &rport);
	assert_int_equal(myrio_port_rss_flow_queue(e.pa, 6, htonl(rip), htonl(lip), htons(rport),
						   htons(lport), NULL),
			 0);
	uint32_t mss = myrio_tcp_mss(e.c);
	assert_true(mss > 1000);
	struct myrio_stack_stats before;
	myrio_stack_stats(e.a[1], &before);

	/* a quote with a sequence number far from ours: passed across, and still ignored */
	send_frag_needed(&e, router_on(&e, 1), lport, e.c->snd_una + 0x40000000u, 800);
	poll_until_icmp(&e, &before, 1);
	assert_int_equal(myrio_tcp_mss(e.c), mss);

	send_frag_needed(&e, router_on(&e, 1), lport, e.c->snd_una, 800);
	poll_until_icmp(&e, &before, 2);
	struct myrio_stack_stats s0, s1;
	myrio_stack_stats(e.a[0], &s0);
	myrio_stack_stats(e.a[1], &s1);
	printf("# queue 1 received %llu ICMP messages; the connection's MSS %u -> %u\n",
	       (unsigned long long)(s1.icmp_rx - before.icmp_rx), mss, myrio_tcp_mss(e.c));
	assert_int_equal(s1.icmp_rx - before.icmp_rx, 2);    /* both landed on queue 1 */
	assert_int_equal(myrio_tcp_mss(e.c), 800 - 40 - 12); /* IP, TCP, timestamps */
	assert_int_equal(s0.tcp_pmtu_lowered, 1);
	assert_int_equal(s0.icmp_errors_ignored, 1);
	myrio_tcp_abort(e.c);
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(frag_needed_reaches_the_connections_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
