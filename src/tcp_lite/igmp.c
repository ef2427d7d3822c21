/* SPDX-License-Identifier: BSD-3-Clause */
/* IGMP, the host side (RFC 2236, RFC 3376): reports when a group is first joined, repeated
 * as the RFCs ask; leaves; answers to general and group-specific queries after a random
 * delay up to the query's Max Resp; the older-version compatibility modes a v1 or v2
 * querier switches the host to. Groups have no source filters (EXCLUDE {}): a v3
 * group-and-source query is answered as a group query. The port's multicast filter
 * follows the groups joined.
 *
 * The state is the host's, one for the stacks sharing the port and address (share.c):
 * whichever stack a query lands on answers for every stack's groups, whichever polls first
 * when a report is due sends it, and one stack's leave does not end another's membership.
 * Every function runs under the share's lock (join and leave: the caller's), but for
 * igmp_member, which reads the groups the share last published (share.c). */
#include <errno.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define IGMP_ROBUSTNESS 2	      /* RFC 3376 §8.1 default */
#define IGMP_V1_ROUTER_MS 400000u     /* RFC 2236 §8.11 Version 1 Router Present Timeout */
#define IGMP_OLD_QUERIER_MS 260000u   /* RFC 3376 §8.12: 2 x 125 s + 10 s */
#define IGMP_V2_UNSOLICITED_MS 10000u /* RFC 2236 §8.10 */
#define IGMP_V3_UNSOLICITED_MS 1000u  /* RFC 3376 §8.11 */
#define IP_HLEN_RA (IP_HLEN + 4)      /* with the Router Alert option */
#define IGMP_V3_TOS 0xc0	      /* RFC 3376 §4: Internetwork Control */

static struct igmp_state *ig(const struct myrio_stack *s)
{
	return &s->share->igmp;
}

static unsigned mode(const struct myrio_stack *s)
{
	if (ig(s)->v1_until > s->now_ms)
		return 1;
	return ig(s)->v2_until > s->now_ms ? 2 : 3;
}

static uint8_t robustness(const struct myrio_stack *s)
{
	return ig(s)->robustness ? ig(s)->robustness : IGMP_ROBUSTNESS;
}

static uint64_t random_delay(struct myrio_stack *s, uint32_t max_ms)
{
	return s->now_ms + (max_ms ? stack_random(s) % max_ms : 0);
}

static struct igmp_group *find(struct myrio_stack *s, uint32_t group)
{
	for (unsigned i = 0; i < ig(s)->n; i++)
		if (ig(s)->groups[i].addr == group)
			return &ig(s)->groups[i];
	return NULL;
}

bool igmp_member(const struct myrio_stack *s, uint32_t group)
{
	return group == IGMP_ALL_HOSTS || share_host_joined(s, group);
}

/* One IGMP message to dst: TTL 1 and the Router Alert option (RFC 2236 §2, RFC 3376 §4). */
static void send_msg(struct myrio_stack *s, uint32_t dst, uint8_t tos, const uint8_t *msg,
		     uint32_t len)
{
	struct myrio_pkt *p = stack_alloc(s);
	if (!p)
		return;
	memcpy(myrio_pkt_data(p), msg, len);
	p->len = len;
	uint8_t *ip = myrio_pkt_prepend(p, IP_HLEN_RA);
	ip[0] = 0x46;
	ip[1] = tos;
	put_be16(ip + 2, (uint16_t)(IP_HLEN_RA + len));
	put_be16(ip + 4, s->ip_id++);
	put_be16(ip + 6, 0);
	ip[8] = 1;
	ip[9] = IPPROTO_IGMP_;
	put_be16(ip + 10, 0);
	put_be32(ip + 12, s->conf.ip);
	put_be32(ip + 16, dst);
	put_be32(ip + 20, 0x94040000u); /* Router Alert (RFC 2113): every router looks */
	put_be16(ip + 10, csum_finish(csum_add(0, ip, IP_HLEN_RA)));
	uint8_t *eth = eth_prepend(s, p, ETHERTYPE_IPV4);
	if (!eth) {
		myrio_pkt_free(p);
		return;
	}
	ipv4_mcast_mac(dst, eth);
	s->st.igmp_tx++;
	stack_tx(s, p);
}

