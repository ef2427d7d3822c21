/* SPDX-License-Identifier: BSD-3-Clause */
/* An in-memory link between two ports, for testing the stack without a NIC (think DPDK's
 * net_ring). "pair:NAME/0" and "pair:NAME/1" are the two ends of link NAME.
 *
 * Each direction is a bounded ring of packet pointers. tx_burst puts the sender's buffers
 * on it and keeps them referenced, as a NIC that has not yet read them would; the
 * receiver's rx_burst copies each frame into a buffer of its own pool (pools stay per
 * port) and hands the sender's buffer back on a completion ring, which the sender drains
 * in its next burst call. So buffers are only ever freed by their owner, and the stack
 * sees a real "NIC still holds it" window.
 *
 * Offloads are emulated in software so the stack's offload paths run: TX_CSUM (the
 * checksum is written into the receiver's copy, the sender's buffer is left untouched as
 * on a real NIC, §5.5) and RX_CSUM_PARTIAL (sum of bytes [14, len), §4.6).
 *
 * Interrupts: each end has an eventfd (myrio_port_irq_fd) that becomes readable when a frame
 * comes its way after myrio_port_irq_arm, or at once if one is already waiting then.
 *
 * Options after '?', comma separated: loss=P, dup=P, reorder=P (probabilities per frame),
 * seed=N, ring=N (entries per direction, power of 2), nocsum (no offload caps),
 * rxpool=N (receive buffers).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bus/bus.h"
#include "mem/dma.h"
#include "port/port_ops.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define PAIR_MAX_LINKS 16
#define PAIR_RX_BUF 1984 /* element of 2 KiB */

struct pair_ring {
	struct myrio_pkt **slot;
	uint32_t mask, head, tail; /* head: next to take; tail: next free */
};

struct pair_link;

struct pair_end {
	struct myrio_port port; /* first: the public handle */
	struct pair_link *link;
	int side;
	bool open;
	struct myrio_bus *bus; /* holds the pools made for this end (pair_bus_ops) */
	struct myrio_pool *rx_pool;
	uint32_t mtu;
	uint32_t caps;
	uint8_t mac[6];
	/* faults on frames this end sends */
	double loss, dup, reorder;
	uint64_t rng;
	struct myrio_pkt *held; /* reordered: goes out after the next frame */
	struct myrio_port_stats stats;
	uint64_t drops_fault, dups_fault, reorders_fault;
	int irq_fd;	/* eventfd */
	bool irq_armed; /* under the link's lock: the next frame towards us signals irq_fd */
};

struct pair_link {
	char name[32];
	pthread_mutex_t lock; /* the two ends may live on two threads */
	struct pair_end *end[2];
	struct pair_ring ring[2]; /* ring[s]: frames sent by side s */
	struct pair_ring done[2]; /* done[s]: side s's buffers the receiver has copied */
	/* copies[s]: frames side s sent before it closed, still for the peer (along next) */
	struct myrio_pkt *copies[2], *copies_tail[2];
};

/* The registry that pairs the ends: the only process-wide state. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pair_link *registry[PAIR_MAX_LINKS];

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: tiny, seeded, reproducible */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static bool chance(struct pair_end *e, double p)
{
	if (p <= 0)
		return false;
	return (double)(rng_next(&e->rng) >> 11) * (1.0 / 9007199254740992.0) < p;
}

static int ring_init(struct pair_ring *r, uint32_t n)
{
	r->slot = calloc(n, sizeof(*r->slot));
	r->mask = n - 1;
	r->head = r->tail = 0;
	return r->slot ? 0 : -ENOMEM;
}

static bool ring_put(struct pair_ring *r, struct myrio_pkt *p)
{
	if (r->tail - r->head > r->mask)
		return false;
	r->slot[r->tail++ & r->mask] = p;
	return true;
}

static struct myrio_pkt *ring_get(struct pair_ring *r)
{
	if (r->head == r->tail)
		return NULL;
	return r->slot[r->head++ & r->mask];
}

static uint32_t ring_free(const struct pair_ring *r)
{
	return r->mask + 1 - (r->tail - r->head);
}

/* A frame that outlives its sender's pools: header and bytes in memory of its own. */
static struct myrio_pkt *pkt_copy(const struct myrio_pkt *p)
{
	size_t bytes = (size_t)p->data_off + p->len;
	struct myrio_pkt *c = aligned_alloc(64, (sizeof(*c) + bytes + 63) & ~(size_t)63);
	if (!c)
		return NULL;
	memcpy(c, p, sizeof(*c) + bytes);
	c->pool = NULL;
	c->next = NULL;
	return c;
}

