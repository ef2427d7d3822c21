/* SPDX-License-Identifier: BSD-3-Clause */
/* Queues beyond 0 of a Myri-10G port (the slices, §7) and RSS. Each queue is one slice's
 * rings, touched only by the thread that polls it: nothing here takes a lock. The NIC's
 * 4-byte completions carry no hash (§4.6), so the hash each packet carries is computed here
 * from its headers with the key and hash type the NIC was given: by construction the one
 * that chose its queue. A port of one queue uses none of this. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "port/myri10ge_port.h"
#include "port/publish_tick.h"
#include "util/log.h"
#include "util/rss_hash.h"

/* What the bursts hash with: the hash type and the key's table, replaced whole by
 * myri10ge_rss_set, never changed in place. */
struct myri10ge_rss_live {
	uint32_t hash_type;
	struct toeplitz_table tt;
};

static struct myri10ge_rss_live *rss_live_new(const struct myri_rss *rss)
{
	struct myri10ge_rss_live *l = malloc(sizeof(*l));
	if (l) {
		l->hash_type = rss->hash_type;
		toeplitz_table_init(&l->tt, rss->key);
	}
	return l;
}

int myri10ge_queues_init(struct myri10ge_port *p)
{
	struct myri_nic *nic = &p->nic;
	struct myri_rss *rss = &nic->rss;
	memcpy(rss->key, toeplitz_default_key, sizeof(rss->key));
	rss->table_size = 128;
	for (unsigned i = 0; i < rss->table_size; i++)
		rss->table[i] = (uint8_t)(i % nic->nq_wanted);
	rss->hash_type = MCP_RSS_HASH_BOTH;
	struct myri10ge_rss_live *l = rss_live_new(rss);
	if (!l)
		return -ENOMEM;
	atomic_init(&p->rss_live, l);
	return 0;
}

void myri10ge_queues_fini(struct myri10ge_port *p)
{
	free(atomic_load(&p->rss_live));
	atomic_store(&p->rss_live, NULL);
	myri_gates_fini(&p->nic);
}

/* Inside the queue's gate: the configuration read here stays until the burst ends. */
static void hash_burst(struct myri10ge_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	const struct myri10ge_rss_live *l =
	    atomic_load_explicit(&p->rss_live, memory_order_acquire);
	for (uint16_t i = 0; i < n; i++) {
		struct myrio_pkt *m = pkts[i];
		m->rss_hash = rss_frame_hash(l->hash_type, myrio_pkt_data(m), m->len,
					     rss_table_toeplitz, &l->tt);
		m->ol_flags |= MYRIO_PKT_RX_RSS_HASH;
	}
}

/* Every few hundred bursts, inside the gate: the generic periodic work for queue 0, the
 * copy of its own sources' counters for another (each queue's thread publishes what it
 * writes), then the queue's watchdog look. Returns true when the burst goes on inside
 * the gate, false when it returns 0 (the gate left: the port is down, a reset waits, or
 * this thread just recovered the NIC). */
static __attribute__((noinline)) bool queue_periodic(struct myrio_port *port, unsigned q)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (q == 0)
		myrio_port_periodic(port);
	else
		myrio_publish_tick(&mp(port)->publish_last_ns[q], port, q);
	bool hold;
	enum myri_wd_reason why = myri_queue_look(nic, q, &hold);
	if (why == WD_NONE && !hold)
		return true;
	myri_gate_leave(nic, q);
	if (why != WD_NONE)
		myri_queues_recover(nic, q, why);
	return false;
}

/* Into queue q's gate for a burst; false: the burst returns 0, outside the gate. */
static inline bool queue_in(struct myrio_port *port, unsigned q)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (__builtin_expect(!myri_gate_enter(nic, q), 0))
		return false;
	if (__builtin_expect(--myri_queue_rings(nic, q)->poll_countdown != 0, 1))
		return true;
	return queue_periodic(port, q);
}

int myri10ge_queues(struct myrio_port *port)
{
	return (int)mp(port)->nic.nq;
}

uint16_t myri10ge_rx_burst_queue(struct myrio_port *port, uint16_t q, struct myrio_pkt **pkts,
				 uint16_t n)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (!queue_in(port, q))
		return 0;
	uint16_t got = rings_rx_burst(myri_queue_rings(nic, q), pkts, n);
	hash_burst(mp(port), pkts, got);
	myri_gate_leave(nic, q);
	return got;
}

uint16_t myri10ge_tx_burst_queue(struct myrio_port *port, uint16_t q, struct myrio_pkt **pkts,
				 uint16_t n)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (!queue_in(port, q))
		return 0;
	uint16_t sent = rings_tx_burst(myri_queue_rings(nic, q), pkts, n);
	myri_gate_leave(nic, q);
	return sent;
}

/* Queue 0 of a port with several, through the same gate as the others. */
uint16_t myri10ge_rx_burst_q0(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	return myri10ge_rx_burst_queue(port, 0, pkts, n);
}

