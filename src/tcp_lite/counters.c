/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters: per stack and per connection, and a name/value dump for tools. */
#include <stdio.h>
#include <string.h>

#include "tcp_lite/stack.h"

#define STACK_COUNTERS                                                                             \
	F(rx_frames)                                                                               \
	F(tx_frames)                                                                               \
	F(tx_ring_full)                                                                            \
	F(tx_dropped_full)                                                                         \
	F(tx_pool_empty)                                                                           \
	F(drop_eth_short)                                                                          \
	F(drop_eth_not_for_us)                                                                     \
	F(drop_eth_type)                                                                           \
	F(arp_rx)                                                                                  \
	F(arp_requests_sent)                                                                       \
	F(arp_replies_sent)                                                                        \
	F(arp_queued)                                                                              \
	F(arp_queue_drop)                                                                          \
	F(arp_unresolved_drop)                                                                     \
	F(arp_table_full)                                                                          \
	F(ip_rx)                                                                                   \
	F(ip_tx)                                                                                   \
	F(drop_ip_short)                                                                           \
	F(drop_ip_version)                                                                         \
	F(drop_ip_hdr_csum)                                                                        \
	F(drop_ip_len)                                                                             \
	F(drop_ip_not_for_us)                                                                      \
	F(drop_ip_frag)                                                                            \
	F(drop_ip_proto)                                                                           \
	F(ip_no_route)                                                                             \
	F(ip_frags_rx)                                                                             \
	F(ip_reassembled)                                                                          \
	F(ip_reass_drops)                                                                          \
	F(ip_frags_tx)                                                                             \
	F(icmp_rx)                                                                                 \
	F(icmp_echo_replies)                                                                       \
	F(icmp_unreach_sent)                                                                       \
	F(drop_icmp)                                                                               \
	F(udp_rx)                                                                                  \
	F(udp_tx)                                                                                  \
	F(drop_udp_short)                                                                          \
	F(drop_udp_csum)                                                                           \
	F(drop_udp_no_port)                                                                        \
	F(drop_udp_queue_full)                                                                     \
	F(tcp_segs_in)                                                                             \
	F(tcp_segs_out)                                                                            \
	F(tcp_retransmits)                                                                         \
	F(tcp_fast_retransmits)                                                                    \
	F(tcp_rto_expired)                                                                         \
	F(tcp_tail_loss_probes)                                                                    \
	F(tcp_lost_retransmits)                                                                    \
	F(tcp_ooo_segs)                                                                            \
	F(tcp_dup_segs)                                                                            \
	F(tcp_resets_sent)                                                                         \
	F(tcp_resets_rcvd)                                                                         \
	F(tcp_challenge_acks)                                                                      \
	F(tcp_challenge_ack_limited)                                                               \
	F(tcp_paws_drops)                                                                          \
	F(tcp_zero_window_probes)                                                                  \
	F(tcp_csum_sw)                                                                             \
	F(tcp_csum_offload)                                                                        \
	F(tcp_tx_copy_nic_busy)                                                                    \
	F(drop_tcp_short)                                                                          \
	F(drop_tcp_csum)                                                                           \
	F(drop_tcp_bad_off)                                                                        \
	F(drop_tcp_no_conn)                                                                        \
	F(drop_tcp_syn_backlog)                                                                    \
	F(drop_tcp_table_full)                                                                     \
	F(drop_tcp_ooo_full)                                                                       \
	F(drop_tcp_out_of_window)                                                                  \
	F(drop_tcp_bad_ack)                                                                        \
	F(drop_tcp_rcv_full)                                                                       \
	F(drop_tcp_listen_overflow)                                                                \
	F(tcp_active_opens)                                                                        \
	F(tcp_passive_opens)                                                                       \
	F(tcp_conns_established)                                                                   \
	F(tcp_timeouts)                                                                            \
	F(tcp_syncookies_sent)                                                                     \
	F(tcp_syncookies_ok)                                                                       \
	F(tcp_syncookies_failed)                                                                   \
	F(tcp_orphan_resets)                                                                       \
	F(tcp_keepalive_probes)                                                                    \
	F(tcp_keepalive_timeouts)                                                                  \
	F(tcp_tso_requests)                                                                        \
	F(tcp_tso_segs)                                                                            \
	F(icmp_errors_rx)                                                                          \
	F(icmp_errors_ignored)                                                                     \
	F(icmp_unreach_limited)                                                                    \
	F(tcp_icmp_aborts)                                                                         \
	F(tcp_pmtu_lowered)                                                                        \
	F(tcp_pmtu_expired)                                                                        \
	F(udp_icmp_errors)                                                                         \
	F(arp_conflicts)                                                                           \
	F(arp_defends)                                                                             \
	F(tcp_rx_bufs_held)                                                                        \
	F(tcp_rx_coalesced)                                                                        \
	F(tcp_rx_pressure)                                                                         \
	F(tcp_ooo_pruned)                                                                          \
	F(drop_tcp_rx_pressure)                                                                    \
	F(tcp_oow_acks_limited)                                                                    \
	F(tcp_abort_on_data)                                                                       \
	F(drop_tcp_bad_src)                                                                        \
	F(igmp_rx)                                                                                 \
	F(igmp_tx)                                                                                 \
	F(igmp_queries_rx)                                                                         \
	F(igmp_reports_suppressed)                                                                 \
	F(drop_igmp_short)                                                                         \
	F(drop_igmp_csum)                                                                          \
	F(drop_igmp_len)                                                                           \
	F(drop_igmp_type)                                                                          \
	F(drop_igmp_bad_dst)                                                                       \
	F(udp_mcast_copies)                                                                        \
	F(drop_udp_mcast_copy)                                                                     \
	F(udp_handed_off)                                                                          \
	F(udp_handoff_rx)                                                                          \
	F(drop_udp_handoff)                                                                        \
	F(arp_failed)                                                                              \
	F(tcp_abort_on_close)                                                                      \
	F(arp_resolved_drop)

