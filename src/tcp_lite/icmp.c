/* ICMP (RFC 792): echo replies (in fragments when the request came in fragments) and port
 * unreachable. */
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define ICMP_ECHO_REPLY 0
#define ICMP_UNREACH 3
#define ICMP_UNREACH_PORT 3
#define ICMP_ECHO 8

void icmp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip)
{
	s->st.icmp_rx++;
	if (ip->l4_len < 8 || csum_fold(csum_add(0, ip->l4, ip->l4_len)) != 0xffff) {
		s->st.drop_icmp++;
		goto out;
	}
	if (ip->l4[0] != ICMP_ECHO || ip->bcast)
		goto out; /* errors and replies are not for a stack without raw sockets */
	if (ip->l4_len > s->mtu - IP_HLEN) {
		/* A request that came in fragments: the reply, made in place in the
		 * reassembled buffer, goes out in fragments too. */
		uint8_t *m = ip->l4;
		m[0] = ICMP_ECHO_REPLY;
		m[1] = 0;
		put_be16(m + 2, 0);
		put_be16(m + 2, csum_finish(csum_add(0, m, ip->l4_len)));
		if (ipv4_output_frags(s, IPPROTO_ICMP_, ip->src, m, ip->l4_len, NULL, 0) == 0)
			s->st.icmp_echo_replies++;
		goto out;
	}
	struct myrio_pkt *r = stack_alloc(s);
	if (!r)
		goto out;
	uint8_t *m = myrio_pkt_data(r);
	memcpy(m, ip->l4, ip->l4_len);
	r->len = ip->l4_len;
	m[0] = ICMP_ECHO_REPLY;
	m[1] = 0;
	put_be16(m + 2, 0);
	put_be16(m + 2, csum_finish(csum_add(0, m, r->len)));
	ipv4_output(s, r, IPPROTO_ICMP_, s->conf.ip, ip->src, 0, false);
	s->st.icmp_echo_replies++;
out:
	myrio_pkt_free(p);
}

void icmp_send_port_unreach(struct myrio_stack *s, const struct myrio_pkt *p,
			    const struct ip_rx *ip)
{
	if (ip->bcast)
		return;
	struct myrio_pkt *r = stack_alloc(s);
	if (!r)
		return;
	/* The offending IP header and the first 8 bytes of its payload. */
	uint32_t quote = ip->ihl + (ip->l4_len < 8 ? ip->l4_len : 8u);
	uint8_t *m = myrio_pkt_data(r);
	memset(m, 0, 8);
	m[0] = ICMP_UNREACH;
	m[1] = ICMP_UNREACH_PORT;
	memcpy(m + 8, ip->ip, quote);
	r->len = 8 + quote;
	put_be16(m + 2, csum_finish(csum_add(0, m, r->len)));
	ipv4_output(s, r, IPPROTO_ICMP_, s->conf.ip, ip->src, 0, false);
	s->st.icmp_unreach_sent++;
}
