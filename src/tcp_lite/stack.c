/* SPDX-License-Identifier: BSD-3-Clause */
/* The stack instance: creation, the poll loop, the transmit batch and the clock. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "myrio/publish.h"
#include "tcp_lite/stack.h"
#include "util/log.h"

void myrio_stack_conf_init(struct myrio_stack_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->max_tcp_conns = 256;
	conf->max_listeners = 8;
	conf->max_udp_socks = 16;
	conf->arp_entries = 64;
	conf->tx_pool_size = 4096;
	conf->snd_queue_segs = 512;
	conf->rcv_buf = 256 * 1024;
	conf->ooo_max_segs = 256;
	conf->udp_rx_queue = 256;
	conf->reass_slots = 4;
	conf->reass_timeout_ms = 30000;
	conf->arp_timeout_ms = 60000;
	conf->delayed_ack_ms = 40;
	conf->time_wait_ms = 60000;
	conf->rto_min_ms = 200;
	conf->rto_initial_ms = 1000;
	conf->rto_max_ms = 60000;
	conf->max_retries = 12;
	conf->syn_retries = 6;
	conf->challenge_ack_limit = 1000;
	conf->sack = true;
	conf->timestamps = true;
	conf->window_scale = true;
	conf->tso = true;
	conf->max_timers = 64;
}

void myrio_stack_conf_latency(struct myrio_stack_conf *conf)
{
	conf->delayed_ack_ms = 0;
	conf->nagle = false;
}

static uint64_t default_clock(void *arg)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void stack_update_clock(struct myrio_stack *s)
{
	uint64_t ns = s->conf.clock(s->conf.clock_arg);
	s->now_ns = ns;
	s->now_us = ns / 1000;
	s->now_ms = ns / 1000000 + 1;
}

uint64_t myrio_stack_now_ns(const struct myrio_stack *s)
{
	return s->now_ns;
}

uint64_t myrio_stack_now_ms(const struct myrio_stack *s)
{
	return s->now_ms - 1;
}

uint64_t myrio_stack_clock_ns(const struct myrio_stack *s)
{
	return s->conf.clock(s->conf.clock_arg);
}

uint64_t myrio_stack_next_deadline(const struct myrio_stack *s)
{
	bool tx_waits = s->ntx || s->out_list;
	if ((tx_waits && !s->tx_ring_full) || s->zombies || share_inbox_due(s))
		return s->now_ns; /* work left for the next poll */
	uint64_t tick = tw_next(&s->wheel);
	if (s->arp_next_check && s->arp_next_check < tick)
		tick = s->arp_next_check;
	if (s->pmtu_next_check && s->pmtu_next_check < tick)
		tick = s->pmtu_next_check;
	uint64_t igmp_due = atomic_load_explicit(&s->share->igmp.next_ms, memory_order_relaxed);
	if (igmp_due && igmp_due < tick)
		tick = igmp_due;
	uint64_t due = tick == UINT64_MAX ? UINT64_MAX
		       : tick <= 1	  ? 0
					  : (tick - 1) * 1000000; /* the ms's start, clock time */
	/* Transmits held by a full send ring: the NIC's send completions interrupt; the timer
	 * only bounds the wait on a port whose interrupt signals frames alone. */
	if (tx_waits && s->now_ns + TX_RING_RECHECK_NS < due)
		due = s->now_ns + TX_RING_RECHECK_NS;
	return due;
}

uint64_t stack_random(struct myrio_stack *s)
{
	/* splitmix64 over the secret: cheap, unpredictable without the secret */
	uint64_t z = (s->secret[1] += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31) ^ s->secret[0];
}