uint16_t myri10ge_tx_burst_q0(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	return myri10ge_tx_burst_queue(port, 0, pkts, n);
}

int myri10ge_irq_fd_queue(struct myrio_port *port, uint16_t q)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (nic->vec_fd[q] < 0) {
		log_err("%s: queue %u has no interrupt: open the port with myrio_port_conf.irq set "
			"on a bus with MSI-X",
			nic->bus->name, q);
		return -ENOTSUP;
	}
	return nic->vec_fd[q];
}

/* As for queue 0 (myri10ge_port.c): handle a pending update, give the token back when the
 * completion ring is empty, so that the next frame raises the queue's vector (§6.5). */
int myri10ge_irq_arm_queue(struct myrio_port *port, uint16_t q)
{
	struct myri_nic *nic = &mp(port)->nic;
	/* the watchdog's look too: a rebooted NIC never interrupts (see m_irq_arm) */
	if (!myri_gate_enter(nic, q) || !queue_periodic(port, q))
		return 0;
	struct myri_rings *r = myri_queue_rings(nic, q);
	status_poll(r);
	uint32_t e = *(volatile uint32_t *)&r->rx_done[r->rx_done_idx & r->rx_done_mask];
	if (r->rx_token && e == 0)
		status_return_rx_token(r);
	myri_gate_leave(nic, q);
	return 0;
}

int myri10ge_rss_get(struct myrio_port *port, struct myrio_rss_conf *conf)
{
	struct myri_nic *nic = &mp(port)->nic;
	const struct myri_rss *rss = &nic->rss;
	memset(conf, 0, sizeof(*conf));
	mcp_cmd_lock(&nic->cmd); /* the writer's lock (myri10ge_rss_set) */
	switch (rss->hash_type) {
	case MCP_RSS_HASH_IPV4:
		conf->hash = MYRIO_RSS_IPV4;
		break;
	case MCP_RSS_HASH_TCP_IPV4:
		conf->hash = MYRIO_RSS_TCP_IPV4;
		break;
	case MCP_RSS_HASH_BOTH:
		conf->hash = MYRIO_RSS_IPV4 | MYRIO_RSS_TCP_IPV4;
		break;
	default:
		conf->hash = MYRIO_RSS_PORTS;
	}
	conf->table_size = (uint16_t)rss->table_size;
	memcpy(conf->table, rss->table, rss->table_size);
	memcpy(conf->key, rss->key, sizeof(conf->key));
	mcp_cmd_unlock(&nic->cmd);
	return 0;
}

static int hash_type(uint32_t hash)
{
	switch (hash) {
	case MYRIO_RSS_IPV4:
		return MCP_RSS_HASH_IPV4;
	case MYRIO_RSS_TCP_IPV4:
		return MCP_RSS_HASH_TCP_IPV4;
	case MYRIO_RSS_IPV4 | MYRIO_RSS_TCP_IPV4:
		return MCP_RSS_HASH_BOTH;
	case MYRIO_RSS_PORTS:
		return MCP_RSS_HASH_SRC_DST_PORT;
	default:
		return -EINVAL;
	}
}

/* The NIC's table is a byte per entry in SRAM, read by the firmware for every frame
 * (§7.3), so a new table takes effect entry by entry: each frame follows the old entry or
 * the new one, always a queue of the port (checked by myrio_port_rss_set). The key and the
 * hash type change at RSS_KEY_UPDATED and SET_RSS_ENABLE. The driver's copy (the hash it
 * gives each packet) is replaced whole: the bursts read it inside their gates, so the old
 * one is freed once every queue has been outside its gate (myri_gates_grace). */
int myri10ge_rss_set(struct myrio_port *port, const struct myrio_rss_conf *conf)
{
	struct myri10ge_port *p = mp(port);
	struct myri_nic *nic = &p->nic;
	int type = hash_type(conf->hash);
	if (type < 0) {
		log_err("%s: RSS hash 0x%x: choose MYRIO_RSS_IPV4 and/or MYRIO_RSS_TCP_IPV4, or "
			"MYRIO_RSS_PORTS alone",
			nic->bus->name, conf->hash);
		return -EINVAL;
	}
	if (nic->nq < 2)
		return -ENOTSUP;
	/* One writer of the NIC's table at a time; a configuration the NIC refuses gives
	 * way to the previous one, in the NIC and in the driver's prediction of it. */
	mcp_cmd_lock(&nic->cmd);
	struct myri_rss *rss = &nic->rss, old = *rss;
	rss->hash_type = (uint32_t)type;
	rss->table_size = conf->table_size;
	memcpy(rss->table, conf->table, conf->table_size);
	memcpy(rss->key, conf->key, sizeof(rss->key));
	struct myri10ge_rss_live *l = rss_live_new(rss), *gone = NULL;
	int rc = l ? myri_slices_write_rss(nic) : -ENOMEM;
	if (rc < 0) {
		*rss = old;
		if (l && myri_slices_write_rss(nic) < 0)
			log_err("%s: the previous RSS configuration could not be restored either",
				nic->bus->name);
		free(l);
	} else {
		gone = atomic_exchange(&p->rss_live, l);
	}
	mcp_cmd_unlock(&nic->cmd);
	if (gone) {
		myri_gates_grace(nic, MYRI_MAX_SLICES);
		free(gone);
	}
	return rc;
}

