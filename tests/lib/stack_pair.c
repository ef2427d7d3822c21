/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stack harness: the link, the stacks, their clock and the rounds (stack_pair.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_clock.h"
#include "stack_pair.h"

/* The stacks start at 1 s: a clock that starts at 0 hides wrap-around and "never" bugs. */
#define SP_EPOCH_NS 1000000000ull

struct sp_conn_ev *sp_ev(struct stack_pair *sp, struct myrio_tcp_conn *c)
{
	for (unsigned i = 0; i < sp->nev; i++)
		if (sp->ev[i].c == c)
			return &sp->ev[i];
	if (sp->nev == SP_MAX_EV)
		return NULL;
	memset(&sp->ev[sp->nev], 0, sizeof(sp->ev[0]));
	sp->ev[sp->nev].c = c;
	return &sp->ev[sp->nev++];
}

static void count_event(struct stack_pair *sp, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct sp_conn_ev *e = sp_ev(sp, c);
	int none = 0, *n = &none;
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED:
		sp->accepted++;
		n = e ? &e->accepted : n;
		break;
	case MYRIO_TCP_EV_CONNECTED:
		sp->connected++;
		n = e ? &e->connected : n;
		break;
	case MYRIO_TCP_EV_READABLE:
		n = e ? &e->readable : n;
		break;
	case MYRIO_TCP_EV_WRITABLE:
		n = e ? &e->writable : n;
		break;
	case MYRIO_TCP_EV_CLOSED:
		sp->closed++;
		n = e ? &e->closed : n;
		break;
	case MYRIO_TCP_EV_ERROR:
		sp->errors++;
		n = e ? &e->error : n;
		break;
	}
	(*n)++;
}

static struct sp_stream *stream_of(struct stack_pair *sp, struct myrio_tcp_conn *c)
{
	uintptr_t u = (uintptr_t)myrio_tcp_user(c);
	if (u == 0 || u > sp->nstreams)
		return NULL;
	return &sp->streams[u - 1];
}

/* With streams: accepted connections become streams, and the events move them along. */
static void drive_stream(struct stack_pair *sp, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct sp_stream *s = stream_of(sp, c);
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED:
		if (!(s = sp_stream_new(sp, c))) {
			myrio_tcp_abort(c);
			return;
		}
		s->connected = true;
		break;
	case MYRIO_TCP_EV_CONNECTED:
		if (s) {
			s->connected = true;
			sp_stream_write(s);
		}
		break;
	case MYRIO_TCP_EV_READABLE:
		if (s)
			sp_stream_read(s);
		break;
	case MYRIO_TCP_EV_WRITABLE:
		if (s)
			sp_stream_write(s);
		break;
	case MYRIO_TCP_EV_CLOSED:
	case MYRIO_TCP_EV_ERROR:
		if (s) {
			s->closed = ev == MYRIO_TCP_EV_CLOSED;
			s->error = ev == MYRIO_TCP_EV_ERROR;
			s->err = s->error ? myrio_tcp_error(c) : 0;
			s->c = NULL;
		}
		myrio_tcp_close(c);
		break;
	}
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct stack_pair *sp = arg;
	count_event(sp, c, ev);
	if (sp->max_streams)
		drive_stream(sp, c, ev);
}

static void on_udp(void *arg, struct myrio_udp_sock *u)
{
	struct stack_pair *sp = arg;
	if (sp->nudp < sizeof(sp->udp_readable) / sizeof(sp->udp_readable[0]))
		sp->udp_readable[sp->nudp++] = u;
}

static uint64_t model_clock(void *sim)
{
	return SP_EPOCH_NS + myrio_sim_now_ns(sim);
}

