/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' one two-stack harness: a tcp_lite stack on each port of a link (link_pair.h),
 * both polled in rounds. The link is the parameter:
 *   "pair:NAME"          the pair link; the stacks' clock is a fake one (now_ns) that each
 *                        round advances by tick_ns
 *   "sim:SPEC"           two NICs of a stepped model world: each round steps it `steps`
 *                        times (1 us each) and the stacks' clock is its virtual time
 *   "simd:A+B[@SOCKET]"  two NICs of a running model daemon, in real time: the host's clock
 * Every connection's events are counted (the first SP_MAX_EV connections: sp_ev); with
 * streams > 0 the harness also drives checked-pattern streams (struct sp_stream): every
 * accepted connection gets one, and sp_stream_new gives one to a connection the test opens. */
#ifndef MYRIO_TEST_STACK_PAIR_H
#define MYRIO_TEST_STACK_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "link_pair.h"
#include "myrio/tcp_lite.h"

#define SP_IP_A 0x0a000001u /* 10.0.0.1, stack a */
#define SP_IP_B 0x0a000002u /* 10.0.0.2, stack b */
#define SP_MAX_EV 8

struct sp_conn_ev {
	struct myrio_tcp_conn *c;
	int connected, accepted, readable, writable, closed, error;
};

/* A checked-pattern stream (test_pattern.h): sent and received bytes are counted and every
 * received byte checked at its stream offset, so a loss, duplicate or reordering shows. */
struct sp_stream {
	struct myrio_tcp_conn *c;
	uint64_t sent, rcvd; /* pattern bytes written / read and checked */
	uint64_t to_send;
	uint64_t bad; /* bytes that did not match the pattern */
	bool connected, eof, closed, error;
	int err;
};

struct sp_opts {
	const char *opts_a, *opts_b;		  /* pair: each end's "?key=value&..." options */
	const struct myrio_port_conf *port_conf;  /* sim:, simd: both ports' (NULL: defaults) */
	void (*tweak)(struct myrio_stack_conf *); /* may change both stacks' configuration */
	unsigned steps;				  /* sim: model steps per round (0: 20) */
	unsigned streams;			  /* how many streams the harness may drive */
};

struct stack_pair {
	struct link_pair link;
	struct myrio_port *pa, *pb; /* link.a, link.b */
	struct myrio_stack *a, *b;
	struct myrio_sim *sim; /* link.sim: the stepped world of a sim: link, else NULL */
	uint64_t now_ns;       /* pair: the stacks' fake clock */
	uint64_t tick_ns;      /* pair: its advance per round */
	unsigned steps;	       /* sim: model steps per round */
	struct sp_conn_ev ev[SP_MAX_EV];
	unsigned nev;
	struct myrio_udp_sock *udp_readable[8]; /* UDP sockets told readable, in order */
	unsigned nudp;
	struct sp_stream *streams; /* indexed by myrio_tcp_user - 1 */
	unsigned nstreams, max_streams;
	uint64_t accepted, connected, errors, closed; /* events of every connection */
	uint64_t want; /* bytes of the transfer sp_transfer started */
};

/* Opens the link and a stack on each port (a: SP_IP_A, b: SP_IP_B); o may be NULL. 0 or a
 * negative errno. */
int sp_open(struct stack_pair *sp, const char *link, const struct sp_opts *o);
void sp_round(struct stack_pair *sp);
void sp_rounds(struct stack_pair *sp, uint64_t n);
/* Runs rounds until done(sp) or max_rounds; returns whether done. */
bool sp_run_until(struct stack_pair *sp, bool (*done)(struct stack_pair *), uint64_t max_rounds);
/* Resets the streams still open, lets the last frames go, destroys the stacks, closes the
 * link. */
void sp_close(struct stack_pair *sp);

/* The counted events of connection c (NULL beyond SP_MAX_EV connections). */
struct sp_conn_ev *sp_ev(struct stack_pair *sp, struct myrio_tcp_conn *c);
/* The first connection b (or a) accepted, or NULL. */
struct myrio_tcp_conn *sp_accepted_conn(struct stack_pair *sp);
/* Static ARP entries both ways: no SYN waits for a resolution (the ARP queue is short). */
int sp_static_arp(struct stack_pair *sp);

/* Streams (sp_opts.streams > 0). c may be NULL for a stream the test fills in later. */
struct sp_stream *sp_stream_new(struct stack_pair *sp, struct myrio_tcp_conn *c);
void sp_stream_read(struct sp_stream *s);
/* Writes the pattern while the stack takes it, in writes of up to chunk bytes (64 KiB at
 * most; the stack does not merge writes, so the chunk shapes the segments). */
void sp_stream_write_chunks(struct sp_stream *s, size_t chunk);
void sp_stream_write(struct sp_stream *s); /* chunks of 8 KiB */

/* One transfer from a to b: a listener on b's port, a connection from a with bytes to
 * send; b's accepted stream is the pair's second (sp_receiver once it exists). */
struct sp_stream *sp_transfer(struct stack_pair *sp, uint16_t port, uint64_t bytes);
struct sp_stream *sp_receiver(struct stack_pair *sp);
/* sp_run_until conditions for the transfer (or any error). */
bool sp_quarter_received(struct stack_pair *sp);
bool sp_all_received(struct stack_pair *sp);
/* Every byte sent and received once, in order, uncorrupted; no connection failed. */
void sp_check_intact(struct stack_pair *sp, const struct sp_stream *tx);

#endif
