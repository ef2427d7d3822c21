/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP_SENDFILE at the TCP_STREAM rate, in the stepped model's time: the sender fills its
 * packet buffers from a file with one preadv(2) per burst, as myrio-perf's TCP_SENDFILE
 * does, so at every end of the file one segment is shorter than the MSS. The same number
 * of bytes sent in full-MSS segments (TCP_STREAM) must take no more than 1% less model
 * time, with TSO at MTU 1500 and 9000, and without TSO as the reference. The stacks are
 * sized as myrio-perf sizes them: the send queue full, the flight a whole queue long. The
 * receiver checks every byte against the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_pair.h"

#define BURST 32
#define FILE_LEN (1u << 20) /* not a multiple of any MSS here: a short segment per MiB */
#define TOTAL (64u << 20)

static uint8_t file_bytes[FILE_LEN];
static int file_fd = -1;

static struct {
	uint32_t mtu;
	bool tso;
	struct myrio_tcp_conn *accepted; /* B's end: read here, not by the pair's events */
	uint64_t errors;
	uint32_t in_flight;
} cur;

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	(void)arg;
	if (ev == MYRIO_TCP_EV_ACCEPTED)
		cur.accepted = c;
	else if (ev == MYRIO_TCP_EV_ERROR)
		cur.errors++;
}

/* As myrio-perf sizes its stacks: no more segments queued than the send ring holds. */
static void conf_tweak(struct myrio_stack_conf *c)
{
	c->tso = cur.tso;
	c->rcv_buf = 4u << 20;
	c->snd_queue_segs = cur.in_flight;
	c->tx_pool_size = cur.in_flight + 1024;
	c->tcp_event = on_tcp;
}

struct sender {
	struct myrio_stack *s;
	struct myrio_tcp_conn *c;
	bool from_file;
	uint64_t sent;
};

/* One burst of segments at offset sent % FILE_LEN: read from the file (a short one where
 * the file ends) or copied in full MSS pieces that wrap around. */
static void send_burst(struct sender *x)
{
	uint32_t mss = myrio_tcp_mss(x->c), room = myrio_tcp_send_space(x->c);
	struct myrio_pkt *p[BURST];
	struct iovec iov[BURST];
	unsigned got = 0;
	uint64_t planned = x->sent;
	for (; got < BURST && got < room && planned < TOTAL; got++) {
		if (!(p[got] = myrio_stack_pkt_alloc(x->s)))
			break;
		uint8_t *d = myrio_pkt_data(p[got]);
		uint64_t off = planned % FILE_LEN, left = TOTAL - planned;
		uint32_t n = left < mss ? (uint32_t)left : mss;
		if (x->from_file) {
			if (n > FILE_LEN - off)
				n = (uint32_t)(FILE_LEN - off);
			iov[got] = (struct iovec){d, n};
		} else {
			for (uint32_t i = 0; i < n; i++)
				d[i] = file_bytes[(off + i) % FILE_LEN];
		}
		p[got]->len = n;
		planned += n;
		if (x->from_file && planned % FILE_LEN == 0) {
			got++;
			break; /* one read per burst, as far as the file goes */
		}
	}
	if (x->from_file && got) {
		ssize_t want = 0;
		for (unsigned i = 0; i < got; i++)
			want += (ssize_t)iov[i].iov_len;
		assert_int_equal(preadv(file_fd, iov, (int)got, (off_t)(x->sent % FILE_LEN)), want);
	}
	unsigned i = 0;
	for (; i < got; i++) {
		uint32_t len = p[i]->len;
		if (myrio_tcp_send(x->c, p[i]) < 0)
			break;
		x->sent += len;
	}
	for (; i < got; i++) /* refused: the same bytes go in the next burst */
		myrio_pkt_free(p[i]);
}

/* Connects A -> B and moves TOTAL bytes; returns the model time from the first byte sent
 * to the last byte read, in ns. */
