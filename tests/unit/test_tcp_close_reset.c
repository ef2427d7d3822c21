/* SPDX-License-Identifier: BSD-3-Clause */
/* Closes that lose data end with a RST, as Linux's: a close with received data unread
 * (RFC 2525 §2.17, tcp_close), data arriving after the application closed or stopped
 * reading, and data beyond the peer's own FIN (RFC 1122 §4.2.2.13, tcp_rcv_state_process);
 * what is old or merely half-closed is still only acknowledged. And an abort (SO_LINGER 0)
 * is a RST at once. A crafted peer checks every answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

/* The only TCP segment the stack sent in the last poll. */
static struct tcpv only_seg(struct raw *r)
{
	struct tcpv v;
	assert_int_equal(cap_count_tcp(r), 1);
	assert_true(cap_tcp(r, 0, &v));
	return v;
}

/* A segment of the peer at seq (its ACK and window as usual), data NULL or a string; the
 * stack's answer captured. */
static void peer_seg_at(struct raw *r, const struct peer *p, uint32_t seq, uint8_t flags,
			const char *data)
{
	uint8_t o[40];
	struct tcpf t = {.sport = p->sport,
			 .dport = p->dport,
			 .seq = seq,
			 .ack = p->rcv_nxt,
			 .flags = flags,
			 .win = p->win,
			 .data = (const uint8_t *)data,
			 .len = (uint16_t)(data ? strlen(data) : 0)};
	t.optlen = (uint8_t)peer_opts(p, o);
	t.opts = o;
	raw_send_tcp_poll(r, &t);
}

/* The connection is gone: the next segment of the peer finds none (and gets a RST). */
static void assert_gone(struct raw *r, struct peer *p)
{
	uint64_t before = raw_stats(r).drop_tcp_no_conn;
	peer_send_poll(r, p, F_ACK | F_PSH, "more", 4);
	assert_int_equal(raw_stats(r).drop_tcp_no_conn, before + 1);
	assert_true(only_seg(r).flags & F_RST);
}

static void close_with_unread_data_resets_and_is_counted(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr1", NULL, &p, 42001, 100), 0);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "unread", 6);
	myrio_tcp_close(p.c);
	raw_poll(&r);
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_RST | F_ACK); /* not a FIN */
	assert_int_equal(v.seq, p.rcv_nxt);	  /* exactly where the peer expects us */
	assert_int_equal(v.ack, p.snd_nxt);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_abort_on_close, 1);
	assert_int_equal(st.tcp_abort_on_data, 0);
	assert_gone(&r, &p);

	/* Read in part: what is left still resets. */
	struct peer q;
	peer_connect(&r, &q, 42002, 80, 500, true);
	assert_non_null(q.c);
	peer_send_poll(&r, &q, F_ACK | F_PSH, "0123456789", 10);
	char buf[16];
	assert_int_equal(myrio_tcp_read(q.c, buf, 4), 4);
	myrio_tcp_close(q.c);
	raw_poll(&r);
	assert_int_equal(only_seg(&r).flags, F_RST | F_ACK);
	assert_int_equal(raw_stats(&r).tcp_abort_on_close, 2);

	/* Everything read: an orderly FIN, nothing counted. */
	struct peer f;
	peer_connect(&r, &f, 42003, 80, 900, true);
	assert_non_null(f.c);
	peer_send_poll(&r, &f, F_ACK | F_PSH, "all", 3);
	assert_int_equal(myrio_tcp_read(f.c, buf, sizeof(buf)), 3);
	myrio_tcp_close(f.c);
	raw_poll(&r);
	assert_int_equal(only_seg(&r).flags, F_FIN | F_ACK);
	assert_int_equal(raw_stats(&r).tcp_abort_on_close, 2);
	raw_close(&r);
}

static void data_after_close_is_answered_with_rst(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr2", NULL, &p, 42004, 100), 0);
	myrio_tcp_close(p.c); /* nothing unread: a FIN */
	raw_poll(&r);
	assert_true(only_seg(&r).flags & F_FIN);
	/* FIN_WAIT_1: the peer has not seen the FIN yet and sends data nobody will read. */
	peer_send_poll(&r, &p, F_ACK | F_PSH, "late", 4);
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(v.seq, p.rcv_nxt); /* the peer's ACK field (RFC 9293 §3.10.7) */
	assert_int_equal(raw_stats(&r).tcp_abort_on_data, 1);
	assert_gone(&r, &p);
	raw_close(&r);
}

/* Our FIN acknowledged (FIN_WAIT_2): a retransmission of what we had is acknowledged, new
 * data resets; so does a FIN out of order (data before it missing), as in Linux. */
