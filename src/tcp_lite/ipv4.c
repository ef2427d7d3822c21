/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 (RFC 791): header checks, local delivery, fragments counted and dropped, output with
 * next-hop selection, and the transport checksum on both paths (offloaded where the port
 * can: §4.6 on receive, §5.5 on transmit). */
#include <errno.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define REASS_LIMIT (65535u - IP_HLEN) /* the longest IPv4 payload */

uint32_t ipv4_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

void ipv4_input(struct myrio_stack *s, struct myrio_pkt *p)
{
	s->st.ip_rx++;
	if (p->len < ETH_HLEN + IP_HLEN) {
		s->st.drop_ip_short++;
		goto drop;
	}
	uint8_t *ip = myrio_pkt_data(p) + ETH_HLEN;
	unsigned ihl = (ip[0] & 0x0f) * 4u;
	if ((ip[0] >> 4) != 4) {
		s->st.drop_ip_version++;
		goto malformed;
	}
	uint16_t tot = get_be16(ip + 2);
	if (ihl < IP_HLEN || tot < ihl || ETH_HLEN + (uint32_t)tot > p->len) {
		s->st.drop_ip_len++;
		goto malformed;
	}
	if (csum_fold(csum_add(0, ip, ihl)) != 0xffff) {
		s->st.drop_ip_hdr_csum++;
		goto malformed;
	}
	uint32_t dst = get_be32(ip + 16);
	uint32_t src = get_be32(ip + 12);
	uint32_t bcast_net = (s->conf.ip & s->conf.netmask) | ~s->conf.netmask;
	bool bcast = dst == 0xffffffffu || (s->conf.netmask && dst == bcast_net);
	bool mcast = ipv4_is_multicast(dst) && igmp_member(s, dst);
	if (dst != s->conf.ip && !bcast && !mcast) {
		s->st.drop_ip_not_for_us++;
		goto drop;
	}
	if (get_be16(ip + 6) & 0x3fff) { /* MF or a fragment offset */
		struct myrio_pkt *whole = ipv4_reass(s, p, ip, ihl, tot);
		if (whole)
			ipv4_input(s, whole); /* no fragment bits any more: one level deep */
		return;
	}
	/* RFC 1122 §3.2.1.3 (as Linux's martian sources): a source that is ours, "this
	 * network" (0/8; 0.0.0.0 only towards the limited broadcast, DHCP's case), loopback,
	 * multicast, or a broadcast (limited or our subnet's) names no host to answer. */
	/* 0.0.0.0 is also a snooping switch's querier (RFC 4541 §2.1.1) */
	bool any_ok = dst == 0xffffffffu || (mcast && ip[9] == IPPROTO_IGMP_);
	bool src_zero = (src >> 24) == 0 && (src != 0 || !any_ok);
	if (src == s->conf.ip || src_zero || (src >> 24) == 127 || (src >> 28) == 0xe ||
	    src == 0xffffffffu || (s->conf.netmask && src == bcast_net)) {
		s->st.drop_ip_not_for_us++;
		goto drop;
	}
	struct ip_rx r = {.ip = ip,
			  .l4 = ip + ihl,
			  .src = src,
			  .dst = dst,
			  .ihl = (uint16_t)ihl,
			  .l4_len = (uint16_t)(tot - ihl),
			  .bcast = bcast || mcast,
			  .mcast = mcast};
	switch (ip[9]) {
	case IPPROTO_TCP_:
		if (r.bcast)
			break;
		tcp_input(s, p, &r);
		return;
	case IPPROTO_UDP_:
		udp_input(s, p, &r);
		return;
	case IPPROTO_ICMP_:
		icmp_input(s, p, &r);
		return;
	case IPPROTO_IGMP_:
		igmp_input(s, p, &r);
		return;
	}
	s->st.drop_ip_proto++;
	goto drop;
malformed:
	/* Damaged before the NIC, or a buffer that does not hold what the NIC described: the
	 * port tells (myrio_rx_verify) and resets a misbehaving NIC. */
	myrio_rx_verify(s->port, p);
drop:
	myrio_pkt_free(p);
}