static uint64_t transfer(uint32_t mtu, bool tso, bool from_file)
{
	cur.mtu = mtu;
	cur.tso = tso;
	cur.accepted = NULL;
	cur.errors = 0;
	struct stack_pair m;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.mtu = mtu;
	/* one descriptor per tx_boundary a frame touches, and one more (§5.4) */
	cur.in_flight = 1024 / ((mtu + 18 + 2047) / 2048 + 1);
	assert_int_equal(
	    sp_open(&m,
		    "sim:", &(struct sp_opts){.streams = 2, .tweak = conf_tweak, .port_conf = &pc}),
	    0);
	struct myrio_port_info info;
	assert_int_equal(myrio_port_info(m.pa, &info), 0);
	uint32_t descs = (info.max_frame + info.tx_boundary - 1) / info.tx_boundary + 1;
	assert_int_equal(cur.in_flight, info.tx_ring_entries / descs); /* the guess was right */
	assert_int_equal(sp_static_arp(&m), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(m.b, 5001, 4, NULL, &l), 0);
	struct sender x = {.s = m.a, .from_file = from_file};
	assert_int_equal(myrio_tcp_connect(m.a, SP_IP_B, 5001, NULL, &x.c), 0);
	uint64_t rcvd = 0, bad = 0, t0 = 0;
	for (uint64_t round = 0; round < 10000000 && rcvd < TOTAL; round++) {
		sp_round(&m);
		if (myrio_tcp_state(x.c) == MYRIO_TCP_ESTABLISHED && x.sent < TOTAL) {
			if (!t0)
				t0 = myrio_sim_now_ns(m.sim);
			send_burst(&x);
		}
		struct myrio_pkt *p;
		while (cur.accepted && (p = myrio_tcp_recv(cur.accepted)) != NULL) {
			const uint8_t *d = myrio_pkt_data(p);
			for (uint32_t i = 0; i < p->len; i++)
				bad += d[i] != file_bytes[(rcvd + i) % FILE_LEN];
			rcvd += p->len;
			myrio_tcp_release(cur.accepted, p);
		}
	}
	uint64_t ns = myrio_sim_now_ns(m.sim) - t0;
	struct myrio_stack_stats sa;
	myrio_stack_stats(m.a, &sa);
	printf("# MTU %u, TSO %s, %s: %u MiB in %.3f ms of model time (%.3f Gb/s), %llu "
	       "segments in %llu TSO requests, %llu retransmits\n",
	       mtu, tso ? "on" : "off", from_file ? "TCP_SENDFILE" : "TCP_STREAM", TOTAL >> 20,
	       (double)ns / 1e6, (double)rcvd * 8 / (double)ns, (unsigned long long)sa.tcp_segs_out,
	       (unsigned long long)sa.tcp_tso_requests, (unsigned long long)sa.tcp_retransmits);
	assert_int_equal(cur.errors, 0);
	assert_int_equal(rcvd, TOTAL);
	assert_int_equal(bad, 0);
	if (tso)
		assert_true(sa.tcp_tso_requests > 0);
	myrio_tcp_abort(x.c);
	myrio_tcp_abort(cur.accepted);
	myrio_tcp_listener_close(l);
	sp_close(&m);
	return ns;
}

static void same_rate(uint32_t mtu, bool tso)
{
	uint64_t stream = transfer(mtu, tso, false), sendfile = transfer(mtu, tso, true);
	printf("# TCP_SENDFILE / TCP_STREAM model time: %.4f\n", (double)sendfile / (double)stream);
	assert_true(sendfile * 100 <= stream * 101);
}

static void tso_9000(void **state)
{
	(void)state;
	same_rate(9000, true);
}

static void tso_1500(void **state)
{
	(void)state;
	same_rate(1500, true);
}

static void no_tso_9000(void **state)
{
	(void)state;
	same_rate(9000, false);
}

/* The file: random bytes, as myrio-perf writes by default. */
static int make_file(void **state)
{
	(void)state;
	uint64_t v = 0x9E3779B97F4A7C15ull;
	for (uint32_t i = 0; i < FILE_LEN; i++) {
		v ^= v << 13, v ^= v >> 7, v ^= v << 17;
		file_bytes[i] = (uint8_t)v;
	}
	FILE *f = tmpfile();
	if (!f || fwrite(file_bytes, 1, FILE_LEN, f) != FILE_LEN || fflush(f))
		return -1;
	file_fd = dup(fileno(f));
	fclose(f);
	return file_fd < 0 ? -1 : 0;
}

static int close_file(void **state)
{
	(void)state;
	close(file_fd);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(tso_9000),
	    cmocka_unit_test(tso_1500),
	    cmocka_unit_test(no_tso_9000),
	};
	return cmocka_run_group_tests(tests, make_file, close_file);
}