/* The message a group's timer stands for, in the host's present mode. */
static void send_group(struct myrio_stack *s, struct igmp_group *g)
{
	uint8_t m[IGMP_HLEN + IGMP_V3_REC_HLEN];
	switch (mode(s)) {
	case 1:
		if (!g->leaving) { /* v1 has no leave */
			igmp_build_v2(m, IGMP_V1_REPORT, g->addr);
			send_msg(s, g->addr, 0, m, IGMP_HLEN);
		}
		break;
	case 2:
		if (!g->leaving) {
			igmp_build_v2(m, IGMP_V2_REPORT, g->addr);
			send_msg(s, g->addr, 0, m, IGMP_HLEN);
			g->last_reporter = true;
		} else if (g->last_reporter) { /* RFC 2236 §3 */
			igmp_build_v2(m, IGMP_V2_LEAVE, g->addr);
			send_msg(s, IGMP_ALL_ROUTERS, 0, m, IGMP_HLEN);
		}
		break;
	default: {
		uint8_t t = g->leaving	  ? IGMP_CHANGE_TO_INCLUDE
			    : g->changing ? IGMP_CHANGE_TO_EXCLUDE
					  : IGMP_MODE_IS_EXCLUDE;
		uint32_t len = igmp_build_v3_report(m, t, &g->addr, 1);
		send_msg(s, IGMP_V3_ROUTERS, IGMP_V3_TOS, m, len);
	}
	}
}

static void next_timer(struct myrio_stack *s)
{
	uint64_t next = ig(s)->general_ms;
	for (unsigned i = 0; i < ig(s)->n; i++) {
		uint64_t t = ig(s)->groups[i].report_ms;
		if (t && (!next || t < next))
			next = t;
	}
	ig(s)->next_ms = next;
}

static void group_free(struct myrio_stack *s, struct igmp_group *g)
{
	*g = ig(s)->groups[--ig(s)->n];
	memset(&ig(s)->groups[ig(s)->n], 0, sizeof(*g));
}

/* The port receives the groups joined, and the all-hosts group's queries while any is. */
int igmp_filter_update(struct myrio_stack *s)
{
	uint8_t macs[IGMP_MAX_GROUPS + 1][6];
	unsigned n = 0;
	for (unsigned i = 0; i < ig(s)->n; i++) {
		if (!ig(s)->groups[i].refs)
			continue;
		uint8_t m[6];
		ipv4_mcast_mac(ig(s)->groups[i].addr, m);
		bool dup = false;
		for (unsigned k = 0; k < n && !dup; k++)
			dup = !memcmp(macs[k], m, 6);
		if (!dup)
			memcpy(macs[n++], m, 6);
	}
	if (n) {
		uint8_t m[6];
		ipv4_mcast_mac(IGMP_ALL_HOSTS, m);
		bool dup = false;
		for (unsigned k = 0; k < n && !dup; k++)
			dup = !memcmp(macs[k], m, 6);
		if (!dup)
			memcpy(macs[n++], m, 6);
	}
	return myrio_port_mc_addr_list(s->port, (const uint8_t(*)[6])macs, n);
}

/* The host's last member of g is gone: its Leave (v2) or TO_IN({}) (v3) now, repeated
 * (v3, RFC 3376 §5.1) by whichever stack runs the timers when repeat, else sent once. */
static void host_leaves(struct myrio_stack *s, struct igmp_group *g, bool repeat)
{
	stack_update_clock(s);
	if (g->addr == IGMP_ALL_HOSTS) {
		group_free(s, g);
		return;
	}
	g->leaving = true;
	send_group(s, g);
	/* v3 repeats its state change; v1/v2 leave once */
	g->retrans = repeat && mode(s) == 3 ? (uint8_t)(robustness(s) - 1) : 0;
	if (g->retrans)
		g->report_ms = random_delay(s, IGMP_V3_UNSOLICITED_MS);
	else
		group_free(s, g);
	next_timer(s);
	stack_flush(s);
}