static int check_conf(const struct myrio_stack_conf *c)
{
	if (!c->ip) {
		log_err("tcp_lite: no IPv4 address configured (conf.ip)");
		return -EINVAL;
	}
	if (c->max_tcp_conns == 0 || c->max_tcp_conns > (1u << 20) || c->arp_entries == 0 ||
	    c->arp_entries > (1u << 16) || c->tx_pool_size < 64 || c->snd_queue_segs == 0 ||
	    c->rcv_buf < 4096 || c->rcv_buf > (1u << 30) || c->max_listeners == 0 ||
	    c->max_udp_socks == 0 || c->reass_slots > 1024) {
		log_err("tcp_lite: table sizes out of range (conns 1..2^20, arp 1..65536, "
			"tx_pool >= 64, rcv_buf 4 KiB..1 GiB, listeners and udp sockets >= 1, "
			"reass_slots <= 1024)");
		return -EINVAL;
	}
	return 0;
}

int myrio_stack_create(struct myrio_stack **out, struct myrio_port *port,
		       const struct myrio_stack_conf *conf)
{
	*out = NULL;
	int nq = myrio_port_queues(port);
	if (nq > 1) {
		log_err("tcp_lite: the port has %d queues and this stack would poll queue 0 "
			"alone: the flows the NIC hashes to the others would be lost. Make one "
			"stack per queue (myrio_stack_create_queue)",
			nq);
		return -EINVAL;
	}
	return stack_create_on(out, port, 0, conf, NULL);
}

int stack_create_on(struct myrio_stack **out, struct myrio_port *port, uint16_t queue,
		    const struct myrio_stack_conf *conf, const struct myrio_stack *sibling)
{
	*out = NULL;
	struct myrio_stack_conf defaults;
	if (!conf) {
		myrio_stack_conf_init(&defaults);
		conf = &defaults;
	}
	int rc = check_conf(conf);
	if (rc < 0)
		return rc;
	int nq = myrio_port_queues(port);
	rc = queue_claim(port, queue, nq > 1 ? (uint16_t)nq : 1, !sibling);
	if (rc < 0)
		return rc;
	struct myrio_stack *s = calloc(1, sizeof(*s));
	if (!s) {
		queue_release(port, queue);
		return -ENOMEM;
	}
	s->conf = *conf;
	s->port = port;
	s->queue = queue;
	s->nq = 1;
	s->wait_fd = -1;
	if (!s->conf.clock)
		s->conf.clock = default_clock;
	if (s->conf.rto_min_ms == 0)
		s->conf.rto_min_ms = 1;
	if (s->conf.rto_initial_ms < s->conf.rto_min_ms)
		s->conf.rto_initial_ms = s->conf.rto_min_ms;
	if (s->conf.rto_max_ms < s->conf.rto_initial_ms)
		s->conf.rto_max_ms = s->conf.rto_initial_ms;
	stack_update_clock(s);

	struct myrio_port_info info;
	memset(&info, 0, sizeof(info));
	rc = myrio_port_info(port, &info);
	if (rc < 0) {
		log_err("tcp_lite: cannot read the port's MAC address and MTU (%d)", rc);
		queue_release(port, queue);
		free(s);
		return rc;
	}
	memcpy(s->mac, info.mac, 6);
	s->caps = info.caps;
	s->tso = s->conf.tso && (info.caps & MYRIO_CAP_TSO) && info.tx_boundary >= 1024;
	s->tx_boundary = info.tx_boundary;
	s->mtu = info.mtu ? info.mtu : 1500;
	if (s->mtu < 576) {
		log_err("tcp_lite: port MTU %u below the IPv4 minimum of 576 the stack needs",
			s->mtu);
		queue_release(port, queue);
		free(s);
		return -EINVAL;
	}
	s->mss = (uint16_t)(s->mtu - IP_HLEN - TCP_HLEN);
	if (s->conf.mss && s->conf.mss < s->mss)
		s->mss = s->conf.mss;

	if (s->conf.seed) {
		s->secret[0] = s->conf.seed * 0x9E3779B97F4A7C15ULL;
		s->secret[1] = s->conf.seed ^ 0xD1B54A32D192ED03ULL;
	} else if (getrandom(s->secret, sizeof(s->secret), 0) != (ssize_t)sizeof(s->secret)) {
		s->secret[0] = (uint64_t)s->now_us * 0x9E3779B97F4A7C15ULL;
		s->secret[1] = (uint64_t)(uintptr_t)s;
	}
	s->ip_id = (uint16_t)stack_random(s);

	/* Buffers: headroom + the largest frame, in 2 KiB elements for a 1500 MTU. */
	uint32_t buf_len = MYRIO_PKT_HEADROOM + s->mtu + ETH_HLEN;
	if (buf_len < 1984)
		buf_len = 1984;
	rc = myrio_port_pool_create(port, s->conf.tx_pool_size, buf_len, &s->pool);
	if (rc == 0)
		rc = share_attach(s, sibling);
	if (rc == 0)
		rc = arp_init(s);
	if (rc == 0)
		rc = udp_init(s);
	if (rc == 0)
		rc = tcp_init(s);
	if (rc == 0)
		rc = ipv4_reass_init(s);
	if (rc == 0)
		rc = app_timers_init(s);
	if (rc < 0) {
		log_err("tcp_lite: cannot allocate the stack's tables and buffers (%d); reduce "
			"max_tcp_conns or tx_pool_size",
			rc);
		myrio_stack_destroy(s);
		return rc;
	}
	s->ctl_reserve = s->conf.tx_pool_size / 16;
	char group[40];
	snprintf(group, sizeof(group), "stack %u.%u.%u.%u", s->conf.ip >> 24,
		 (s->conf.ip >> 16) & 0xff, (s->conf.ip >> 8) & 0xff, s->conf.ip & 0xff);
	if (queue)
		snprintf(group + strlen(group), sizeof(group) - strlen(group), " q%u", queue);
	s->publish_handle = myrio_publish_add_queue(s->port, queue, group, stack_counters, s);
	*out = s;
	if (!sibling)
		myrio_arp_announce(s);
	stack_flush(s);
	return 0;
}

