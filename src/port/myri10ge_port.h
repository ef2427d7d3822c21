/* SPDX-License-Identifier: BSD-3-Clause */
/* The Myri-10G port back-end's state, shared by its files: myri10ge_port.c (the port of
 * one queue, as every back-end has) and myri10ge_queues.c (queues beyond 0, RSS). */
#ifndef MYRIO_PORT_MYRI10GE_PORT_H
#define MYRIO_PORT_MYRI10GE_PORT_H

#include "mcp/nic.h"
#include "port/port_ops.h"
#include "util/toeplitz.h"

struct myri10ge_rss_live;

struct myri10ge_port {
	struct myrio_port port; /* first: the generic layer casts */
	struct myri_nic nic;
	/* with several queues: the hash type and key's table the bursts use (queues.c) */
	_Atomic(struct myri10ge_rss_live *) rss_live;
	uint64_t publish_last_ns[MYRI_MAX_SLICES]; /* queue q > 0's last copy (publish_tick.h) */
	unsigned long fault_tx_in; /* myri10ge_fault.c: frames until the bad one, 0 off */
};

static inline struct myri10ge_port *mp(struct myrio_port *port)
{
	return (struct myri10ge_port *)port;
}

uint16_t myri10ge_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);

/* myri10ge_fault.c (tests only) */
void myri10ge_fault_init(struct myri10ge_port *p);
uint16_t myri10ge_fault_tx(struct myri10ge_port *p, struct myrio_pkt **pkts, uint16_t n);

/* myri10ge_queues.c */
int myri10ge_queues_init(struct myri10ge_port *p); /* the default RSS conf, before open */
void myri10ge_queues_fini(struct myri10ge_port *p);
uint16_t myri10ge_rx_burst_q0(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);
uint16_t myri10ge_tx_burst_q0(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);
int myri10ge_queues(struct myrio_port *port);
uint16_t myri10ge_rx_burst_queue(struct myrio_port *port, uint16_t q, struct myrio_pkt **pkts,
				 uint16_t n);
uint16_t myri10ge_tx_burst_queue(struct myrio_port *port, uint16_t q, struct myrio_pkt **pkts,
				 uint16_t n);
int myri10ge_irq_fd_queue(struct myrio_port *port, uint16_t q);
int myri10ge_irq_arm_queue(struct myrio_port *port, uint16_t q);
int myri10ge_rss_get(struct myrio_port *port, struct myrio_rss_conf *conf);
int myri10ge_rss_set(struct myrio_port *port, const struct myrio_rss_conf *conf);
int myri10ge_rss_flow_queue(struct myrio_port *port, const uint8_t tuple[12], uint8_t proto,
			    uint32_t *hash);
/* Per-queue counters appended to the extended stats: names, and values from index 0. */
unsigned myri10ge_queue_xstats_names(struct myri_nic *nic, struct myrio_xstat_name *names,
				     unsigned n);
unsigned myri10ge_queue_xstats(struct myri_nic *nic, uint64_t *values, unsigned n);
void myri10ge_queue_stats(const struct myri_nic *nic, uint16_t q, struct myrio_queue_stats *st);
int myri10ge_queue_stats_op(struct myrio_port *port, uint16_t q, struct myrio_queue_stats *st);

#endif
