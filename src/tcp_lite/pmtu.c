/* SPDX-License-Identifier: BSD-3-Clause */
/* Path MTU cache (RFC 1191 §6.3): the smallest MTU "fragmentation needed" reported on the
 * way to each destination, kept 10 minutes, after which the estimate is forgotten and the
 * connections to that destination send full-size segments again (a smaller path answers
 * with a new error). A small table: it is read when an error arrives and when a connection
 * opens, never per packet. */
#include "tcp_lite/stack.h"

/* The slot of dst, or -1. */
static int pmtu_find(const struct myrio_stack *s, uint32_t dst)
{
	for (int i = 0; i < PMTU_ENTRIES; i++)
		if (s->pmtu[i].dst == dst)
			return i;
	return -1;
}

uint32_t pmtu_get(const struct myrio_stack *s, uint32_t dst)
{
	int i = dst ? pmtu_find(s, dst) : -1;
	return i < 0 ? 0 : s->pmtu[i].mtu;
}

static void pmtu_forget(struct myrio_stack *s, struct pmtu_entry *e)
{
	uint32_t dst = e->dst;
	e->dst = 0;
	s->st.tcp_pmtu_expired++;
	tcp_pmtu_raise(s, dst);
}

static void pmtu_arm(struct myrio_stack *s, uint64_t when)
{
	if (!s->pmtu_next_check || when < s->pmtu_next_check)
		s->pmtu_next_check = when;
}

void pmtu_set(struct myrio_stack *s, uint32_t dst, uint32_t mtu)
{
	int i = pmtu_find(s, dst);
	if (i >= 0 && s->pmtu[i].mtu <= mtu)
		return; /* as small already; its age runs from the first report */
	if (i < 0) {
		/* A free slot, else the one that expires first makes room. */
		i = 0;
		for (int k = 0; k < PMTU_ENTRIES; k++) {
			if (!s->pmtu[k].dst) {
				i = k;
				break;
			}
			if (s->pmtu[k].expires < s->pmtu[i].expires)
				i = k;
		}
		if (s->pmtu[i].dst)
			pmtu_forget(s, &s->pmtu[i]);
	}
	s->pmtu[i].dst = dst;
	s->pmtu[i].mtu = (uint16_t)mtu;
	s->pmtu[i].expires = s->now_ms + PMTU_AGE_MS;
	pmtu_arm(s, s->pmtu[i].expires);
}

void pmtu_timers(struct myrio_stack *s)
{
	s->pmtu_next_check = 0;
	for (int i = 0; i < PMTU_ENTRIES; i++) {
		struct pmtu_entry *e = &s->pmtu[i];
		if (!e->dst)
			continue;
		if (e->expires <= s->now_ms)
			pmtu_forget(s, e);
		else
			pmtu_arm(s, e->expires);
	}
}