int sp_open(struct stack_pair *sp, const char *link, const struct sp_opts *o)
{
	static const struct sp_opts none;
	if (!o)
		o = &none;
	memset(sp, 0, sizeof(*sp));
	sp->now_ns = SP_EPOCH_NS;
	sp->tick_ns = 20000; /* 20 us per round */
	sp->steps = o->steps ? o->steps : 20;
	sp->max_streams = o->streams;
	if (o->streams && !(sp->streams = calloc(o->streams, sizeof(*sp->streams))))
		return -ENOMEM;
	int rc = link_pair_open(&sp->link, link, o->opts_a, o->opts_b, o->port_conf);
	if (rc < 0)
		return rc;
	sp->pa = sp->link.a;
	sp->pb = sp->link.b;
	sp->sim = sp->link.sim;
	struct myrio_stack_conf conf;
	myrio_stack_conf_init(&conf);
	conf.netmask = 0xffffff00u;
	if (sp->sim) { /* the model's virtual time, which the rounds' steps advance */
		conf.clock = model_clock;
		conf.clock_arg = sp->sim;
	} else if (strncmp(link, "pair:", 5) == 0) {
		conf.clock = fake_clock_read;
		conf.clock_arg = &sp->now_ns;
	} /* else the daemon's model runs in real time, and so do the stacks */
	conf.tcp_event = on_tcp;
	conf.udp_event = on_udp;
	conf.event_arg = sp;
	conf.time_wait_ms = 1000;
	conf.seed = 42;
	if (o->tweak)
		o->tweak(&conf);
	conf.ip = SP_IP_A;
	if ((rc = myrio_stack_create(&sp->a, sp->pa, &conf)) < 0)
		return rc;
	conf.ip = SP_IP_B;
	conf.seed++;
	return myrio_stack_create(&sp->b, sp->pb, &conf);
}

void sp_round(struct stack_pair *sp)
{
	myrio_stack_poll(sp->a);
	myrio_stack_poll(sp->b);
	link_pair_step(&sp->link, sp->steps);
	sp->now_ns += sp->tick_ns;
}

void sp_rounds(struct stack_pair *sp, uint64_t n)
{
	while (n--)
		sp_round(sp);
}

bool sp_run_until(struct stack_pair *sp, bool (*done)(struct stack_pair *), uint64_t max_rounds)
{
	for (uint64_t r = 0; r < max_rounds; r++) {
		if (done(sp))
			return true;
		sp_round(sp);
	}
	return done(sp);
}

void sp_close(struct stack_pair *sp)
{
	for (unsigned i = 0; i < sp->nstreams; i++)
		if (sp->streams[i].c) {
			myrio_tcp_abort(sp->streams[i].c);
			sp->streams[i].c = NULL;
		}
	/* The RSTs and the frames in flight go, so that every buffer finds its way home. */
	for (int i = 0; i < 200 && sp->a && sp->b; i++)
		sp_round(sp);
	myrio_stack_destroy(sp->a);
	myrio_stack_destroy(sp->b);
	for (int i = 0; i < 2 && sp->pa && sp->pb; i++) { /* reap the last send completions */
		myrio_tx_burst(sp->pa, NULL, 0);
		myrio_tx_burst(sp->pb, NULL, 0);
	}
	link_pair_close(&sp->link); /* the public close: it also withdraws the published counters */
	free(sp->streams);
	memset(sp, 0, sizeof(*sp));
}

struct myrio_tcp_conn *sp_accepted_conn(struct stack_pair *sp)
{
	for (unsigned i = 0; i < sp->nev; i++)
		if (sp->ev[i].accepted)
			return sp->ev[i].c;
	return NULL;
}

int sp_static_arp(struct stack_pair *sp)
{
	struct myrio_port_info ia, ib;
	int rc = myrio_port_info(sp->pa, &ia);
	if (rc == 0)
		rc = myrio_port_info(sp->pb, &ib);
	if (rc == 0)
		rc = myrio_arp_add_static(sp->a, SP_IP_B, ib.mac);
	if (rc == 0)
		rc = myrio_arp_add_static(sp->b, SP_IP_A, ia.mac);
	return rc;
}