void myrio_stack_destroy(struct myrio_stack *s)
{
	if (!s)
		return;
	myrio_publish_remove(s->publish_handle);
	ready_sets_fini(s); /* before the objects their entries live in are freed */
	if (s->hash)
		tcp_fini(s);
	stack_fd_close(s);
	app_timers_fini(s);
	ipv4_reass_fini(s);
	udp_fini(s);
	share_detach(s);
	arp_fini(s);
	shard_fini(s);
	if (s->pool) {
		/* Give the NIC a moment to take the batch (the last datagrams sent, the resets
		 * and Leaves of the teardown) and hand back the frames it still reads. */
		for (int i = 0;
		     i < 1000 && (s->ntx || myrio_pool_free_count(s->pool) < s->pool->count); i++) {
			if (s->ntx)
				stack_flush(s);
			else
				myrio_tx_burst_queue(s->port, s->queue, NULL, 0);
			/* Keep receiving (and dropping) meanwhile: a peer on the same link may
			 * be waiting for that to get its own buffers back. */
			struct myrio_pkt *in[RX_BURST];
			uint16_t n = myrio_rx_burst_queue(s->port, s->queue, in, RX_BURST);
			myrio_pkt_free_bulk(in, n);
			if (i > 10) {
				struct timespec ts = {0, 100000};
				nanosleep(&ts, NULL);
			}
		}
		if (s->ntx) {
			log_warn("tcp_lite: %u frames dropped at destroy: the NIC's send ring "
				 "stayed full",
				 s->ntx);
			s->st.tx_dropped_full += s->ntx;
		}
		for (unsigned i = 0; i < s->ntx; i++)
			myrio_pkt_free_req(s->txb[i]);
		/* Frames a dead NIC never hands back keep the pool until the port closes. */
		myrio_pool_destroy(s->pool);
	}
	queue_release(s->port, s->queue);
	free(s);
}

struct myrio_pkt *stack_alloc(struct myrio_stack *s)
{
	struct myrio_pkt *p = myrio_pkt_alloc(s->pool);
	if (!p)
		s->st.tx_pool_empty++;
	return p;
}