static void after_close_old_data_is_acked_new_data_and_early_fin_reset(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr3", NULL, &p, 42005, 100), 0);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "abcd", 4);
	char buf[8];
	assert_int_equal(myrio_tcp_read(p.c, buf, sizeof(buf)), 4);
	myrio_tcp_close(p.c);
	raw_poll(&r);
	assert_true(only_seg(&r).flags & F_FIN);
	p.rcv_nxt++; /* the peer acknowledges the FIN */
	peer_ack(&r, &p);
	peer_seg_at(&r, &p, p.snd_nxt - 4, F_ACK | F_PSH, "abcd"); /* old */
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_ACK);
	assert_int_equal(v.ack, p.snd_nxt);
	assert_int_equal(raw_stats(&r).tcp_abort_on_data, 0);
	/* A bare FIN 10 bytes ahead: what comes before it would be read by nobody. */
	peer_seg_at(&r, &p, p.snd_nxt + 10, F_ACK | F_FIN, NULL);
	v = only_seg(&r);
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(v.seq, p.rcv_nxt);
	assert_int_equal(raw_stats(&r).tcp_abort_on_data, 1);
	assert_gone(&r, &p);
	raw_close(&r);
}

/* The peer sent its FIN (CLOSE_WAIT), then data: its stream had ended, so the data is
 * answered with a RST and the connection ends with -EPIPE, as Linux's tcp_reset there. A
 * retransmission of the FIN is only acknowledged. */
static void data_beyond_the_peers_fin_resets(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr4", NULL, &p, 42006, 100), 0);
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSE_WAIT);
	p.snd_nxt--;
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0); /* the FIN again */
	assert_int_equal(only_seg(&r).flags, F_ACK);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSE_WAIT);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "after the end", 13);
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(v.seq, p.rcv_nxt);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(p.c), -EPIPE);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 1);
	assert_int_equal(raw_stats(&r).tcp_abort_on_data, 1);
	myrio_tcp_close(p.c);
	assert_gone(&r, &p);
	raw_close(&r);
}

/* LAST_ACK (the peer's FIN, then our close): data beyond the peer's FIN resets too. */
static void data_in_last_ack_resets(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr5", NULL, &p, 42007, 100), 0);
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	myrio_tcp_close(p.c);
	raw_poll(&r);
	assert_true(only_seg(&r).flags & F_FIN);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "late", 4); /* our FIN not acknowledged */
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(v.seq, p.rcv_nxt);
	assert_int_equal(raw_stats(&r).tcp_abort_on_data, 1);
	assert_gone(&r, &p);
	raw_close(&r);
}

/* A handle kept open after shutdown and myrio_tcp_shutdown_read (the preload's close while
 * the peer still acknowledges): new data resets and ends it with -ECONNRESET. A half-close
 * alone (myrio_tcp_shutdown) keeps receiving. */
static void shutdown_read_resets_on_new_data(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr6", NULL, &p, 42008, 100), 0);
	assert_int_equal(myrio_tcp_shutdown(p.c), 0);
	raw_poll(&r);
	p.rcv_nxt++;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_FIN_WAIT_2);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "half", 4);
	assert_int_equal(only_seg(&r).flags, F_ACK);
	char buf[8];
	assert_int_equal(myrio_tcp_read(p.c, buf, sizeof(buf)), 4);

	myrio_tcp_shutdown_read(p.c);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "late", 4);
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(v.seq, p.rcv_nxt);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(p.c), -ECONNRESET);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 1);
	assert_int_equal(raw_stats(&r).tcp_abort_on_data, 1);
	myrio_tcp_close(p.c);
	raw_close(&r);
}

/* SO_LINGER 0: myrio_tcp_abort resets at once, past what was sent, and is not counted as
 * a close that lost data. */
static void abort_resets_at_once(void **state)
{
	struct raw r;
	struct peer p;
	assert_int_equal(raw_connected(&r, "cr7", NULL, &p, 42009, 100), 0);
	assert_int_equal(myrio_tcp_write(p.c, "unacknowledged", 14), 14);
	raw_poll(&r);
	assert_int_equal(only_seg(&r).len, 14);
	myrio_tcp_abort(p.c);
	raw_poll(&r);
	struct tcpv v = only_seg(&r);
	assert_int_equal(v.flags, F_RST | F_ACK);
	assert_int_equal(v.seq, p.rcv_nxt + 14);
	assert_int_equal(raw_stats(&r).tcp_abort_on_close, 0);
	assert_gone(&r, &p);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(close_with_unread_data_resets_and_is_counted),
	    cmocka_unit_test(data_after_close_is_answered_with_rst),
	    cmocka_unit_test(after_close_old_data_is_acked_new_data_and_early_fin_reset),
	    cmocka_unit_test(data_beyond_the_peers_fin_resets),
	    cmocka_unit_test(data_in_last_ack_resets),
	    cmocka_unit_test(shutdown_read_resets_on_new_data),
	    cmocka_unit_test(abort_resets_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
