/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethernet II: receive filtering and demultiplexing, header construction. */
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void eth_input(struct myrio_stack *s, struct myrio_pkt *p)
{
	if (p->len < ETH_HLEN) {
		s->st.drop_eth_short++;
		myrio_pkt_free(p);
		return;
	}
	const uint8_t *f = myrio_pkt_data(p);
	/* IPv4 groups' addresses (RFC 1112 §6.4) too: IP looks at the group */
	bool ip_group = f[0] == 0x01 && f[1] == 0x00 && f[2] == 0x5e && !(f[3] & 0x80);
	if (memcmp(f, s->mac, 6) != 0 && memcmp(f, bcast_mac, 6) != 0 && !ip_group) {
		s->st.drop_eth_not_for_us++;
		myrio_pkt_free(p);
		return;
	}
	switch (get_be16(f + 12)) {
	case ETHERTYPE_IPV4:
		ipv4_input(s, p);
		break;
	case ETHERTYPE_ARP:
		arp_input(s, p);
		break;
	default: /* VLAN tags, IPv6, LLDP...: not ours */
		s->st.drop_eth_type++;
		myrio_pkt_free(p);
	}
}

uint8_t *eth_prepend(struct myrio_stack *s, struct myrio_pkt *p, uint16_t type)
{
	uint8_t *h = myrio_pkt_prepend(p, ETH_HLEN);
	if (!h)
		return NULL;
	memcpy(h + 6, s->mac, 6);
	put_be16(h + 12, type);
	if (p->len < ETH_MIN_FRAME) {
		/* Zero padding keeps the receiver's whole-frame checksum (§4.6) right. */
		uint32_t pad = ETH_MIN_FRAME - p->len;
		if (myrio_pkt_tailroom(p) >= pad) {
			memset(h + p->len, 0, pad);
			p->len = ETH_MIN_FRAME;
		}
	}
	return h;
}
