/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP segmentation offload end to end: two tcp_lite stacks on two NICs of the stepped
 * device model, the sender handing the NIC TSO requests (§5.6) that the model checks and
 * cuts into segments. 64 MiB (MYRIO_TEST_BYTES) move byte-exact at MTU 1500 and 9000, clean
 * and with loss, reordering and duplication on the cable; the counters prove that TSO
 * requests were used, that the NIC refused none of them and that they held several
 * segments each. The same transfer without TSO checks the switch. MYRIO_TEST_FILTER runs
 * one case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/model.h"
#include "sim/nic.h"
#include "stack_pair.h"
#include "test_env.h"

static bool tso_off;

static void conf_tweak(struct myrio_stack_conf *c)
{
	c->tso = !tso_off;
	c->snd_queue_segs = 256;
	c->rcv_buf = 1u << 20;
}

struct run {
	const char *what, *link;
	uint32_t mtu;
	bool tso;
	uint64_t bytes;
	/* results */
	struct myrio_stack_stats sa, sb;
	struct sim_nic_stats na, nb;
	struct myrio_port_stats pa;
};

static bool all_read(struct stack_pair *m)
{
	return m->nstreams == 1 && m->streams[0].eof;
}

/* Connect A -> B, write run->bytes of the pattern from A, read and check them at B. */
static void transfer(struct run *r)
{
	struct stack_pair m;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.mtu = r->mtu;
	tso_off = !r->tso;
	assert_int_equal(
	    sp_open(&m, r->link,
		    &(struct sp_opts){.streams = 2, .tweak = conf_tweak, .port_conf = &pc}),
	    0);
	assert_int_equal(sp_static_arp(&m), 0);
	struct myrio_port_info info;
	assert_int_equal(myrio_port_info(m.pa, &info), 0);
	assert_true(info.caps & MYRIO_CAP_TSO); /* the driver offers it on the model */
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(m.b, 5001, 4, NULL, &l), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(m.a, SP_IP_B, 5001, NULL, &c), 0);
	/* the sender's stream is not the model pair's: its events do not write */
	struct sp_stream cli = {.c = c, .to_send = r->bytes}, *s = &cli;
	bool shut = false;
	for (uint64_t round = 0; round < 50000000 && !all_read(&m); round++) {
		sp_round(&m);
		if (myrio_tcp_state(c) == MYRIO_TCP_ESTABLISHED) {
			sp_stream_write_chunks(s, 65536); /* full-MSS segments at MTU 9000 too */
			if (!shut && s->sent == s->to_send) {
				assert_int_equal(myrio_tcp_shutdown(c), 0);
				shut = true;
			}
		}
		if (m.nstreams == 1 && m.streams[0].c)
			sp_stream_read(&m.streams[0]);
	}
	assert_int_equal(m.errors, 0);
	assert_int_equal(m.nstreams, 1);
	struct sp_stream *rx = &m.streams[0];
	assert_true(rx->eof);
	assert_int_equal(rx->bad, 0);
	assert_int_equal(rx->rcvd, r->bytes);
	for (int i = 0; i < 10000 && myrio_tcp_unacked(c) != 0; i++)
		sp_round(&m); /* the ACK of the FIN on its way back */
	assert_int_equal(myrio_tcp_unacked(c), 0);
	myrio_stack_stats(m.a, &r->sa);
	myrio_stack_stats(m.b, &r->sb);
	sim_nic_get_stats(sim_world_nic(m.sim, 0), &r->na);
	sim_nic_get_stats(sim_world_nic(m.sim, 1), &r->nb);
	assert_int_equal(myrio_port_stats(m.pa, &r->pa), 0);
	printf("# %s, MTU %u, TSO %s: %llu bytes in %.3f ms of model time; A: %llu segments out in "
	       "%llu TSO requests "
	       "(%llu segments), %llu retransmits; NIC: %llu frames, %llu cut from TSO, %llu "
	       "chains refused\n",
	       r->what, r->mtu, r->tso ? "on" : "off", (unsigned long long)r->bytes,
	       (double)myrio_sim_now_ns(m.sim) / 1e6, (unsigned long long)r->sa.tcp_segs_out,
	       (unsigned long long)r->sa.tcp_tso_requests, (unsigned long long)r->sa.tcp_tso_segs,
	       (unsigned long long)r->sa.tcp_retransmits, (unsigned long long)r->na.tx_frames,
	       (unsigned long long)r->na.tx_tso_segments, (unsigned long long)r->na.tx_invalid);
	/* whatever the cable did, the NICs took every chain the drivers wrote */
	assert_int_equal(r->na.tx_invalid, 0);
	assert_int_equal(r->nb.tx_invalid, 0);
	assert_int_equal(r->pa.tx_dropped_bad, 0);
	/* and every segment they cut carried a right TCP checksum */
	assert_int_equal(r->sb.drop_tcp_csum, 0);
	myrio_tcp_close(c);
	myrio_tcp_listener_close(l);
	sp_close(&m);
}