/* Under the link's lock: side's frame p goes to the peer as a copy, after the others. */
static void copies_put(struct pair_link *l, int side, const struct myrio_pkt *p)
{
	struct myrio_pkt *c = pkt_copy(p);
	if (!c)
		return;
	if (l->copies[side])
		l->copies_tail[side]->next = c;
	else
		l->copies[side] = c;
	l->copies_tail[side] = c;
}

static struct myrio_pkt *copies_get(struct pair_link *l, int side)
{
	struct myrio_pkt *c = l->copies[side];
	if (c)
		l->copies[side] = c->next;
	return c;
}

/* Frees this end's buffers the other side has finished with (the "send completion"). */
static void reap_completions(struct pair_end *e)
{
	struct pair_link *l = e->link;
	struct myrio_pkt *done[64];
	unsigned n;
	do {
		n = 0;
		pthread_mutex_lock(&l->lock);
		struct myrio_pkt *p;
		while (n < 64 && (p = ring_get(&l->done[e->side])) != NULL)
			done[n++] = p;
		pthread_mutex_unlock(&l->lock);
		myrio_pkt_free_bulk(done, n);
	} while (n == 64);
}

/* Under the link's lock: e is told of frames waiting for it. */
static void irq_raise(struct pair_end *e)
{
	uint64_t one = 1;
	e->irq_armed = false;
	(void)!write(e->irq_fd, &one, sizeof(one));
}

static uint16_t pair_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct pair_end *e = (struct pair_end *)port;
	struct pair_link *l = e->link;
	reap_completions(e);
	uint16_t taken = 0;
	pthread_mutex_lock(&l->lock);
	struct pair_ring *r = &l->ring[e->side];
	if (!l->end[e->side ^ 1]) {
		/* Cable unplugged at the other end: frames go nowhere (and are handed back
		 * on the next call, like any sent frame, so they stay intact until then). */
		uint16_t k = 0;
		while (k < n && ring_put(&l->done[e->side], pkts[k]))
			k++;
		pthread_mutex_unlock(&l->lock);
		return k;
	}
	for (; taken < n; taken++) {
		struct myrio_pkt *p = pkts[taken];
		/* Room for a duplicate and a held frame too, or stop here (ring full). The
		 * completion ring takes everything in flight plus frames dropped here, which
		 * go back to the sender on its next call, as a NIC reports them done. */
		if (ring_free(r) < 3 || ring_free(&l->done[e->side]) < 4 + (r->tail - r->head)) {
			e->stats.tx_ring_full++;
			break;
		}
		if (p->len < 14 || p->len > e->mtu + 18) {
			e->stats.tx_dropped_bad++;
			ring_put(&l->done[e->side], p);
			continue;
		}
		e->stats.tx_packets++;
		e->stats.tx_bytes += p->len;
		if (chance(e, e->loss)) {
			e->drops_fault++;
			ring_put(&l->done[e->side], p);
			continue;
		}
		if (chance(e, e->dup)) {
			e->dups_fault++;
			myrio_pkt_ref(p);
			ring_put(r, p);
		}
		if (!e->held && chance(e, e->reorder)) {
			e->reorders_fault++;
			e->held = p;
			continue;
		}
		ring_put(r, p);
		if (e->held) {
			ring_put(r, e->held);
			e->held = NULL;
		}
	}
	struct pair_end *pe = l->end[e->side ^ 1];
	if (pe->irq_armed && (r->head != r->tail || e->held))
		irq_raise(pe);
	pthread_mutex_unlock(&l->lock);
	return taken;
}