void igmp_drop(struct myrio_stack *s, uint32_t group)
{
	struct igmp_group *g = find(s, group);
	if (!g || !g->refs || --g->refs)
		return;
	/* RFC 2236 §6 / RFC 3376 §5.1: the router learns now, not at its membership timeout;
	 * the repeats are left to the siblings, this stack's timers stop with it */
	host_leaves(s, g, atomic_load_explicit(&s->share->nstacks, memory_order_relaxed) > 1);
}

int igmp_join(struct myrio_stack *s, uint32_t group)
{
	if (!ipv4_is_multicast(group))
		return -EINVAL;
	stack_update_clock(s);
	struct igmp_group *g = find(s, group);
	if (g && g->refs++)
		return 0;
	bool was_leaving = g != NULL; /* its Leave still repeating */
	if (!g) {
		if (ig(s)->n == IGMP_MAX_GROUPS) {
			log_err("tcp_lite: %u multicast groups joined already", IGMP_MAX_GROUPS);
			return -ENOBUFS;
		}
		g = &ig(s)->groups[ig(s)->n++];
		memset(g, 0, sizeof(*g));
		g->addr = group;
		g->refs = 1;
	}
	int rc = igmp_filter_update(s);
	if (rc < 0) {
		if (was_leaving)
			g->refs = 0; /* left as it was: its pending Leave goes on */
		else
			group_free(s, g);
		if (ig(s)->n) /* the others as they were */
			igmp_filter_update(s);
		return rc;
	}
	g->leaving = false;
	if (group == IGMP_ALL_HOSTS) /* never reported (RFC 2236 §6) */
		return 0;
	/* The first report now, then robustness - 1 more at random within the unsolicited
	 * report interval (RFC 3376 §5.1, RFC 2236 §3). */
	g->retrans = (uint8_t)(robustness(s) - 1);
	g->changing = true; /* a State-Change Report even when QRV = 1 sends no repeat */
	send_group(s, g);
	g->changing = g->retrans != 0;
	uint32_t ivl = mode(s) == 3 ? IGMP_V3_UNSOLICITED_MS : IGMP_V2_UNSOLICITED_MS;
	g->report_ms = g->retrans ? random_delay(s, ivl) : 0;
	next_timer(s);
	stack_flush(s);
	return 0;
}

void igmp_leave(struct myrio_stack *s, uint32_t group)
{
	struct igmp_group *g = find(s, group);
	if (!g || !g->refs || --g->refs)
		return;
	igmp_filter_update(s);
	host_leaves(s, g, true);
}

static void general_report(struct myrio_stack *s)
{
	uint32_t groups[IGMP_MAX_GROUPS];
	unsigned n = 0;
	for (unsigned i = 0; i < ig(s)->n; i++)
		if (ig(s)->groups[i].refs && ig(s)->groups[i].addr != IGMP_ALL_HOSTS)
			groups[n++] = ig(s)->groups[i].addr;
	if (!n)
		return;
	uint8_t m[IGMP_HLEN + IGMP_V3_REC_HLEN * IGMP_MAX_GROUPS];
	uint32_t len = igmp_build_v3_report(m, IGMP_MODE_IS_EXCLUDE, groups, n);
	send_msg(s, IGMP_V3_ROUTERS, IGMP_V3_TOS, m, len);
}

void igmp_timers(struct myrio_stack *s)
{
	share_lock(s);
	uint64_t due = ig(s)->next_ms; /* a sibling may have run them meanwhile */
	if (!due || s->now_ms < due) {
		share_unlock(s);
		return;
	}
	if (ig(s)->general_ms && s->now_ms >= ig(s)->general_ms) {
		ig(s)->general_ms = 0;
		general_report(s);
	}
	for (unsigned i = 0; i < ig(s)->n;) {
		struct igmp_group *g = &ig(s)->groups[i];
		if (!g->report_ms || s->now_ms < g->report_ms) {
			i++;
			continue;
		}
		g->report_ms = 0;
		send_group(s, g);
		if (g->retrans && --g->retrans)
			g->report_ms = random_delay(s, mode(s) == 3 ? IGMP_V3_UNSOLICITED_MS
								    : IGMP_V2_UNSOLICITED_MS);
		g->changing = g->changing && g->retrans;
		if (g->leaving && !g->report_ms)
			group_free(s, g); /* the slot now holds another: look at it again */
		else
			i++;
	}
	next_timer(s);
	share_unlock(s);
}

