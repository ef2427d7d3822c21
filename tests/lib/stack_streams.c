/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stack harness's checked-pattern streams (stack_pair.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "stack_pair.h"
#include "test_pattern.h"

struct sp_stream *sp_stream_new(struct stack_pair *sp, struct myrio_tcp_conn *c)
{
	if (sp->nstreams == sp->max_streams)
		return NULL;
	struct sp_stream *s = &sp->streams[sp->nstreams++];
	memset(s, 0, sizeof(*s));
	s->c = c;
	if (c)
		myrio_tcp_set_user(c, (void *)(uintptr_t)sp->nstreams);
	return s;
}

void sp_stream_read(struct sp_stream *s)
{
	struct myrio_pkt *p;
	while ((p = myrio_tcp_recv(s->c)) != NULL) {
		size_t bad = test_pattern_check(myrio_pkt_data(p), p->len, s->rcvd, NULL);
		if (bad) /* say where, for the diagnosis */
			fprintf(
			    stderr,
			    "sp_stream_read: %zu of %u bytes wrong in a segment at stream offset "
			    "%llu\n",
			    bad, p->len, (unsigned long long)s->rcvd);
		s->bad += bad;
		s->rcvd += p->len;
		myrio_tcp_release(s->c, p);
	}
	if (myrio_tcp_eof(s->c))
		s->eof = true;
}

void sp_stream_write_chunks(struct sp_stream *s, size_t chunk)
{
	static uint8_t buf[65536];
	if (chunk > sizeof(buf))
		chunk = sizeof(buf);
	while (s->sent < s->to_send) {
		uint64_t left = s->to_send - s->sent;
		size_t n = left < chunk ? (size_t)left : chunk;
		test_pattern_fill(buf, n, s->sent);
		ssize_t w = myrio_tcp_write(s->c, buf, n);
		if (w <= 0)
			break;
		s->sent += (uint64_t)w;
	}
}

void sp_stream_write(struct sp_stream *s)
{
	sp_stream_write_chunks(s, 8192);
}

struct sp_stream *sp_transfer(struct stack_pair *sp, uint16_t port, uint64_t bytes)
{
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(sp->b, port, 16, NULL, &l), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(sp->a, SP_IP_B, port, NULL, &c), 0);
	struct sp_stream *s = sp_stream_new(sp, c);
	assert_non_null(s);
	s->to_send = bytes;
	sp->want = bytes;
	return s;
}

struct sp_stream *sp_receiver(struct stack_pair *sp)
{
	return sp->nstreams >= 2 ? &sp->streams[1] : NULL;
}

bool sp_quarter_received(struct stack_pair *sp)
{
	struct sp_stream *r = sp_receiver(sp);
	return (r && r->rcvd >= sp->want / 4) || sp->errors;
}

bool sp_all_received(struct stack_pair *sp)
{
	struct sp_stream *r = sp_receiver(sp);
	return (r && r->rcvd >= sp->want) || sp->errors || sp->streams[0].error;
}

void sp_check_intact(struct stack_pair *sp, const struct sp_stream *tx)
{
	struct sp_stream *rx = sp_receiver(sp);
	assert_non_null(rx);
	assert_int_equal(sp->errors, 0);
	assert_int_equal(tx->sent, sp->want);
	assert_int_equal(rx->rcvd, sp->want); /* nothing lost, nothing duplicated */
	assert_int_equal(rx->bad, 0);	      /* in order, uncorrupted */
}