struct myrio_pkt *myrio_stack_pkt_alloc(struct myrio_stack *s)
{
	/* The last buffers are kept for ACKs, RSTs and ARP, so that a sender that fills
	 * the pool cannot stop the stack from acknowledging what it receives. */
	if (myrio_pool_free_count(s->pool) <= s->ctl_reserve) {
		s->st.tx_pool_empty++;
		return NULL;
	}
	return stack_alloc(s);
}

uint32_t myrio_stack_pkt_room(const struct myrio_stack *s)
{
	return s->pool->buf_len - MYRIO_PKT_HEADROOM;
}

void stack_flush(struct myrio_stack *s)
{
	unsigned done = 0;
	while (done < s->ntx) {
		uint16_t n = myrio_tx_burst_queue(s->port, s->queue, s->txb + done,
						  (uint16_t)(s->ntx - done));
		if (n == 0)
			break;
		done += n;
	}
	s->st.tx_frames += done;
	if (done < s->ntx) {
		/* Ring full: keep the rest for the next poll, in order. */
		s->st.tx_ring_full++;
		memmove(s->txb, s->txb + done, (s->ntx - done) * sizeof(s->txb[0]));
	}
	s->ntx -= done;
	s->tx_ring_full = s->ntx > 0;
}

bool stack_tx_room(struct myrio_stack *s)
{
	return stack_tx_fits(s, 1);
}

void stack_tx(struct myrio_stack *s, struct myrio_pkt *p)
{
	if (!stack_tx_room(s)) {
		/* NIC ring and batch full: drop (TCP still holds its segments). */
		s->st.tx_dropped_full++;
		myrio_pkt_free_req(p);
		return;
	}
	s->txb[s->ntx++] = p;
}

static void poll_tail(struct myrio_stack *s)
{
	uint8_t t = s->poll_tail;
	s->poll_tail = 0;
	if (t & POLL_TAIL_POOL_WAIT)
		tcp_pool_wake(s); /* sets the bit again while anyone still waits */
	if (t & POLL_TAIL_ZOMBIES)
		tcp_reap(s); /* and this one while any is left */
	if (t & POLL_TAIL_ARMED)
		stack_fd_rearm(s);
}

int myrio_stack_poll(struct myrio_stack *s)
{
	struct myrio_pkt *pkts[RX_BURST];
	stack_update_clock(s);
	uint16_t n = myrio_rx_burst_queue(s->port, s->queue, pkts, RX_BURST);
	if (n) {
		struct share_rx rx;
		share_rx_begin(s, &rx);
		for (uint16_t i = 0; i < n; i++) {
			if (i + 1 < n)
				__builtin_prefetch(myrio_pkt_data(pkts[i + 1]));
			eth_input(s, pkts[i]);
		}
		share_rx_end(&rx);
	}
	s->st.rx_frames += n;
	tcp_run_output(s);
	if (s->now_ms >= s->wheel.now) /* once per millisecond at most */
		tcp_timers_run(s);
	/* a reply a sibling's queue took first, so that the give-up below sees it */
	if (s->arp_shared && s->arpq_len)
		shard_arp_sync(s);
	if (s->now_ms >= s->arp_next_check)
		arp_timers(s);
	if (s->icmp_waiting && atomic_load_explicit(s->icmp_waiting, memory_order_relaxed))
		shard_icmp_take(s);
	if (s->pmtu_next_check && s->now_ms >= s->pmtu_next_check)
		pmtu_timers(s);
	uint64_t igmp_due = atomic_load_explicit(&s->share->igmp.next_ms, memory_order_relaxed);
	if (igmp_due && s->now_ms >= igmp_due)
		igmp_timers(s);
	share_inbox_run(s);
	unsigned before = s->ntx;
	stack_flush(s);
	/* Frames pushed into a ring that is full again are no progress a caller can add to
	 * by polling: only the NIC's send completions make room, and they interrupt. */
	unsigned sent = s->tx_ring_full ? 0 : before - s->ntx;
	if (s->poll_tail)
		poll_tail(s);
	return (int)(n + sent);
}