/* A group's timer runs out at a random moment within max_ms, or sooner if it already
 * would (RFC 2236 §3, RFC 3376 §5.2). */
static void schedule(struct myrio_stack *s, struct igmp_group *g, uint32_t max_ms)
{
	if (!g->refs || g->addr == IGMP_ALL_HOSTS)
		return;
	uint64_t at = random_delay(s, max_ms);
	if (!g->report_ms || at < g->report_ms)
		g->report_ms = at;
}

/* A change of compatibility mode cancels the responses and reports pending in the old one
 * (RFC 3376 §7.2.1): no v3 report goes out to a v2 querier. Leaves still due are sent, in
 * the new mode's form, so the router does not keep a group no one wants. */
static void mode_changed(struct myrio_stack *s)
{
	ig(s)->general_ms = 0;
	for (unsigned i = 0; i < ig(s)->n; i++) {
		struct igmp_group *g = &ig(s)->groups[i];
		if (!g->leaving) {
			g->report_ms = 0;
			g->retrans = 0;
			g->changing = false;
		}
	}
}

static void query(struct myrio_stack *s, const struct igmp_msg *q, uint32_t dst)
{
	s->st.igmp_queries_rx++;
	unsigned was = mode(s);
	if (q->query_version == 1)
		ig(s)->v1_until = s->now_ms + IGMP_V1_ROUTER_MS;
	else if (q->query_version == 2)
		ig(s)->v2_until = s->now_ms + IGMP_OLD_QUERIER_MS;
	else if (q->robustness)
		ig(s)->robustness = q->robustness;
	if (mode(s) != was)
		mode_changed(s);
	/* a general query goes to all hosts, a group's query to the group (RFC 3376 §4.1.12) */
	if (q->group ? dst != q->group : dst != IGMP_ALL_HOSTS) {
		s->st.drop_igmp_bad_dst++;
		return;
	}
	if (q->group) {
		struct igmp_group *g = find(s, q->group);
		if (g && (mode(s) != 3 || !ig(s)->general_ms ||
			  ig(s)->general_ms > s->now_ms + q->max_resp_ms))
			schedule(s, g, q->max_resp_ms);
	} else if (mode(s) == 3) {
		uint64_t at = random_delay(s, q->max_resp_ms);
		if (!ig(s)->general_ms || at < ig(s)->general_ms)
			ig(s)->general_ms = at;
	} else {
		for (unsigned i = 0; i < ig(s)->n; i++)
			schedule(s, &ig(s)->groups[i], q->max_resp_ms);
	}
	next_timer(s);
}

void igmp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip)
{
	share_lock(s);
	s->st.igmp_rx++;
	struct igmp_msg m;
	int rc = igmp_parse(ip->l4, ip->l4_len, &m);
	if (rc == IGMP_BAD_SHORT)
		s->st.drop_igmp_short++;
	else if (rc == IGMP_BAD_CSUM)
		s->st.drop_igmp_csum++;
	else if (rc == IGMP_BAD_LEN)
		s->st.drop_igmp_len++;
	else if (rc == IGMP_BAD_TYPE)
		s->st.drop_igmp_type++;
	else if (m.type == IGMP_QUERY)
		query(s, &m, ip->dst);
	else if ((m.type == IGMP_V1_REPORT || m.type == IGMP_V2_REPORT) && mode(s) != 3) {
		/* another member answered: ours is not needed (RFC 2236 §3). Only a Delaying
		 * Member (a report pending) gives up its flag; an Idle one whose report was
		 * the query's answer keeps it and still sends the Leave (§6). */
		struct igmp_group *g = find(s, m.group);
		if (g && g->refs && g->report_ms) {
			g->last_reporter = false;
			g->report_ms = 0;
			g->retrans = 0;
			s->st.igmp_reports_suppressed++;
			next_timer(s);
		}
	}
	share_unlock(s);
	myrio_pkt_free(p);
}
