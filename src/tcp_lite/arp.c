/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP (RFC 826): resolution with frames queued while an address is unresolved (bounded
 * per address and stack-wide), a cache with timeouts and static entries, replies (to
 * probes too), gratuitous announcements, and address conflicts detected and defended
 * (RFC 5227). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/log.h"

#define ARP_DEFEND_MS 10000	/* RFC 5227 §2.4 (b): DEFEND_INTERVAL */
#define ARP_PROBE 8		/* slots searched per address (open addressing) */
#define ARP_RETRY_MS 1000	/* between requests */
#define ARP_TRIES 3		/* requests before giving up */
#define ARP_STALE_GRACE_MS 3000 /* an expired entry stays usable while re-resolving */
#define ARP_LEN 28

enum { ARP_FREE = 0, ARP_INCOMPLETE, ARP_REACHABLE, ARP_STATIC };

struct arp_entry {
	uint32_t ip;
	uint8_t mac[6];
	uint8_t state;
	uint8_t tries;
	uint16_t nq; /* frames of this address in the stack's queue */
	uint64_t expires, last_req, used;
};

struct arp_waiting {
	struct myrio_pkt *p;
	uint32_t nh;
};

int arp_init(struct myrio_stack *s)
{
	uint32_t n = 1;
	while (n < s->conf.arp_entries)
		n <<= 1;
	if (n < ARP_PROBE)
		n = ARP_PROBE;
	s->arpq_cap =
	    s->conf.tx_pool_size / 4 < ARP_QUEUE_MAX ? s->conf.tx_pool_size / 4 : ARP_QUEUE_MAX;
	s->arp = calloc(n, sizeof(*s->arp));
	s->arpq = calloc(s->arpq_cap, sizeof(*s->arpq));
	if (!s->arp || !s->arpq) {
		free(s->arp);
		free(s->arpq);
		s->arp = NULL;
		s->arpq = NULL;
		return -ENOMEM;
	}
	s->arp_mask = n - 1;
	return 0;
}

/* Takes e's frames out of the queue, in order: sent to its MAC, or dropped. What the
 * dropped ones' senders are to hear is noted in lost (when not NULL, room for e->nq):
 * returns how many notes. */
static unsigned unqueue(struct myrio_stack *s, struct arp_entry *e, bool send,
			struct link_failure *lost)
{
	unsigned nlost = 0;
	if (!e->nq)
		return 0;
	uint32_t kept = 0;
	for (uint32_t i = 0; i < s->arpq_len; i++) {
		struct arp_waiting w = s->arpq[i];
		if (w.nh != e->ip) {
			s->arpq[kept++] = w;
		} else if (send && stack_tx_room(s)) {
			memcpy(myrio_pkt_data(w.p), e->mac, 6);
			stack_tx(s, w.p);
		} else if (send) {
			/* More waited than the ring and the batch take: TCP sends its segments
			 * again, a datagram is lost, so at least say so. */
			s->st.arp_resolved_drop++;
			myrio_pkt_free_req(w.p);
		} else {
			if (lost)
				nlost = link_failure_note(w.p, lost, nlost);
			s->st.arp_unresolved_drop++;
			myrio_pkt_free_req(w.p);
		}
	}
	s->arpq_len = kept;
	e->nq = 0;
	return nlost;
}

static void drop_queue(struct myrio_stack *s, struct arp_entry *e)
{
	unqueue(s, e, false, NULL);
}

/* No answer to ARP_TRIES requests: the entry goes, its frames are dropped, and their
 * senders told as by a host unreachable (link_failure, as Linux's arp_error_report). They
 * are told last, with the entry free and the queue whole: a sender may send again from its
 * callback, which resolves afresh. */
static void give_up(struct myrio_stack *s, struct arp_entry *e)
{
	struct link_failure lost[ARP_QLEN]; /* e->nq <= ARP_QLEN */
	unsigned n = unqueue(s, e, false, lost);
	e->state = ARP_FREE;
	s->st.arp_failed++;
	for (unsigned i = 0; i < n; i++)
		link_failure(s, &lost[i]);
}

void arp_fini(struct myrio_stack *s)
{
	if (!s->arp)
		return;
	for (uint32_t i = 0; i <= s->arp_mask; i++)
		drop_queue(s, &s->arp[i]);
	free(s->arp);
	free(s->arpq);
	s->arp = NULL;
	s->arpq = NULL;
}

static uint32_t arp_hash(uint32_t ip)
{
	return (ip * 0x9E3779B1u) >> 8;
}

static struct arp_entry *arp_find(const struct myrio_stack *s, uint32_t ip)
{
	uint32_t h = arp_hash(ip);
	for (uint32_t i = 0; i < ARP_PROBE; i++) {
		struct arp_entry *e = &s->arp[(h + i) & s->arp_mask];
		if (e->state != ARP_FREE && e->ip == ip)
			return e;
	}
	return NULL;
}