static uint16_t pair_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct pair_end *e = (struct pair_end *)port;
	struct pair_link *l = e->link;
	int peer = e->side ^ 1;
	myrio_port_poll_count(port);
	reap_completions(e);
	struct myrio_pkt *in[64];
	uint16_t got = 0;
	if (n > 64)
		n = 64;
	pthread_mutex_lock(&l->lock);
	struct myrio_pkt *p;
	while (got < n && (p = copies_get(l, peer)) != NULL)
		in[got++] = p;
	uint16_t copies = got; /* frames of a closed peer: freed here, not handed back */
	while (got < n && (p = ring_get(&l->ring[peer])) != NULL)
		in[got++] = p;
	/* A frame held back for reordering leaves once the link is otherwise idle. */
	struct pair_end *pe = l->end[peer];
	if (got < n && got == 0 && pe && pe->held) {
		in[got++] = pe->held;
		pe->held = NULL;
	}
	pthread_mutex_unlock(&l->lock);

	uint16_t out = 0;
	for (uint16_t i = 0; i < got; i++) {
		struct myrio_pkt *src = in[i];
		struct myrio_pkt *dst = myrio_pkt_alloc(e->rx_pool);
		if (!dst) {
			e->stats.rx_refill_failed++;
			continue;
		}
		dst->data_off = MYRIO_PKT_HEADROOM;
		dst->len = src->len;
		uint8_t *f = myrio_pkt_data(dst);
		memcpy(f, myrio_pkt_data(src), src->len);
		if (src->ol_flags & MYRIO_PKT_TX_CSUM)
			csum_tx_fill(f, dst->len, src->csum_start, src->csum_field); /* §5.5 */
		if ((e->caps & MYRIO_CAP_RX_CSUM_PARTIAL) && dst->len > 14) {
			dst->rx_csum = csum_fold(csum_add(0, f + 14, dst->len - 14));
			dst->ol_flags |= MYRIO_PKT_RX_CSUM_PARTIAL;
		}
		dst->port = 0;
		e->stats.rx_packets++;
		e->stats.rx_bytes += dst->len;
		pkts[out++] = dst;
	}
	/* Hand the sender's buffers back through its completion ring. */
	for (uint16_t i = 0; i < copies; i++)
		free(in[i]);
	pthread_mutex_lock(&l->lock);
	for (uint16_t i = copies; i < got; i++)
		ring_put(&l->done[peer], in[i]); /* sized so this cannot fail */
	pthread_mutex_unlock(&l->lock);
	return out;
}

static int pair_pool_create(struct myrio_port *port, uint32_t count, uint32_t buf_len,
			    struct myrio_pool **out)
{
	return myrio_pool_create_in(((struct pair_end *)port)->bus, count, buf_len, out);
}

/* The bus of an end, with no device behind it: it only keeps the end's pools, so that one
 * destroyed while the peer has yet to read its frames lives on until they come back (or
 * the end closes), as on a NIC's bus. Buffers need no mapping: the peer copies them. */
static int pair_dma_map(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	r->iova = (uint64_t)(uintptr_t)r->va;
	r->bus = bus;
	return 0;
}

static void pair_dma_unmap(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	r->bus = NULL;
}

static void pair_bus_close(struct myrio_bus *bus)
{
	free(bus);
}

static const struct myrio_bus_ops pair_bus_ops = {
    .dma_map = pair_dma_map,
    .dma_unmap = pair_dma_unmap,
    .close = pair_bus_close,
};

static int pair_link_state(struct myrio_port *port)
{
	struct pair_end *e = (struct pair_end *)port;
	pthread_mutex_lock(&e->link->lock);
	int up = e->link->end[e->side ^ 1] != NULL;
	pthread_mutex_unlock(&e->link->lock);
	return up ? MYRIO_LINK_UP : MYRIO_LINK_DOWN;
}

static int pair_info(struct myrio_port *port, struct myrio_port_info *info)
{
	struct pair_end *e = (struct pair_end *)port;
	snprintf(info->bus, sizeof(info->bus), "pair");
	memcpy(info->mac, e->mac, 6);
	info->mtu = e->mtu;
	info->max_frame = e->mtu + 18;
	info->tx_ring_entries = e->link->ring[0].mask + 1;
	info->rx_ring_entries = e->link->ring[0].mask + 1;
	info->caps = e->caps;
	return 0;
}

static int pair_stats(struct myrio_port *port, struct myrio_port_stats *stats)
{
	struct pair_end *e = (struct pair_end *)port;
	*stats = e->stats;
	stats->link_up = pair_link_state(port) == MYRIO_LINK_UP;
	return 0;
}