/* TSO was used, its requests held several segments each, and the NIC cut them all. */
static void assert_tso_used(const struct run *r)
{
	assert_true(r->sa.tcp_tso_requests > 0);
	assert_true(r->sa.tcp_tso_segs >= 2 * r->sa.tcp_tso_requests);
	/* segments the NIC sent from TSO requests: at least those the stack put in them */
	assert_true(r->na.tx_tso_segments >= r->sa.tcp_tso_segs);
	/* and the wire saw one frame per segment the stack counted (plus ARP) */
	assert_true(r->na.tx_frames >= r->sa.tcp_segs_out);
}

static void clean(uint32_t mtu)
{
	struct run r = {.what = "clean",
			.link = "sim:",
			.mtu = mtu,
			.tso = true,
			.bytes = env_bytes("MYRIO_TEST_BYTES", 64u << 20)};
	transfer(&r);
	assert_tso_used(&r);
	assert_int_equal(r.sa.tcp_retransmits, 0);
	/* most of the data went in TSO requests */
	assert_true(r.sa.tcp_tso_segs * 2 > r.sa.tcp_segs_out);
}

static void clean_1500(void **state)
{
	(void)state;
	clean(1500);
}

static void clean_9000(void **state)
{
	(void)state;
	clean(9000);
}

static void lossy(uint32_t mtu)
{
	struct run r = {.what = "1% loss+reorder+dup",
			.link = "sim:loss=0.01,reorder=0.01,dup=0.01,seed=11",
			.mtu = mtu,
			.tso = !getenv("MYRIO_TEST_NO_TSO"), /* the same run without, to compare */
			.bytes = env_bytes("MYRIO_TEST_BYTES", 64u << 20)};
	transfer(&r);
	if (r.tso)
		assert_tso_used(&r);
	assert_true(r.sa.tcp_retransmits > 0); /* the cable did lose segments of requests */
	assert_true(r.sb.tcp_ooo_segs > 0);
}

static void lossy_1500(void **state)
{
	(void)state;
	lossy(1500);
}

static void lossy_9000(void **state)
{
	(void)state;
	lossy(9000);
}

/* conf.tso = false: the same transfer, one NIC request per segment. */
static void switched_off(void **state)
{
	(void)state;
	struct run r = {.what = "clean", .link = "sim:", .mtu = 1500, .tso = false,
			.bytes = env_bytes("MYRIO_TEST_BYTES", 8u << 20)};
	transfer(&r);
	assert_int_equal(r.sa.tcp_tso_requests, 0);
	assert_int_equal(r.na.tx_tso_segments, 0);
	assert_int_equal(r.sa.tcp_retransmits, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(clean_1500), cmocka_unit_test(clean_9000),
	    cmocka_unit_test(lossy_1500), cmocka_unit_test(lossy_9000),
	    cmocka_unit_test(switched_off),
	};
	/* one case only, e.g. for bench/tso_cost.sh */
	if (getenv("MYRIO_TEST_FILTER"))
		cmocka_set_test_filter(getenv("MYRIO_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