bool ipv4_l4_csum_ok(struct myrio_stack *s, const struct myrio_pkt *p, const struct ip_rx *ip,
		     uint8_t proto)
{
	uint16_t pseudo = csum_fold(ipv4_pseudo_sum(ip->src, ip->dst, proto, ip->l4_len));
	const uint8_t *f = myrio_pkt_data(p);
	/* The NIC's sum covers [14, end of frame) (§4.6): it includes the IP header, and any
	 * Ethernet padding behind the IP packet (short frames), whose sum is taken out,
	 * byte-swapped when it starts at an odd distance. The header's own sum needs no
	 * taking out: ipv4_input checked that it is 0xFFFF, the ones'-complement zero. */
	if (p->ol_flags & MYRIO_PKT_RX_CSUM_PARTIAL) {
		uint32_t end = (uint32_t)(ip->l4 - f) + ip->l4_len;
		uint16_t sum = p->rx_csum;
		if (end < p->len) {
			uint16_t pad = csum_fold(csum_add(0, f + end, p->len - end));
			if ((end - ETH_HLEN) & 1)
				pad = (uint16_t)(pad << 8 | pad >> 8);
			sum = csum16_sub(sum, pad);
		}
		if (csum16_add(sum, pseudo) == 0xffff)
			return true;
		myrio_rx_verify(s->port, p); /* as for a malformed IP header, ipv4_input */
		return false;
	}
	if (proto == IPPROTO_TCP_)
		s->st.tcp_csum_sw++;
	return csum_fold(csum_add(pseudo, ip->l4, ip->l4_len)) == 0xffff;
}

/* Transport bytes behind the IP header: p's, and for a TSO request those of its whole
 * chain (the headers describe all of it, §5.6). */
static uint32_t ip_l4_len(const struct myrio_pkt *p)
{
	uint32_t len = p->len;
	if (p->ol_flags & MYRIO_PKT_TX_TSO) {
		const struct myrio_pkt *q = p->next;
		for (unsigned k = 1; k < p->tso_npkts && q; k++, q = q->next)
			len += q->len;
	}
	return len;
}

/* Puts the IP header in front of p's l4_len bytes; NULL (p freed) without headroom. */
static uint8_t *ip_header(struct myrio_stack *s, struct myrio_pkt *p, uint8_t proto, uint32_t src,
			  uint32_t dst, uint8_t tos, uint16_t id, uint16_t frag, uint8_t ttl)
{
	uint32_t l4_len = ip_l4_len(p);
	uint8_t *ip = IP_HLEN + l4_len <= 65535 ? myrio_pkt_prepend(p, IP_HLEN) : NULL;
	if (!ip) {
		myrio_pkt_free_req(p);
		return NULL;
	}
	ip[0] = 0x45;
	ip[1] = tos;
	put_be16(ip + 2, (uint16_t)(IP_HLEN + l4_len));
	put_be16(ip + 4, id);
	put_be16(ip + 6, frag);
	ip[8] = ttl;
	ip[9] = proto;
	put_be16(ip + 10, 0);
	put_be32(ip + 12, src);
	put_be32(ip + 16, dst);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, IP_HLEN)));
	return ip;
}

/* Ethernet header, next hop (on-link, the gateway, broadcast) and out. */
static int ip_send(struct myrio_stack *s, struct myrio_pkt *p, uint32_t dst)
{
	if (!eth_prepend(s, p, ETHERTYPE_IPV4)) {
		myrio_pkt_free_req(p);
		return -ENOSPC;
	}
	s->st.ip_tx++;
	if (ipv4_is_multicast(dst)) { /* on the link, to the group's address (RFC 1112 §6.4) */
		ipv4_mcast_mac(dst, myrio_pkt_data(p));
		stack_tx(s, p);
		return 0;
	}
	uint32_t nh = dst;
	if (s->conf.netmask && (dst & s->conf.netmask) != (s->conf.ip & s->conf.netmask)) {
		if (!s->conf.gateway) {
			s->st.ip_no_route++;
			myrio_pkt_free_req(p);
			return -ENETUNREACH;
		}
		nh = s->conf.gateway;
	}
	if (dst == 0xffffffffu ||
	    (s->conf.netmask && dst == ((s->conf.ip & s->conf.netmask) | ~s->conf.netmask))) {
		memset(myrio_pkt_data(p), 0xff, 6);
		stack_tx(s, p);
		return 0;
	}
	arp_output(s, p, nh);
	return 0;
}

int ipv4_output(struct myrio_stack *s, struct myrio_pkt *p, uint8_t proto, uint32_t src,
		uint32_t dst, uint8_t tos, bool df)
{
	return ipv4_output_ttl(s, p, proto, src, dst, tos, df, IP_DEFAULT_TTL);
}