static void link_free(struct pair_link *l)
{
	for (int i = 0; i < 2; i++) {
		struct myrio_pkt *c;
		while ((c = copies_get(l, i)) != NULL)
			free(c);
		free(l->ring[i].slot);
		free(l->done[i].slot);
	}
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static void pair_close(struct myrio_port *port)
{
	struct pair_end *e = (struct pair_end *)port;
	struct pair_link *l = e->link;
	int peer = e->side ^ 1;
	/* Frames in flight towards us go back to the sender; ours in flight are freed
	 * when the peer drains or closes, or here if the peer is gone. */
	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&l->lock);
	struct myrio_pkt *p;
	while ((p = ring_get(&l->ring[peer])) != NULL)
		ring_put(&l->done[peer], p);
	bool last = l->end[peer] == NULL;
	l->end[e->side] = NULL;
	pthread_mutex_unlock(&l->lock);
	if (last) {
		for (int i = 0; i < PAIR_MAX_LINKS; i++)
			if (registry[i] == l)
				registry[i] = NULL;
	}
	pthread_mutex_unlock(&registry_lock);
	/* Our own frames still on the wire or held: the peer still gets them, as copies (our
	 * pools go with us), as a NIC sends what was posted before it stops. */
	pthread_mutex_lock(&l->lock);
	while ((p = ring_get(&l->ring[e->side])) != NULL) {
		if (!last)
			copies_put(l, e->side, p);
		ring_put(&l->done[e->side], p);
	}
	struct myrio_pkt *held = e->held; /* the peer takes it under the lock too */
	e->held = NULL;
	if (held && !last)
		copies_put(l, e->side, held);
	pthread_mutex_unlock(&l->lock);
	if (held)
		myrio_pkt_free(held);
	reap_completions(e);
	myrio_pool_destroy(e->rx_pool);
	close(e->irq_fd);
	myrio_bus_close(e->bus); /* freed with the last of its pools */
	if (last)
		link_free(l);
	free(e);
}

static int pair_irq_fd(struct myrio_port *port)
{
	return ((struct pair_end *)port)->irq_fd;
}

static int pair_irq_arm(struct myrio_port *port)
{
	struct pair_end *e = (struct pair_end *)port;
	struct pair_link *l = e->link;
	pthread_mutex_lock(&l->lock);
	struct pair_end *pe = l->end[e->side ^ 1];
	if (l->ring[e->side ^ 1].head != l->ring[e->side ^ 1].tail || (pe && pe->held))
		irq_raise(e);
	else
		e->irq_armed = true;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* A pair end filters no address: every frame arrives, each group with it. */
static int pair_mc_addr_list(struct myrio_port *port, const uint8_t (*addrs)[6], unsigned n)
{
	return 0;
}

static int pair_allmulti(struct myrio_port *port, bool on)
{
	return 0;
}

static const struct myrio_port_ops pair_ops = {
    .rx_burst = pair_rx_burst,
    .tx_burst = pair_tx_burst,
    .pool_create = pair_pool_create,
    .link = pair_link_state,
    .info = pair_info,
    .stats = pair_stats,
    .close = pair_close,
    .irq_fd = pair_irq_fd,
    .irq_arm = pair_irq_arm,
    .mc_addr_list = pair_mc_addr_list,
    .allmulti = pair_allmulti,
};

static int parse_opts(struct pair_end *e, const char *opts, uint32_t *ring, uint32_t *rxpool)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", opts);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *val = eq ? eq + 1 : "";
		if (eq)
			*eq = '\0';
		if (strcmp(tok, "loss") == 0)
			e->loss = atof(val);
		else if (strcmp(tok, "dup") == 0)
			e->dup = atof(val);
		else if (strcmp(tok, "reorder") == 0)
			e->reorder = atof(val);
		else if (strcmp(tok, "seed") == 0)
			e->rng = strtoull(val, NULL, 0) * 0x9E3779B97F4A7C15ULL + 1;
		else if (strcmp(tok, "ring") == 0)
			*ring = (uint32_t)strtoul(val, NULL, 0);
		else if (strcmp(tok, "rxpool") == 0)
			*rxpool = (uint32_t)strtoul(val, NULL, 0);
		else if (strcmp(tok, "nocsum") == 0)
			e->caps = 0;
		else {
			log_err("pair port: unknown option '%s' (use loss=P, dup=P, reorder=P, "
				"seed=N, ring=N, rxpool=N, nocsum)",
				tok);
			return -EINVAL;
		}
	}
	if (*ring < 4 || (*ring & (*ring - 1)) || *ring > (1u << 20)) {
		log_err("pair port: ring=%u must be a power of 2 between 4 and 2^20", *ring);
		return -EINVAL;
	}
	return 0;
}