int stack_counters(void *arg, struct myrio_xstat_name *names, uint64_t *values, unsigned n)
{
	const struct myrio_stack *s = arg;
	unsigned i = 0;
#define F(c)                                                                                       \
	if (i < n && names)                                                                        \
		snprintf(names[i].name, sizeof(names[i].name), "%s", #c);                          \
	if (i < n && values)                                                                       \
		values[i] = s->st.c;                                                               \
	i++;
	STACK_COUNTERS
#undef F
	return (int)i;
}

void myrio_stack_stats(const struct myrio_stack *s, struct myrio_stack_stats *out)
{
	*out = s->st;
}

void myrio_tcp_conn_stats(const struct myrio_tcp_conn *c, struct myrio_tcp_conn_stats *out)
{
	*out = c->st;
	out->srtt_us = c->srtt_us;
	out->rttvar_us = c->rttvar_us;
	out->rto_ms = c->rto_ms;
	out->cwnd = c->cwnd;
	out->ssthresh = c->ssthresh;
	out->snd_wnd = c->snd_wnd;
	out->mss = c->mss;
	out->queued_segs = c->sndq_segs;
	uint32_t unacked = 0;
	for (const struct myrio_pkt *p = c->sndq; p && p != c->snd_next; p = p->next)
		unacked++;
	out->unacked_segs = unacked;
	/* What the next segment would advertise, without changing any state. */
	uint32_t buf = c->s->conf.rcv_buf;
	uint32_t space = buf > c->rcv_held ? buf - c->rcv_held : 0;
	uint32_t adv = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	if (space < adv)
		space = adv;
	out->rcv_wnd = c->state == MYRIO_TCP_CLOSED ? 0 : space;
}

int myrio_stack_stats_format(const struct myrio_stack *s, char *buf, size_t len)
{
	size_t n = 0;
	const struct myrio_stack_stats *st = &s->st;
#define F(name)                                                                                    \
	n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s %llu\n",       \
			      #name, (unsigned long long)st->name);
	STACK_COUNTERS
#undef F
	uint32_t conns = 0;
	for (const struct myrio_tcp_conn *c = s->active; c; c = c->next)
		conns++;
	n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
			      "tcp_conns_in_use %u\n", conns);
	return (int)n;
}

static void ip_str(uint32_t ip, char *out, size_t n)
{
	snprintf(out, n, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

int myrio_stack_conns_format(const struct myrio_stack *s, char *buf, size_t len)
{
	size_t n = 0;
	for (const struct myrio_tcp_conn *c = s->active; c; c = c->next) {
		struct myrio_tcp_conn_stats st;
		myrio_tcp_conn_stats(c, &st);
		char l[16], r[16];
		ip_str(c->lip, l, sizeof(l));
		ip_str(c->rip, r, sizeof(r));
		n += (size_t)snprintf(
		    buf + (n < len ? n : len), n < len ? len - n : 0,
		    "%s:%u %s:%u %s segs_in=%llu segs_out=%llu bytes_in=%llu bytes_out=%llu "
		    "retransmits=%llu fast_retransmits=%llu rto_expired=%llu ooo_segs=%llu "
		    "dup_segs=%llu drops_out_of_window=%llu sack_blocks_rcvd=%llu "
		    "zero_window_probes=%llu challenge_acks=%llu srtt_us=%u rttvar_us=%u "
		    "rto_ms=%u cwnd=%u ssthresh=%u snd_wnd=%u rcv_wnd=%u mss=%u unacked_segs=%u "
		    "queued_segs=%u\n",
		    l, c->lport, r, c->rport, myrio_tcp_state_name((enum myrio_tcp_state)c->state),
		    (unsigned long long)st.segs_in, (unsigned long long)st.segs_out,
		    (unsigned long long)st.bytes_in, (unsigned long long)st.bytes_out,
		    (unsigned long long)st.retransmits, (unsigned long long)st.fast_retransmits,
		    (unsigned long long)st.rto_expired, (unsigned long long)st.ooo_segs,
		    (unsigned long long)st.dup_segs, (unsigned long long)st.drops_out_of_window,
		    (unsigned long long)st.sack_blocks_rcvd,
		    (unsigned long long)st.zero_window_probes,
		    (unsigned long long)st.challenge_acks, st.srtt_us, st.rttvar_us, st.rto_ms,
		    st.cwnd, st.ssthresh, st.snd_wnd, st.rcv_wnd, st.mss, st.unacked_segs,
		    st.queued_segs);
	}
	return (int)n;
}
