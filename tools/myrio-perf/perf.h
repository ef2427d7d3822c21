/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-perf: netperf-style tests between two ports of one process.
 *
 * Side A is netperf's local end (the sender, the requester), side B its remote end. Both
 * stacks are polled from one thread; the CPU each side uses is counted separately (see
 * loop.c), so the figures match what two hosts would report.
 */
#ifndef MYRIO_PERF_H
#define MYRIO_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "myrio/myrio.h"

#define PERF_IP_A 0x0a000001u	     /* 10.0.0.1 */
#define PERF_IP_B 0x0a000002u	     /* 10.0.0.2 */
#define PERF_PORT 12865		     /* netperf's */
#define PERF_COAL_DEFAULT UINT32_MAX /* --coal not given */
#define COPY_MAX 65536u		     /* --copy: the largest (and default) message */

enum perf_test { TCP_STREAM, TCP_SENDFILE, UDP_STREAM, TCP_RR, UDP_RR };

struct perf_opts {
	enum perf_test test;
	double seconds;
	uint32_t msg_size; /* 0 = one full segment / datagram */
	uint32_t req_size, resp_size;
	uint32_t burst; /* RR: extra transactions in flight */
	uint32_t mtu;
	const char *sim_spec;	   /* in-process model options */
	const char *dev_a, *dev_b; /* NULL = in-process model */
	bool irq;		   /* sleep on the interrupt eventfd when idle */
	uint32_t irq_spin;	   /* idle polls before sleeping */
	uint32_t coal_us; /* interrupt coalescing, us; PERF_COAL_DEFAULT: 50 with --irq, else 0 */
	bool timestamps;
	bool tso;    /* TCP segmentation offload where the port offers it */
	bool verify; /* receiver checks the bytes */
	bool copy;   /* TCP_STREAM through myrio_tcp_write/myrio_tcp_read on application buffers */
	bool json, quiet;
	bool stats;	  /* print both stacks' non-zero counters at the end */
	bool relax;	  /* a pause instruction after an empty poll */
	bool pin;	  /* model thread on CPU 0, this thread on the last CPU */
	const char *file; /* TCP_SENDFILE source */
	const char *pcap;
};

struct perf_side {
	struct myrio_port *port;
	struct myrio_stack *stack;
	struct myrio_tcp_conn *conn;
	struct myrio_udp_sock *udp;
	struct myrio_port_info info;
	bool closed;
	uint64_t busy_ticks; /* time in poll iterations that did something */
	int irq_fd;
};

struct perf_result {
	double elapsed;			 /* seconds */
	uint64_t bytes_sent, bytes_recv; /* payload */
	uint64_t msgs_sent, msgs_recv, send_errors;
	uint64_t trans;		      /* RR transactions */
	uint64_t bad;		      /* bytes or datagrams that failed verification */
	uint32_t rcv_sock, snd_sock;  /* "socket sizes": window and send queue, bytes */
	double cpu_local, cpu_remote; /* CPU seconds used by each side */
	double cpu_model;   /* the model's thread (the NIC), pthread_getcpuclockid; < 0: none */
	double cpu_process; /* this whole process, getrusage(RUSAGE_SELF) */
	uint64_t retransmits, sleeps, wakeups;
	uint64_t drops_a, drops_b; /* frames the ports or NICs dropped (ring full, no buffer) */
	const char *cpu_method;
};

struct perf {
	struct perf_opts o;
	struct myrio_sim *sim;
	bool stepped; /* no model thread: each poll iteration steps the model once */
	struct perf_side a, b;
	int ncpus;
	uint32_t coal_us; /* the interrupt coalescing in effect, us */
	/* the test's per-side work, called after each side's stack poll; returns work done */
	int (*work_a)(struct perf *);
	int (*work_b)(struct perf *);
	void *test; /* the test's state */
	struct perf_result r;
};

/* setup.c */
int perf_open(struct perf *pf);
int perf_open_model(struct perf *pf, const char *extra_spec);
void perf_port_conf(struct perf *pf, struct myrio_port_conf *pc);
/* A stack's configuration for this test on a port like info; conns share its send ring. */
void perf_stack_conf(struct perf *pf, const struct myrio_port_info *info, uint32_t ip,
		     uint32_t conns, struct myrio_stack_conf *sc);
void perf_close(struct perf *pf);
int perf_tcp_connect(struct perf *pf);
uint64_t perf_now_ns(void);

/* loop.c: polls both sides for the given time (or until done() says so), counting CPU. */
int perf_run(struct perf *pf, double seconds, bool (*done)(struct perf *), const char *label);
/* Polls both sides without counting, until cond or the timeout (seconds). */
bool perf_settle(struct perf *pf, bool (*cond)(struct perf *), double timeout);

/* tests */
int perf_stream(struct perf *pf);
int perf_rr(struct perf *pf);

/* output.c */
const char *perf_test_name(enum perf_test t);
void perf_print(const struct perf *pf, FILE *f);
void perf_print_json(const struct perf *pf, FILE *f);
void perf_print_stacks(const struct perf *pf, FILE *f);

/* threads.c: -T N, a stack per queue and a thread per queue pair */
int perf_threads(struct perf *pf, unsigned threads, unsigned conns_per_thread);

/* sweep.c */
int perf_sweep(struct perf_opts *o, const char *sizes, const char *svg_path);

#endif
