/* ARP (RFC 826): resolution with a bounded queue per unresolved address, a cache with
 * timeouts and static entries, replies, gratuitous announcements. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/log.h"

#define ARP_QLEN 8		/* frames waiting per unresolved address */
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
	uint8_t nq;
	uint64_t expires, last_req, used;
	struct myrio_pkt *q[ARP_QLEN];
};

int arp_init(struct myrio_stack *s)
{
	uint32_t n = 1;
	while (n < s->conf.arp_entries)
		n <<= 1;
	if (n < ARP_PROBE)
		n = ARP_PROBE;
	s->arp = calloc(n, sizeof(*s->arp));
	if (!s->arp)
		return -ENOMEM;
	s->arp_mask = n - 1;
	return 0;
}

static void drop_queue(struct myrio_stack *s, struct arp_entry *e)
{
	s->st.arp_unresolved_drop += e->nq;
	for (unsigned i = 0; i < e->nq; i++)
		myrio_pkt_free_req(e->q[i]);
	e->nq = 0;
}

void arp_fini(struct myrio_stack *s)
{
	if (!s->arp)
		return;
	for (uint32_t i = 0; i <= s->arp_mask; i++)
		drop_queue(s, &s->arp[i]);
	free(s->arp);
	s->arp = NULL;
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

static void arp_request(struct myrio_stack *s, struct arp_entry *e)
{
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
	for (unsigned i = 0; i < e->nq; i++) {
		memcpy(myrio_pkt_data(e->q[i]), e->mac, 6);
		stack_tx(s, e->q[i]);
	}
	e->nq = 0;
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
	if (e->nq < ARP_QLEN) {
		e->q[e->nq++] = p;
		s->st.arp_queued++;
	} else {
		s->st.arp_queue_drop++;
		myrio_pkt_free_req(p);
	}
	if (e->last_req == 0 || s->now_ms >= e->last_req + ARP_RETRY_MS)
		arp_request(s, e);
	if (s->arp_next_check == 0 || s->arp_next_check > s->now_ms + ARP_RETRY_MS)
		s->arp_next_check = s->now_ms + ARP_RETRY_MS;
}

static void learn(struct myrio_stack *s, struct arp_entry *e, const uint8_t *mac)
{
	if (e->state == ARP_STATIC)
		return;
	memcpy(e->mac, mac, 6);
	e->state = ARP_REACHABLE;
	e->tries = 0;
	e->expires = s->now_ms + s->conf.arp_timeout_ms;
	flush_queue(s, e);
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
	if ((op != 1 && op != 2) || spa == s->conf.ip || spa == 0 || (sha[0] & 1))
		goto out;
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
			if (++e->tries >= ARP_TRIES || e->nq == 0) {
				drop_queue(s, e);
				e->state = ARP_FREE;
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