/* A slot for ip: a free one, else the least recently used dynamic entry. */
static struct arp_entry *arp_slot(struct myrio_stack *s, uint32_t ip)
{
	uint32_t h = arp_hash(ip);
	struct arp_entry *victim = NULL;
	for (uint32_t i = 0; i < ARP_PROBE; i++) {
		struct arp_entry *e = &s->arp[(h + i) & s->arp_mask];
		if (e->state == ARP_FREE) {
			victim = e;
			break;
		}
		if (e->state == ARP_STATIC)
			continue;
		if (!victim || e->used < victim->used)
			victim = e;
	}
	if (!victim)
		return NULL;
	if (victim->state != ARP_FREE) {
		s->st.arp_table_full++;
		drop_queue(s, victim);
	}
	memset(victim, 0, sizeof(*victim));
	victim->ip = ip;
	victim->used = s->now_ms;
	return victim;
}

static void arp_send(struct myrio_stack *s, uint16_t op, const uint8_t *dmac, uint32_t tip,
		     const uint8_t *tmac)
{
	struct myrio_pkt *p = stack_alloc(s);
	if (!p)
		return;
	uint8_t *a = myrio_pkt_data(p);
	put_be16(a, 1); /* Ethernet */
	put_be16(a + 2, ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	put_be16(a + 6, op);
	memcpy(a + 8, s->mac, 6);
	put_be32(a + 14, s->conf.ip);
	memcpy(a + 18, tmac, 6);
	put_be32(a + 24, tip);
	p->len = ARP_LEN;
	uint8_t *eh = eth_prepend(s, p, ETHERTYPE_ARP);
	memcpy(eh, dmac, 6);
	stack_tx(s, p);
	if (op == 1)
		s->st.arp_requests_sent++;
	else
		s->st.arp_replies_sent++;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t zero_mac[6];

/* Counted in e->tries: a frame sent while the address is unresolved may ask before the
 * timer does, and ARP still gives up after ARP_TRIES requests. */
static void arp_request(struct myrio_stack *s, struct arp_entry *e)
{
	e->tries++;
	e->last_req = s->now_ms;
	arp_send(s, 1, bcast, e->ip, zero_mac);
}

int myrio_arp_announce(struct myrio_stack *s)
{
	/* Gratuitous ARP request: sender and target are our own address. */
	uint64_t before = s->st.arp_requests_sent;
	arp_send(s, 1, bcast, s->conf.ip, zero_mac);
	return s->st.arp_requests_sent > before ? 0 : -ENOBUFS;
}

static void flush_queue(struct myrio_stack *s, struct arp_entry *e)
{
	unqueue(s, e, true, NULL);
}

void arp_output(struct myrio_stack *s, struct myrio_pkt *p, uint32_t nh)
{
	struct arp_entry *e = arp_find(s, nh);
	if (e && e->state >= ARP_REACHABLE) {
		e->used = s->now_ms;
		if (e->state == ARP_STATIC || s->now_ms <= e->expires) {
			memcpy(myrio_pkt_data(p), e->mac, 6);
			stack_tx(s, p);
			return;
		}
		/* Expired: keep using it for a grace period while asking again. */
		if (s->now_ms <= e->expires + ARP_STALE_GRACE_MS) {
			if (s->now_ms >= e->last_req + ARP_RETRY_MS)
				arp_request(s, e);
			memcpy(myrio_pkt_data(p), e->mac, 6);
			stack_tx(s, p);
			return;
		}
		e->state = ARP_INCOMPLETE;
		e->tries = 0;
		e->last_req = 0;
	}
	if (!e) {
		e = arp_slot(s, nh);
		if (!e) {
			s->st.arp_queue_drop++;
			myrio_pkt_free_req(p);
			return;
		}
		e->state = ARP_INCOMPLETE;
	}
	if (e->nq < ARP_QLEN && s->arpq_len < s->arpq_cap) {
		s->arpq[s->arpq_len++] = (struct arp_waiting){p, nh};
		e->nq++;
		s->st.arp_queued++;
	} else {
		s->st.arp_queue_drop++;
		myrio_pkt_free_req(p);
	}
	if (e->tries < ARP_TRIES && (e->last_req == 0 || s->now_ms >= e->last_req + ARP_RETRY_MS))
		arp_request(s, e);
	if (s->arp_next_check == 0 || s->arp_next_check > s->now_ms + ARP_RETRY_MS)
		s->arp_next_check = s->now_ms + ARP_RETRY_MS;
}

static void reachable(struct myrio_stack *s, struct arp_entry *e, const uint8_t *mac)
{
	if (e->state == ARP_STATIC)
		return;
	memcpy(e->mac, mac, 6);
	e->state = ARP_REACHABLE;
	e->tries = 0;
	e->expires = s->now_ms + s->conf.arp_timeout_ms;
	flush_queue(s, e);
}

/* From the wire: told to the other stacks of the address too (shard.c). */
static void learn(struct myrio_stack *s, struct arp_entry *e, const uint8_t *mac)
{
	reachable(s, e, mac);
	if (s->arp_shared && e->state == ARP_REACHABLE)
		shard_arp_publish(s, e->ip, mac);
}

void arp_learned(struct myrio_stack *s, uint32_t ip, const uint8_t mac[6])
{
	struct arp_entry *e = arp_find(s, ip);
	if (e)
		reachable(s, e, mac);
}

void arp_waiting_each(struct myrio_stack *s, void (*fn)(struct myrio_stack *s, uint32_t ip))
{
	for (uint32_t i = 0; i <= s->arp_mask; i++)
		if (s->arp[i].state == ARP_INCOMPLETE && s->arp[i].nq)
			fn(s, s->arp[i].ip);
}

/* Another host (sha) sent ARP from our address: counted and reported; we keep it and
 * defend it with one announcement, unless we did so within DEFEND_INTERVAL, so that two
 * hosts configured alike do not flood the link (RFC 5227 §2.4 (b)). */
static void defend(struct myrio_stack *s, const uint8_t *sha)
{
	s->st.arp_conflicts++;
	if (s->arp_defended_ms && s->now_ms < s->arp_defended_ms + ARP_DEFEND_MS)
		return;
	log_warn("tcp_lite: address conflict: %02x:%02x:%02x:%02x:%02x:%02x claims our IPv4 "
		 "address; defending it",
		 sha[0], sha[1], sha[2], sha[3], sha[4], sha[5]);
	s->arp_defended_ms = s->now_ms ? s->now_ms : 1;
	if (myrio_arp_announce(s) == 0)
		s->st.arp_defends++;
}

void arp_input(struct myrio_stack *s, struct myrio_pkt *p)
{
	s->st.arp_rx++;
	if (p->len < ETH_HLEN + ARP_LEN) {
		s->st.drop_eth_short++;
		goto out;
	}
	const uint8_t *a = myrio_pkt_data(p) + ETH_HLEN;
	if (get_be16(a) != 1 || get_be16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4)
		goto out;
	uint16_t op = get_be16(a + 6);
	const uint8_t *sha = a + 8;
	uint32_t spa = get_be32(a + 14);
	uint32_t tpa = get_be32(a + 24);
	if ((op != 1 && op != 2) || (sha[0] & 1) || !memcmp(sha, s->mac, 6))
		goto out;
	if (spa == 0) {
		/* RFC 5227 §2.1.1 probe: someone checks whether the address is taken. If it
		 * is ours, the answer tells them (as Linux: a reply to the prober's MAC). */
		if (op == 1 && tpa == s->conf.ip)
			arp_send(s, 2, sha, 0, sha);
		goto out;
	}
	if (spa == s->conf.ip) {
		defend(s, sha);
		goto out;
	}
	/* RFC 826 merge: refresh what we already know (this also takes gratuitous ARP). */
	struct arp_entry *e = arp_find(s, spa);
	if (e)
		learn(s, e, sha);
	if (tpa == s->conf.ip) {
		if (!e && (e = arp_slot(s, spa)) != NULL)
			learn(s, e, sha);
		if (op == 1)
			arp_send(s, 2, sha, spa, sha);
	}
out:
	myrio_pkt_free(p);
}

void arp_timers(struct myrio_stack *s)
{
	uint64_t next = 0;
	for (uint32_t i = 0; i <= s->arp_mask; i++) {
		struct arp_entry *e = &s->arp[i];
		if (e->state != ARP_INCOMPLETE)
			continue;
		if (s->now_ms >= e->last_req + ARP_RETRY_MS) {
			if (e->nq == 0) { /* nothing waits for it any more */
				e->state = ARP_FREE;
				continue;
			}
			if (e->tries >= ARP_TRIES) {
				give_up(s, e);
				continue;
			}
			arp_request(s, e);
		}
		uint64_t t = e->last_req + ARP_RETRY_MS;
		if (!next || t < next)
			next = t;
	}
	s->arp_next_check = next ? next : s->now_ms + 1000;
}

int myrio_arp_add_static(struct myrio_stack *s, uint32_t ip, const uint8_t mac[6])
{
	struct arp_entry *e = arp_find(s, ip);
	if (!e)
		e = arp_slot(s, ip);
	if (!e) {
		log_err("tcp_lite: no ARP slot for a static entry; raise conf.arp_entries");
		return -ENOSPC;
	}
	memcpy(e->mac, mac, 6);
	e->state = ARP_STATIC;
	flush_queue(s, e);
	return 0;
}

int myrio_arp_lookup(const struct myrio_stack *s, uint32_t ip, uint8_t mac[6])
{
	const struct arp_entry *e = arp_find(s, ip);
	if (!e || e->state < ARP_REACHABLE)
		return -ENOENT;
	memcpy(mac, e->mac, 6);
	return 0;
}