int ipv4_output_ttl(struct myrio_stack *s, struct myrio_pkt *p, uint8_t proto, uint32_t src,
		    uint32_t dst, uint8_t tos, bool df, uint8_t ttl)
{
	uint32_t l4_len = ip_l4_len(p);
	bool tso = p->ol_flags & MYRIO_PKT_TX_TSO;
	uint8_t *ip = ip_header(s, p, proto, src, dst, tos, s->ip_id++, df ? 0x4000 : 0, ttl);
	if (!ip)
		return -ENOSPC;
	if (proto == IPPROTO_TCP_ || proto == IPPROTO_UDP_) {
		unsigned field = proto == IPPROTO_TCP_ ? 16 : 6;
		uint8_t *l4 = ip + IP_HLEN;
		uint32_t pseudo = ipv4_pseudo_sum(src, dst, proto, (uint16_t)l4_len);
		if (tso) {
			/* Mode 0: the pseudo-header sum over the whole TCP length; the NIC
			 * adjusts it per segment (§5.6). One IP ID per segment. */
			put_be16(l4 + field, csum_fold(pseudo));
			p->csum_start = ETH_HLEN + IP_HLEN;
			p->tso_hlen = (uint16_t)(ETH_HLEN + IP_HLEN + (l4[12] >> 4) * 4u);
			s->ip_id = (uint16_t)(s->ip_id + p->tso_npkts - 1);
		} else if (s->caps & MYRIO_CAP_TX_CSUM) {
			/* The NIC sums [csum_start, end) and stores the inverse (§5.5). */
			put_be16(l4 + field, csum_fold(pseudo));
			p->ol_flags |= MYRIO_PKT_TX_CSUM;
			p->csum_start = ETH_HLEN + IP_HLEN;
			p->csum_field = (uint16_t)(ETH_HLEN + IP_HLEN + field);
			if (proto == IPPROTO_TCP_)
				s->st.tcp_csum_offload++;
		} else {
			put_be16(l4 + field, 0);
			uint16_t c = csum_finish(csum_add(pseudo, l4, l4_len));
			if (c == 0 && proto == IPPROTO_UDP_)
				c = 0xffff;
			put_be16(l4 + field, c);
			p->ol_flags &= (uint16_t)~MYRIO_PKT_TX_CSUM;
		}
	}
	return ip_send(s, p, dst);
}

/* n bytes from offset off of the concatenation hdr (hlen bytes) + body. */
static void copy_span(uint8_t *dst, uint32_t off, uint32_t n, const uint8_t *hdr, uint32_t hlen,
		      const uint8_t *body)
{
	if (off < hlen) {
		uint32_t k = hlen - off < n ? hlen - off : n;
		memcpy(dst, hdr + off, k);
		dst += k;
		off += k;
		n -= k;
	}
	if (n)
		memcpy(dst, body + (off - hlen), n);
}

int ipv4_output_frags(struct myrio_stack *s, uint8_t proto, uint32_t dst, const uint8_t *hdr,
		      uint32_t hlen, const uint8_t *body, uint32_t blen, uint8_t ttl)
{
	const uint32_t max = (s->mtu - IP_HLEN) & ~7u; /* offsets count in 8 bytes */
	const uint32_t len = hlen + blen;
	if (len > REASS_LIMIT)
		return -EMSGSIZE;
	/* All buffers or none: a datagram sent in part is only lost on the way. */
	uint32_t frames = (len + max - 1) / max;
	if (myrio_pool_free_count(s->pool) < frames + s->ctl_reserve) {
		s->st.tx_pool_empty++;
		return -ENOBUFS;
	}
	if (!ipv4_tx_fits(s, frames))
		return -EAGAIN;
	uint16_t id = s->ip_id++;
	uint32_t off = 0;
	do {
		uint32_t n = len - off < max ? len - off : max;
		struct myrio_pkt *p = stack_alloc(s);
		if (!p)
			return -ENOBUFS;
		copy_span(myrio_pkt_data(p), off, n, hdr, hlen, body);
		p->len = n;
		uint16_t frag = (uint16_t)((off + n < len ? 0x2000 : 0) | off / 8);
		if (!ip_header(s, p, proto, s->conf.ip, dst, 0, id, frag, ttl))
			return -ENOSPC;
		if (frag & 0x3fff)
			s->st.ip_frags_tx++;
		int rc = ip_send(s, p, dst);
		if (rc < 0)
			return rc;
		off += n;
	} while (off < len);
	return 0;
}