int myrio_pair_port_open(const char *device, const struct myrio_port_conf *conf,
			 struct myrio_port **out)
{
	*out = NULL;
	const char *name = device + (strncmp(device, "pair:", 5) == 0 ? 5 : 0);
	const char *slash = strchr(name, '/');
	if (!slash || slash == name || (size_t)(slash - name) >= 32 ||
	    (slash[1] != '0' && slash[1] != '1') || (slash[2] != '\0' && slash[2] != '?')) {
		log_err("%s: expected pair:NAME/0 or pair:NAME/1, optionally followed by "
			"?loss=P,dup=P,reorder=P,seed=N",
			device);
		return -EINVAL;
	}
	static const struct myrio_driver_arg no_args[] = {{0}}; /* its options follow '?' */
	if (myrio_driver_args_parse(device, conf ? conf->driver_args : NULL, no_args) < 0)
		return -EINVAL;
	char lname[32];
	memcpy(lname, name, (size_t)(slash - name));
	lname[slash - name] = '\0';
	int side = slash[1] - '0';

	struct pair_end *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->side = side;
	e->caps = MYRIO_CAP_TX_CSUM | MYRIO_CAP_RX_CSUM_PARTIAL;
	e->mtu = conf && conf->mtu ? conf->mtu : 1500;
	e->rng = 0x853c49e6748fea9bULL + (uint64_t)side;
	uint32_t ring = 1024, rxpool = 4096;
	if (conf && conf->rx_pool_size)
		rxpool = conf->rx_pool_size;
	int rc = slash[2] == '?' ? parse_opts(e, slash + 3, &ring, &rxpool) : 0;
	if (rc == 0 && e->mtu + 18 + MYRIO_PKT_HEADROOM > PAIR_RX_BUF) {
		log_err("%s: mtu %u too large for the pair port (max %u)", device, e->mtu,
			PAIR_RX_BUF - 18 - MYRIO_PKT_HEADROOM);
		rc = -EINVAL;
	}
	e->caps |= MYRIO_CAP_IRQ;
	if (rc == 0 && !(e->bus = calloc(1, sizeof(*e->bus))))
		rc = -ENOMEM;
	if (rc == 0) {
		e->bus->ops = &pair_bus_ops;
		snprintf(e->bus->kind, sizeof(e->bus->kind), "pair");
		snprintf(e->bus->name, sizeof(e->bus->name), "%s", device);
		rc = myrio_pool_create_in(e->bus, rxpool, PAIR_RX_BUF, &e->rx_pool);
	}
	if (rc == 0) {
		e->irq_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (e->irq_fd < 0) {
			rc = -errno;
			myrio_pool_destroy(e->rx_pool);
		}
	}
	if (rc < 0) {
		if (e->bus)
			myrio_bus_close(e->bus);
		free(e);
		return rc;
	}
	/* Locally administered MAC from the link name and the side. */
	uint32_t h = 2166136261u;
	for (const char *c = lname; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	uint8_t mac[6] = {
	    0x02, 0x00, (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h, (uint8_t)(side + 1)};
	memcpy(e->mac, mac, 6);

	pthread_mutex_lock(&registry_lock);
	struct pair_link *l = NULL;
	int freeslot = -1;
	for (int i = 0; i < PAIR_MAX_LINKS; i++) {
		if (registry[i] && strcmp(registry[i]->name, lname) == 0)
			l = registry[i];
		else if (!registry[i] && freeslot < 0)
			freeslot = i;
	}
	rc = 0;
	if (!l) {
		if (freeslot < 0) {
			log_err("%s: too many pair links open (max %d)", device, PAIR_MAX_LINKS);
			rc = -ENOSPC;
		} else if (!(l = calloc(1, sizeof(*l)))) {
			rc = -ENOMEM;
		} else {
			snprintf(l->name, sizeof(l->name), "%s", lname);
			pthread_mutex_init(&l->lock, NULL);
			/* completion rings hold everything in flight plus duplicates */
			if (ring_init(&l->ring[0], ring) || ring_init(&l->ring[1], ring) ||
			    ring_init(&l->done[0], ring * 2) || ring_init(&l->done[1], ring * 2)) {
				link_free(l);
				l = NULL;
				rc = -ENOMEM;
			} else {
				registry[freeslot] = l;
			}
		}
	} else if (l->end[side]) {
		log_err("%s: this end of link '%s' is already open", device, lname);
		rc = -EBUSY;
	}
	if (rc == 0) {
		e->link = l;
		l->end[side] = e;
	}
	pthread_mutex_unlock(&registry_lock);
	if (rc < 0) {
		myrio_pool_destroy(e->rx_pool);
		close(e->irq_fd);
		myrio_bus_close(e->bus);
		free(e);
		return rc;
	}
	e->port.ops = &pair_ops;
	snprintf(e->port.device, sizeof(e->port.device), "%s", device);
	*out = &e->port;
	return 0;
}