int myri10ge_rss_flow_queue(struct myrio_port *port, const uint8_t tuple[12], uint8_t proto,
			    uint32_t *hash)
{
	struct myri10ge_port *p = mp(port);
	struct myri_nic *nic = &p->nic;
	const struct myri_rss *rss = &nic->rss;
	if (nic->nq < 2)
		return -ENOTSUP;
	int ports = proto == 6 || proto == 17;
	mcp_cmd_lock(&nic->cmd); /* the writer's lock: table and live copy agree under it */
	const struct myri10ge_rss_live *l = atomic_load(&p->rss_live);
	uint32_t h = rss_tuple_hash(l->hash_type, tuple, proto, ports, rss_table_toeplitz, &l->tt);
	uint8_t q = rss->table[h % rss->table_size];
	mcp_cmd_unlock(&nic->cmd);
	if (hash)
		*hash = h;
	return q < nic->nq ? q : 0; /* as the NIC: an entry beyond the slices means 0 */
}

void myri10ge_queue_stats(const struct myri_nic *nic, uint16_t q, struct myrio_queue_stats *st)
{
	/* the queue's thread writes them meanwhile: each read on its own (util/counter.h) */
	const struct myri_rings *r = myri_queue_rings((struct myri_nic *)nic, q);
	*st = (struct myrio_queue_stats){.rx_packets = counter_read(&r->rx_packets),
					 .rx_bytes = counter_read(&r->rx_bytes),
					 .tx_packets = counter_read(&r->tx_packets),
					 .tx_bytes = counter_read(&r->tx_bytes),
					 .rx_refill_failed = counter_read(&r->small.refill_failed) +
							     counter_read(&r->big.refill_failed),
					 .rx_bad_completion = counter_read(&r->rx_bad_completion),
					 .tx_ring_full = counter_read(&r->tx_ring_full),
					 .tx_dropped_bad = counter_read(&r->tx_dropped_bad),
					 .irq_updates = counter_read(&r->irq_updates)};
}

int myri10ge_queue_stats_op(struct myrio_port *port, uint16_t q, struct myrio_queue_stats *st)
{
	myri10ge_queue_stats(&mp(port)->nic, q, st);
	return 0;
}

/* Per-queue counters: each queue's thread writes its own, readers may lag a little. The
 * name says the queue's direction, number and counter: DIR_qN_NAME. */
#define QC(fmt, f)                                                                                 \
	{                                                                                          \
		fmt, offsetof(struct myrio_queue_stats, f)                                         \
	}
static const struct {
	const char *fmt;
	size_t off;
} queue_counter[] = {
    QC("rx_q%u_packets", rx_packets),
    QC("rx_q%u_bytes", rx_bytes),
    QC("tx_q%u_packets", tx_packets),
    QC("tx_q%u_bytes", tx_bytes),
    QC("rx_q%u_refill_failed", rx_refill_failed),
    QC("rx_q%u_bad_completion", rx_bad_completion),
    QC("tx_q%u_ring_full", tx_ring_full),
    QC("tx_q%u_dropped_bad", tx_dropped_bad),
    QC("irq_q%u_updates", irq_updates),
};
#undef QC
#define N_QUEUE_COUNTERS (sizeof(queue_counter) / sizeof(queue_counter[0]))

unsigned myri10ge_queue_xstats_names(struct myri_nic *nic, struct myrio_xstat_name *names,
				     unsigned n)
{
	unsigned total = nic->nq > 1 ? nic->nq * (unsigned)N_QUEUE_COUNTERS : 0;
	for (unsigned i = 0; i < total && i < n; i++)
		snprintf(names[i].name, sizeof(names[i].name),
			 queue_counter[i % N_QUEUE_COUNTERS].fmt, i / (unsigned)N_QUEUE_COUNTERS);
	return total;
}

unsigned myri10ge_queue_xstats(struct myri_nic *nic, uint64_t *values, unsigned n)
{
	unsigned total = nic->nq > 1 ? nic->nq * (unsigned)N_QUEUE_COUNTERS : 0;
	struct myrio_queue_stats st;
	for (unsigned i = 0; i < total && i < n; i++) {
		if (i % N_QUEUE_COUNTERS == 0)
			myri10ge_queue_stats(nic, (uint16_t)(i / N_QUEUE_COUNTERS), &st);
		memcpy(&values[i], (const uint8_t *)&st + queue_counter[i % N_QUEUE_COUNTERS].off,
		       sizeof(values[i]));
	}
	return total;
}
