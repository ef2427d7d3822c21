/* SPDX-License-Identifier: BSD-3-Clause */
/* tcp_lite internals: the stack context, connection and socket state, and the calls the
 * per-protocol files make into each other. Public API: include/myrio/tcp_lite.h. */
#ifndef MYRIO_TCP_LITE_STACK_H
#define MYRIO_TCP_LITE_STACK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "myrio/port.h"
#include "myrio/publish.h"
#include "myrio/ready_set.h"
#include "myrio/tcp_lite.h"
#include "tcp_lite/igmp.h"
#include "tcp_lite/timer_wheel.h"

#define ETH_HLEN 14
#define ETH_MIN_FRAME 60 /* without FCS; the NIC does not pad (§5.3) */
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IP_HLEN 20
#define IP_DEFAULT_TTL 64 /* unicast; multicast goes out with the socket's (1) */
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define TCP_HLEN 20
#define UDP_HLEN 8
#define TCP_MAX_HDR 60
#define HDR_ROOM (ETH_HLEN + IP_HLEN + TCP_MAX_HDR) /* fits MYRIO_PKT_HEADROOM */

#define EPH_MIN 49152u /* ephemeral ports: the IANA dynamic range (RFC 6335) */
#define EPH_COUNT 16384u
#define EPH_TABLE 256 /* counters of RFC 6056 algorithm 4 */
#define RX_BURST 32
/* Frames held for the NIC while its send ring is full: a datagram's fragments at the least
 * MTU (576: 119 of them) and an ARP request fit, so a send that finds room in the batch
 * takes the whole datagram or none of it (ipv4_output_frags). */
#define TX_BATCH 128
/* How long a sleeper waits for a full send ring before looking again, when no send
 * completion interrupt comes (a port that signals only frames). */
#define TX_RING_RECHECK_NS 1000000u

/* TCP header flags */
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

/* Sequence-space comparisons, correct across the 2^32 wrap. */
static inline bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}
static inline bool seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}
static inline bool seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}
static inline bool seq_ge(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}
static inline uint32_t seq_max(uint32_t a, uint32_t b)
{
	return seq_gt(a, b) ? a : b;
}

/* A queued TCP segment is the application's buffer itself; its pkt->user holds
 * seq (bits 0-31), payload length (32-47), header length of its last transmission
 * (48-55) and flags (56-63). The payload starts at data_off + header length, so headers
 * can be rebuilt for a retransmission. */
#define SEG_SACKED 0x01u
#define SEG_LOST 0x02u
#define SEG_RETX 0x04u /* retransmitted during the current recovery */
#define SEG_FIN 0x08u  /* carries our FIN (no payload) */
#define SEG_EVER_RETX 0x10u
static inline uint32_t seg_seq(const struct myrio_pkt *p)
{
	return (uint32_t)p->user;
}
static inline uint32_t seg_len(const struct myrio_pkt *p)
{
	return (uint32_t)(p->user >> 32) & 0xffff;
}
static inline uint32_t seg_hlen(const struct myrio_pkt *p)
{
	return (uint32_t)(p->user >> 48) & 0xff;
}
static inline uint32_t seg_flags(const struct myrio_pkt *p)
{
	return (uint32_t)(p->user >> 56);
}
/* Sequence space a segment occupies (FIN counts one). */
static inline uint32_t seg_space(const struct myrio_pkt *p)
{
	return seg_len(p) + ((seg_flags(p) & SEG_FIN) ? 1u : 0u);
}
static inline void seg_set(struct myrio_pkt *p, uint32_t seq, uint32_t len, uint32_t hlen,
			   uint32_t flags)
{
	p->user =
	    (uint64_t)seq | (uint64_t)len << 32 | (uint64_t)hlen << 48 | (uint64_t)flags << 56;
}
static inline void seg_set_flags(struct myrio_pkt *p, uint32_t flags)
{
	p->user = (p->user & 0x00ffffffffffffffULL) | (uint64_t)flags << 56;
}
static inline void seg_set_hlen(struct myrio_pkt *p, uint32_t hlen)
{
	p->user = (p->user & 0xff00ffffffffffffULL) | (uint64_t)(hlen & 0xff) << 48;
}

/* Parsed IPv4 packet handed to the transport layer. */
struct ip_rx {
	uint8_t *ip; /* IP header */
	uint8_t *l4;
	uint32_t src, dst; /* host order */
	uint16_t ihl;	   /* bytes */
	uint16_t l4_len;   /* transport bytes (IP total length - header) */
	bool bcast;	   /* broadcast or multicast: no host answers it with errors */
	bool mcast;	   /* to a group joined */
};

struct tcp_opts {
	uint16_t mss;
	uint8_t wscale;
	bool mss_ok, ws_ok, sack_ok, ts_ok;
	uint32_t tsval, tsecr;
	uint8_t nsack;
	uint32_t sack[4][2];
	bool malformed;
};

struct arp_entry;
struct arp_waiting;
struct arp_shared;
struct app_timer;

/* Owners of timer wheel entries (tw_timer.owner). */
#define TW_OWNER_CONN 0 /* struct myrio_tcp_conn's timer */
#define TW_OWNER_APP 1	/* an application timer (app_timers.c) */

/* An ICMP error about a datagram we sent, as icmp.c decoded it for the transports. */
struct icmp_err {
	uint32_t dst;	  /* the quoted datagram's destination */
	int err;	  /* -errno the error stands for */
	bool hard;	  /* RFC 1122 §4.2.3.9 (and Linux's "fatal" codes): the peer cannot be
			   * reached at all, not a transient condition on the way */
	bool frag_needed; /* RFC 1191 §4: type 3 code 4, with the next-hop MTU */
	uint16_t mtu;
};

/* Path MTU of one destination (RFC 1191 §6.3), learnt from "fragmentation needed". */
struct pmtu_entry {
	uint32_t dst; /* 0 = free */
	uint16_t mtu;
	uint64_t expires; /* ms: the estimate is raised again (forgotten) then */
};
#define PMTU_ENTRIES 64

/* An object's membership of a readiness set (ready_set.c). */
enum ready_kind { READY_TCP, READY_LISTENER, READY_UDP };
struct ready_entry {
	struct myrio_ready_set *set;		 /* NULL: in none */
	struct ready_entry *next, *prev;	 /* the set's ready list, while listed */
	struct ready_entry *all_next, *all_prev; /* every entry of the set */
	void *user;
	uint32_t interest;
	uint8_t kind;
	bool listed;
};

struct myrio_tcp_listener {
	struct myrio_stack *s;
	bool in_use;
	uint16_t port;
	unsigned backlog;
	unsigned pending;	   /* SYN_RCVD connections from this listener */
	bool full;		   /* the application's accept queue is full */
	uint64_t cookies_until_ms; /* returning ACKs may carry a SYN cookie until then */
	void *user;
	struct ready_entry ready;
	struct myrio_tcp_conn *acceptq, *acceptq_tail; /* while in a set (myrio_tcp_accept) */
};

struct myrio_tcp_conn {
	struct myrio_stack *s;
	uint32_t idx;
	uint64_t gen; /* changes every time the slot is reused */
	uint8_t state;
	bool in_use, app_owned, zombie, on_output, passive;
	int error;
	int soft_error;		 /* the last ICMP error that did not end it (RFC 1122 §4.2.3.9), */
	uint32_t soft_error_una; /* while snd_una is still what it was then */
	void *user;
	struct myrio_tcp_listener *listener; /* while SYN_RCVD */
	uint32_t lip, rip;
	uint16_t lport, rport;
	uint32_t hash_next;				/* chain in the tuple hash, or free list */
	struct myrio_tcp_conn *prev, *next;		/* connections in use (stats) */
	struct myrio_tcp_conn *reuse_prev, *reuse_next; /* s->reuse: TIME_WAIT nobody holds */
	bool reusable;					/* on that list */
	struct myrio_tcp_conn *out_next;		/* pending-output list */
	struct myrio_tcp_conn *zombie_next;
	struct myrio_tcp_conn *accept_next; /* the listener's accept queue */
	struct ready_entry ready;

	/* send */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, max_snd_wnd, snd_wl1, snd_wl2;
	uint16_t mss;		/* payload bytes per segment we send */
	uint16_t mss_unclamped; /* mss before path MTU discovery lowered it; 0 = not lowered */
	uint8_t snd_wscale, rcv_wscale;
	bool ws_ok, ts_ok, sack_ok;
	bool cookie; /* a SYN cookie's throw-away record: options go in the TSval */
	bool fin_queued, want_writable;
	bool pool_waiting; /* refused transmit buffers: queued for WRITABLE (tcp_writable.c) */
	struct myrio_tcp_conn *pool_wait_prev, *pool_wait_next;
	struct myrio_pkt *sndq, *sndq_tail, *snd_next; /* snd_next: first not yet sent */
	uint32_t sndq_segs;
	uint32_t snd_end; /* sequence number after the last queued segment */
	/* congestion control */
	uint32_t cwnd, ssthresh, bytes_acked, dupacks, recover, high_sack;
	bool in_recovery;
	bool rto_recover;     /* since an RTO, until snd_una passes recover */
	uint64_t last_snd_ms; /* data last sent (restart after idle) */
	uint64_t retx_ms;     /* last loss-recovery retransmission (lost-retransmission check) */
	/* How much of cwnd the sender used in the current window (until snd_una passes
	 * usage_seq): the largest flight, and whether cwnd held data back (RFC 7661). */
	uint32_t max_flight, usage_seq;
	bool cwnd_limited;
	/* CUBIC (RFC 9438): window at the last loss, epoch, its K and origin, Reno estimate */
	double cub_wmax, cub_k, cub_origin, cub_west;
	uint64_t cub_epoch_ms;
	bool tlp;      /* t_rtx is a tail loss probe, not the RTO */
	bool tlp_done; /* one probe per episode: until the next new ACK */
	/* RTT / RTO (RFC 6298) */
	uint32_t srtt_us, rttvar_us, rto_ms;
	uint32_t retries;
	bool rtt_timing;
	uint32_t rtt_seq;
	uint64_t rtt_start_us;
	/* timestamps (RFC 7323) */
	uint32_t ts_recent, last_ack_sent;
	uint64_t ts_recent_ms;	  /* when ts_recent was taken (RFC 7323 §5.5) */
	uint64_t last_oow_ack_ms; /* last ACK answering a segment not accepted */

	/* receive */
	uint32_t irs, rcv_nxt, rcv_adv;
	struct myrio_pkt *rcvq, *rcvq_tail;
	uint32_t rcv_held; /* in-order bytes queued or held by the application */
	struct myrio_pkt *ooo;
	uint32_t ooo_segs;
	uint32_t ooo_last_seq, ooo_last_end; /* most recent out-of-order arrival (SACK) */
	uint32_t sack_recent[4]; /* the latest out-of-order arrivals, most recent first */
	bool fin_rcvd, ack_now;
	/* The application reads no more (myrio_tcp_close, myrio_tcp_shutdown_read): new data
	 * once our FIN is out resets the connection (Linux's RCV_SHUTDOWN, tcp_input.c). */
	bool rcv_shut;
	uint32_t delack_segs;

	/* keepalive (tcp_timers.c): off while ka_idle_ms is 0 */
	uint32_t ka_idle_ms, ka_interval_ms, ka_probes, ka_sent;
	uint64_t last_rcv_ms, ka_probe_ms; /* last segment from the peer, last probe */

	/* timers, absolute ms; 0 = off. The wheel holds one entry per connection, at a
	 * deadline no later than the earliest of these (tcp_timers.c). */
	uint64_t t_rtx, t_delack, t_2msl, t_keep;
	struct tw_timer timer;
	bool persist;
	uint32_t persist_backoff;
	uint32_t persist_unanswered; /* window probes the peer left unanswered in a row */
	uint64_t persist_probe_ms;   /* the last one */

	struct myrio_tcp_conn_stats st;
};

struct myrio_udp_sock {
	struct myrio_stack *s;
	bool in_use;
	uint16_t lport, rport;
	uint32_t rip;
	int error; /* pending ICMP error of a connected socket (myrio_udp_error) */
	void *user;
	struct myrio_pkt *rxq, *rxq_tail;
	uint32_t rxq_len;
	struct ready_entry ready;
	bool shared;	   /* the port may be shared (myrio_udp_open_shared) */
	uint8_t mcast_ttl; /* of datagrams sent to a group */
	uint8_t ngroups;
	uint32_t groups[MYRIO_UDP_MAX_GROUPS];
};

struct myrio_stack {
	struct myrio_stack_conf conf;
	struct myrio_port *port;
	uint16_t queue;			/* the port's queue it polls and sends on */
	uint16_t nq;			/* the port's queues: > 1, sharded (shard.c) */
	struct arp_shared *arp_shared;	/* ARP knowledge of the stacks sharing the address */
	uint64_t arp_shared_seen;	/* its generation last looked at */
	_Atomic unsigned *icmp_waiting; /* ICMP errors other stacks passed to this one */
	int publish_handle; /* its counters in the process's segment (myrio/publish.h) */
	struct myrio_pool *pool;
	uint32_t ctl_reserve; /* buffers only the stack itself may take */
	uint8_t mac[6];
	uint32_t caps, mtu;
	uint16_t mss;
	bool tso;		 /* conf.tso and the port offers MYRIO_CAP_TSO */
	uint32_t tx_boundary;	 /* the port's (§5.4): TSO requests are sized to fit its chains */
	uint64_t now_ns, now_us; /* the clock, read at the start of the last poll */
	uint64_t now_ms;	 /* its milliseconds plus one, so that 0 can mean "off" */

	struct myrio_pkt *txb[TX_BATCH];
	unsigned ntx;
	bool tx_ring_full; /* the last flush left frames: only send completions make room */

	struct arp_entry *arp;
	uint32_t arp_mask;
	uint64_t arp_next_check;
	struct arp_waiting *arpq; /* frames waiting for resolution, oldest first */
	uint32_t arpq_len, arpq_cap;
	uint64_t arp_defended_ms; /* last announcement defending our address (RFC 5227) */

	struct myrio_tcp_conn *conns;
	uint32_t *hash;
	uint32_t hash_mask;
	uint32_t free_head;
	uint32_t nconns;
	struct myrio_tcp_conn *active;
	struct myrio_tcp_conn *reuse, *reuse_tail; /* TIME_WAIT slots to recycle, oldest first */
	struct myrio_tcp_conn *out_list;
	struct myrio_tcp_conn *zombies;
	struct myrio_tcp_conn *pool_wait_head, *pool_wait_tail; /* tcp_writable.c */
	struct timer_wheel wheel;
	int wait_fd, irq_fd, timer_fd; /* myrio_stack_fd (stack_fd.c); wait_fd -1 = none yet */
	uint64_t timer_deadline;       /* what timer_fd was set to */
	/* Work for the end of the poll, one test there when there is none: POLL_TAIL_ bits */
	uint8_t poll_tail;
	struct app_timer *timers; /* conf.max_timers records */
	uint32_t timer_free;	  /* index + 1 of the first free one, 0 = none */
	/* Work counters the tests read: connections whose timers were examined, and slots
	 * looked at to find one for a new connection. */
	uint64_t timer_visits, alloc_visits;
	struct myrio_tcp_listener *listeners;
	struct myrio_udp_sock *udps;
	unsigned udp_connected; /* of udps, under the share's lock (its udp_connected) */
	struct myrio_ready_set *ready_sets; /* alive ones, detached when the stack goes */
	struct ip_reass *reass;		    /* conf.reass_slots datagrams being reassembled */
	struct myrio_pool *reass_pool;

	uint16_t ip_id;
	uint16_t eph_next;	       /* UDP's ephemeral ports */
	uint16_t eph_table[EPH_TABLE]; /* TCP's: RFC 6056 algorithm 4 (tcp_ports.c) */
	uint64_t port_key[2];
	uint64_t secret[2];
	uint64_t cookie_key[2]; /* SYN cookies: fixed for the stack's life */
	uint64_t chack_second;
	uint32_t chack_count; /* challenge ACKs left this second (tcp_ratelimit.c) */
	uint64_t rx_walk_ms;  /* last walk of all connections for receive memory */

	struct pmtu_entry pmtu[PMTU_ENTRIES];
	uint64_t pmtu_next_check; /* earliest expiry, 0 = none */
	uint32_t icmp_spent;	  /* outgoing errors' token bucket, 0 = full (icmp.c) */
	uint64_t icmp_tokens_ms;  /* when it was last refilled */

	/* What the port's stacks share off the fast path (share.c): the host's multicast
	 * groups and IGMP state, and the datagrams siblings handed over to this stack */
	struct stack_share *share;
	struct myrio_stack *share_next; /* the share's next stack, under its lock */
	struct share_inbox *inbox;	/* datagrams siblings hand over to this stack */

	struct myrio_stack_stats st;
};

/* The peer's timestamp to echo, and when it was taken (its 24-day validity). */
static inline void tcp_ts_recent_set(struct myrio_tcp_conn *c, uint32_t tsval)
{
	c->ts_recent = tsval;
	c->ts_recent_ms = c->s->now_ms;
}

/* ipv4_reass.c: fragments in, whole datagrams out */
int ipv4_reass_init(struct myrio_stack *s);
void ipv4_reass_fini(struct myrio_stack *s);
/* Takes the fragment p (ip: its IP header of ihl bytes, tot its total length); returns the
 * whole datagram as one frame once every fragment arrived, else NULL. */
struct myrio_pkt *ipv4_reass(struct myrio_stack *s, struct myrio_pkt *p, const uint8_t *ip,
			     unsigned ihl, unsigned tot);

/* stack.c */
#define POLL_TAIL_ZOMBIES 0x1u	 /* connections to free (tcp_reap) */
#define POLL_TAIL_POOL_WAIT 0x2u /* connections wait for transmit buffers (tcp_writable.c) */
#define POLL_TAIL_ARMED 0x4u	 /* armed to sleep: the deadline may move (stack_fd.c) */
void stack_update_clock(struct myrio_stack *s);
void stack_tx(struct myrio_stack *s, struct myrio_pkt *p); /* frame ready for the NIC */
void stack_flush(struct myrio_stack *s);
bool stack_tx_room(struct myrio_stack *s); /* false while the NIC ring and batch are full */
/* Whether frames more fit in the batch now (flushing it to the NIC first if needed): a
 * caller that checks sends them all without a drop. Inline: every datagram asks. */
static inline bool stack_tx_fits(struct myrio_stack *s, unsigned frames)
{
	if (s->ntx + frames <= TX_BATCH)
		return true;
	stack_flush(s);
	return s->ntx + frames <= TX_BATCH;
}
struct myrio_pkt *stack_alloc(struct myrio_stack *s);
uint64_t stack_random(struct myrio_stack *s);

/* eth.c */
void eth_input(struct myrio_stack *s, struct myrio_pkt *p);
/* Prepends the Ethernet header (destination filled in by ARP) and pads to the minimum. */
uint8_t *eth_prepend(struct myrio_stack *s, struct myrio_pkt *p, uint16_t type);

/* arp.c */
/* Frames waiting per unresolved address: a burst of connects to one host (its SYNs) must
 * not be cut short, or the SYNs dropped wait out the initial RTO (Linux keeps 64 KiB+). */
#define ARP_QLEN 256
#define ARP_QUEUE_MAX 1024 /* stack-wide, and at most a quarter of the transmit pool */
/* shard.c: stacks of one port, one per queue */
struct arp_shared;
void shard_arp_publish(struct myrio_stack *s, uint32_t ip, const uint8_t mac[6]);
void shard_arp_sync(struct myrio_stack *s);
void shard_fini(struct myrio_stack *s);
/* stack.c: a stack on one queue of the port, sharing the host's state with sibling (or
 * NULL); a sibling sent the gratuitous ARP already */
int stack_create_on(struct myrio_stack **out, struct myrio_port *port, uint16_t queue,
		    const struct myrio_stack_conf *conf, const struct myrio_stack *sibling);
/* queue_claims.c: queue of port (of nq) taken by a new stack, the first of the port's or
 * a sibling's: -EBUSY (logged) when that queue has a stack, or a first stack finds the
 * port has some; released by myrio_stack_destroy. */
int queue_claim(const struct myrio_port *port, uint16_t queue, uint16_t nq, bool first);
void queue_release(const struct myrio_port *port, uint16_t queue);
/* Whether a connection to rip:rport from lport lands on this stack's queue. */
bool shard_port_ours(struct myrio_stack *s, uint32_t rip, uint16_t rport, uint16_t lport);
/* An ICMP error about a TCP flow another stack owns (the NIC hashes ICMP by addresses):
 * passed to it, true; false when it is this stack's. */
bool shard_icmp_pass(struct myrio_stack *s, const struct icmp_err *e, const uint8_t *th);
/* The errors passed to this stack, handled (from its poll). */
void shard_icmp_take(struct myrio_stack *s);

int arp_init(struct myrio_stack *s);
/* Resolution learned elsewhere (another stack of the address): frames waiting are sent. */
void arp_learned(struct myrio_stack *s, uint32_t ip, const uint8_t mac[6]);
/* The addresses frames are waiting for, one at a time: fn(arg, ip) for each. */
void arp_waiting_each(struct myrio_stack *s, void (*fn)(struct myrio_stack *s, uint32_t ip));
void arp_fini(struct myrio_stack *s);
void arp_input(struct myrio_stack *s, struct myrio_pkt *p);
/* Sends an IP frame to next hop nh: fills the destination MAC or queues the frame until
 * resolution (bounded). Takes ownership of p. */
void arp_output(struct myrio_stack *s, struct myrio_pkt *p, uint32_t nh);
void arp_timers(struct myrio_stack *s);

/* ipv4.c */
void ipv4_input(struct myrio_stack *s, struct myrio_pkt *p);
/* p holds the transport segment at its data (checksum field as the caller left it for
 * ICMP; filled here for TCP/UDP). Writes IP + Ethernet headers and sends. Takes
 * ownership of p. */
int ipv4_output(struct myrio_stack *s, struct myrio_pkt *p, uint8_t proto, uint32_t src,
		uint32_t dst, uint8_t tos, bool df);
/* The same with a TTL of the caller's (a multicast socket's). */
int ipv4_output_ttl(struct myrio_stack *s, struct myrio_pkt *p, uint8_t proto, uint32_t src,
		    uint32_t dst, uint8_t tos, bool df, uint8_t ttl);
/* Whether a datagram of frames frames can be sent now without a drop: they fit in the
 * batch, with a slot for the ARP request its resolution may send first (a stale entry's
 * refresh, arp_output). */
static inline bool ipv4_tx_fits(struct myrio_stack *s, unsigned frames)
{
	return stack_tx_fits(s, frames + 1);
}
/* A whole transport message, its header (hlen bytes, checksum set) and body, copied into
 * transmit buffers, in fragments when longer than the MTU allows (RFC 791 §3.2): ICMP echo
 * replies, UDP's copying send. Sending nothing: -ENOBUFS without buffers for all, -EAGAIN
 * when the NIC's ring and the batch cannot take all (ipv4_tx_fits). */
int ipv4_output_frags(struct myrio_stack *s, uint8_t proto, uint32_t dst, const uint8_t *hdr,
		      uint32_t hlen, const uint8_t *body, uint32_t blen, uint8_t ttl);
bool ipv4_l4_csum_ok(struct myrio_stack *s, const struct myrio_pkt *p, const struct ip_rx *ip,
		     uint8_t proto);
uint32_t ipv4_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);

/* icmp.c */
void icmp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip);
void icmp_send_port_unreach(struct myrio_stack *s, const struct myrio_pkt *p,
			    const struct ip_rx *ip);

/* A frame ARP could not deliver (it gave up on the next hop), as its sender hears of it:
 * what an ICMP error would quote of it. */
struct link_failure {
	uint32_t dst;
	uint8_t proto;
	uint8_t l4[8]; /* the transport header's first 8 bytes: ports, sequence number */
};
/* Notes what frame's sender is to hear after notes[0..n-1] (once per flow); returns the
 * new count. */
unsigned link_failure_note(const struct myrio_pkt *frame, struct link_failure *notes, unsigned n);
/* Tells it: as the host unreachable (code 1) Linux's ip_link_failure sends itself. */
void link_failure(struct myrio_stack *s, const struct link_failure *l);

/* pmtu.c: the per-destination path MTU cache */
#define PMTU_MIN 552			/* lower estimates are not believed (Linux's min_pmtu) */
#define PMTU_AGE_MS (10u * 60u * 1000u) /* RFC 1191 §6.3: raise again after 10 minutes */
uint32_t pmtu_get(const struct myrio_stack *s, uint32_t dst); /* 0 = nothing known */
void pmtu_set(struct myrio_stack *s, uint32_t dst, uint32_t mtu);
void pmtu_timers(struct myrio_stack *s);

/* tcp_icmp.c: ICMP errors and path MTU for TCP connections */
/* th: the quoted TCP header's first 8 bytes (ports, sequence number). */
void tcp_icmp_error(struct myrio_stack *s, const struct icmp_err *e, const uint8_t *th);
/* A new connection's MSS lowered to what is known of its path (after the SYN options). */
void tcp_pmtu_clamp(struct myrio_tcp_conn *c);
/* The path MTU estimate for dst was forgotten: connections to it get their MSS back. */
void tcp_pmtu_raise(struct myrio_stack *s, uint32_t dst);
/* The connection's soft error while it still applies (no progress since), else 0. */
int tcp_soft_error(const struct myrio_tcp_conn *c);

/* share.c: the state of the host (the port's address) that its stacks share. Every stack
 * has one; siblings (shard.c) have the same. The lock is for the slow path only: the
 * receive path reads the view, which every change under the lock replaces
 * (share_commit). */
struct share_view;
struct share_reader;
struct stack_share {
	pthread_mutex_t lock;
	struct myrio_stack *stacks; /* linked by share_next */
	_Atomic unsigned nstacks;   /* read without the lock: > 1, datagrams may be handed over */
	struct igmp_state igmp;	    /* the host's groups: every stack's sockets' (igmp.c) */
	_Atomic(struct share_view *) view; /* what receive bursts read; NULL: nothing */
	struct share_reader *readers;	   /* one per queue: its stack's bursts */
	unsigned nreaders;
	/* Connected UDP sockets of every stack, read without the lock: while a sibling has
	 * one, a datagram for a local unconnected socket may be the sibling's (udp.c). */
	_Atomic unsigned udp_connected;
};
/* The addresses a UDP datagram is delivered by. */
struct udp_addrs {
	uint32_t src, dst;
	uint16_t sport, dport;
	bool group; /* broadcast or multicast: every socket that takes it gets a copy */
	bool mcast; /* to a multicast group: sockets that joined it */
	bool connected_only; /* unicast: only a socket connected to the source takes it */
};
int share_attach(struct myrio_stack *s, const struct myrio_stack *sibling);
void share_detach(struct myrio_stack *s);
void share_lock(const struct myrio_stack *s);
void share_unlock(const struct myrio_stack *s);
/* Instead of share_unlock after a change of sockets, memberships or stacks: publishes the
 * new view, unlocks, and frees the old view once no receive burst reads it. -ENOMEM when
 * the view could not be made (none is published then). */
int share_commit(struct myrio_stack *s);
/* Around a receive burst, which reads the view: saves what a nested one replaces. */
struct share_rx {
	struct share_reader *r;
	const struct share_rx *prev; /* the burst this one runs inside, on this thread */
	bool nested;		     /* r is already held by an outer burst of this thread */
};
void share_rx_begin(struct myrio_stack *s, struct share_rx *save);
void share_rx_end(const struct share_rx *save);
/* Whether the host has a socket in group, from the view (in a receive burst). */
bool share_host_joined(const struct myrio_stack *s, uint32_t group);
/* Copies a datagram (payload data, len bytes) to every sibling with a socket that takes
 * it (one for a unicast datagram); returns how many take it, copies that could not be made
 * counted as drop_udp_handoff. In a receive burst. */
unsigned share_udp_handoff(struct myrio_stack *s, const struct udp_addrs *a, const uint8_t *data,
			   uint32_t len);
/* Whether siblings handed datagrams over that the next poll delivers. */
bool share_inbox_due(const struct myrio_stack *s);
/* Delivers them, and gives the inbox's slots back (the poll calls it). */
void share_inbox_run(struct myrio_stack *s);
/* An eventfd written on every hand-off to s, for the stack's waitable fd; -1 if none. */
int share_inbox_fd(struct myrio_stack *s);

/* igmp.c: group membership (RFC 2236, RFC 3376), the host's: the port's filter holds the
 * groups of every stack sharing the address. */
void igmp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip);
void igmp_timers(struct myrio_stack *s);
/* Whether datagrams to group are taken by the host: joined, or all-hosts. */
bool igmp_member(const struct myrio_stack *s, uint32_t group);
/* A socket's membership, under share_lock: the host's first one reports and opens the
 * port's filter to the group; the last one leaves. */
int igmp_join(struct myrio_stack *s, uint32_t group);
void igmp_leave(struct myrio_stack *s, uint32_t group);
/* A socket of a stack that goes, under share_lock: its membership ends; the host's last
 * one sends the Leave (call igmp_filter_update once after). */
void igmp_drop(struct myrio_stack *s, uint32_t group);
int igmp_filter_update(struct myrio_stack *s);

/* udp.c */
int udp_init(struct myrio_stack *s);
void udp_fini(struct myrio_stack *s);
void udp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip);
/* A datagram a sibling handed over, in p (a buffer of s's pool, its payload at the data):
 * to the sockets that take it. */
void udp_handoff_input(struct myrio_stack *s, const struct udp_addrs *a, struct myrio_pkt *p);
/* uh: the quoted UDP header's first 8 bytes. */
void udp_icmp_error(struct myrio_stack *s, const struct icmp_err *e, const uint8_t *uh);

/* tcp_conn.c: table, lookup, lifecycle */
int tcp_init(struct myrio_stack *s);
void tcp_fini(struct myrio_stack *s);
struct myrio_tcp_conn *tcp_lookup(struct myrio_stack *s, uint32_t lip, uint16_t lport, uint32_t rip,
				  uint16_t rport);
struct myrio_tcp_conn *tcp_conn_alloc(struct myrio_stack *s, uint32_t lip, uint16_t lport,
				      uint32_t rip, uint16_t rport);
struct myrio_tcp_listener *tcp_listener_find(struct myrio_stack *s, uint16_t port);
void tcp_set_state(struct myrio_tcp_conn *c, uint8_t state);
/* Connection is over (state CLOSED, queues freed); slot freed once the app let go. */
void tcp_conn_finish(struct myrio_tcp_conn *c, int error);
void tcp_reap(struct myrio_stack *s);
void tcp_conn_free(struct myrio_tcp_conn *c); /* immediately; not while listed */
/* TIME_WAIT starts (or restarts, RFC 9293 §3.10.7.4): the 2MSL timer, and the slot joins
 * the recycling list once the application let go. */
void tcp_time_wait_start(struct myrio_tcp_conn *c);
/* The window scale we offer: the smallest that lets rcv_buf be advertised (RFC 7323). */
uint8_t tcp_rcv_wscale(const struct myrio_stack *s);
uint32_t tcp_isn(struct myrio_stack *s, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport);
void tcp_mark_output(struct myrio_tcp_conn *c);
void tcp_run_output(struct myrio_stack *s);

/* app_timers.c: the application's one-shot timers on the wheel */
int app_timers_init(struct myrio_stack *s);
void app_timers_fini(struct myrio_stack *s);
void app_timer_due(struct myrio_stack *s, struct tw_timer *t);

/* ready_set.c */
void ready_list(struct ready_entry *e); /* to the back of its set's ready list */
/* The stack raised an event for an object (in a set or not): the set looks at it. */
static inline void ready_mark(struct ready_entry *e)
{
	if (e->set && !e->listed)
		ready_list(e);
}
void ready_del(struct ready_entry *e);	     /* leaves its set, if in one */
void ready_sets_fini(struct myrio_stack *s); /* empties the stack's sets; they outlive it */
uint32_t ready_listed(const struct myrio_ready_set *set); /* the tests' work counter */

/* An event for the application: its readiness set, its callback; none once it let go. */
static inline void tcp_event(struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	if (!c->app_owned)
		return;
	ready_mark(&c->ready);
	struct myrio_stack *s = c->s;
	if (s->conf.tcp_event)
		s->conf.tcp_event(s->conf.event_arg, c, ev);
}

/* tcp_accept.c: a passive open completed on listener l (NULL: found by port) */
void tcp_accepted(struct myrio_tcp_listener *l, struct myrio_tcp_conn *c);
void tcp_acceptq_drop(struct myrio_tcp_listener *l); /* aborts what was not accepted */

/* stack_fd.c */
void stack_fd_rearm(struct myrio_stack *s); /* the poll after myrio_stack_arm */
void stack_fd_close(struct myrio_stack *s);

/* tcp_writable.c: connections refused transmit buffers, told WRITABLE when they return */
void tcp_pool_wait(struct myrio_tcp_conn *c);
void tcp_pool_unwait(struct myrio_tcp_conn *c);
void tcp_pool_wake(struct myrio_stack *s); /* the poll, while anyone waits */

/* tcp_ports.c: the next candidate local port for a connection to rip:rport */
uint16_t tcp_ephemeral_port(struct myrio_stack *s, uint32_t rip, uint16_t rport);

/* tcp_syncookie.c: stateless SYN-ACKs when a listener's backlog is full */
void tcp_syncookie_send(struct myrio_stack *s, struct myrio_tcp_listener *l, uint32_t lip,
			uint16_t lport, uint32_t rip, uint16_t rport, uint32_t peer_isn,
			const struct tcp_opts *o);
/* A pure ACK for listener l that matched no connection: if it returns a valid cookie, the
 * connection it stands for (SYN_RCVD, not counted in the backlog), else NULL; *valid says
 * whether the cookie was (NULL with a valid cookie: the table is full). */
struct myrio_tcp_conn *tcp_syncookie_check(struct myrio_stack *s, struct myrio_tcp_listener *l,
					   uint32_t lip, uint16_t lport, uint32_t rip,
					   uint16_t rport, uint32_t seq, uint32_t ack,
					   const struct tcp_opts *o, bool *valid);
/* The TSval of a cookie's SYN-ACK: the clock with the peer's options in its low bits. */
uint32_t tcp_syncookie_tsval(const struct myrio_tcp_conn *c);

/* tcp_rxmem.c: the receive buffers held in connections' queues, counted in
 * st.tcp_rx_bufs_held */
/* Payloads up to this size are copied rather than held in a buffer of their own: a few
 * hundred bytes cost less to copy than a 2 KiB buffer costs to hold. */
#define TCP_RX_COPY_MAX 512u
/* Low: an eighth of the pool or less is free (checked for every segment to be held). */
static inline bool tcp_rx_pool_low(const struct myrio_pool *pool)
{
	return myrio_pool_free_count(pool) <= pool->count >> 3;
}
static inline bool tcp_rx_copy_fits(const struct myrio_pkt *into, const struct myrio_pkt *p)
{
	return p->len <= TCP_RX_COPY_MAX && p->len <= into->buf_len - into->data_off - into->len;
}
/* Copies p's payload after into's when small and it fits, and frees p; else false. */
bool tcp_rx_append_copy(struct myrio_stack *s, struct myrio_pkt *into, struct myrio_pkt *p);
void tcp_rx_free(struct myrio_stack *s, struct myrio_pkt *p); /* a held buffer */
void tcp_rx_free_chain(struct myrio_stack *s, struct myrio_pkt *p);
/* pool (the one a segment for c came from) is low: collapse and prune until it is not. */
void tcp_rx_relieve(struct myrio_tcp_conn *c, const struct myrio_pool *pool);

/* tcp_input.c */
void tcp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip);

/* tcp_output.c */
void tcp_output(struct myrio_tcp_conn *c);
int tcp_send_syn(struct myrio_tcp_conn *c); /* SYN or SYN-ACK by state */
int tcp_send_ack(struct myrio_tcp_conn *c);
int tcp_send_ctl(struct myrio_tcp_conn *c, uint8_t flags, uint32_t seq);
void tcp_send_rst_reply(struct myrio_stack *s, const struct ip_rx *ip, const uint8_t *th,
			uint32_t seg_len);
int tcp_xmit_seg(struct myrio_tcp_conn *c, struct myrio_pkt *p, bool retx);
void tcp_send_tlp(struct myrio_tcp_conn *c);
/* The persist timer ran out: data into a small window, a byte beyond a closed one; re-armed
 * while nothing is in flight. */
void tcp_window_probe(struct myrio_tcp_conn *c);
uint32_t tcp_rcv_window(struct myrio_tcp_conn *c);

/* tcp_ratelimit.c: the ACKs answering segments not accepted */
int tcp_challenge_ack(struct myrio_tcp_conn *c); /* RFC 5961 */
/* Whether the answer to a segment not accepted (header th, len sequence numbers: SYN and
 * FIN included) must be held back; counted if so. */
bool tcp_oow_limited(struct myrio_tcp_conn *c, const uint8_t *th, uint32_t len);

/* tcp_timers.c */
void tcp_timers_run(struct myrio_stack *s);
/* One of c's deadlines (t_rtx, t_delack, t_2msl, t_keep) was set to when: makes sure the
 * wheel fires for c by then. Clearing or postponing a deadline needs no call. */
void tcp_timer_arm(struct myrio_tcp_conn *c, uint64_t when);
void tcp_arm_rto(struct myrio_tcp_conn *c);
void tcp_rtt_sample(struct myrio_tcp_conn *c, uint32_t rtt_us);
/* The handshake completed rtt_us after our SYN (or SYN-ACK) first went. */
void tcp_rtt_handshake(struct myrio_tcp_conn *c, uint32_t rtt_us);

/* tcp_options.c */
void tcp_opts_parse(const uint8_t *opt, unsigned len, bool syn, struct tcp_opts *o);
unsigned tcp_opts_write_syn(struct myrio_tcp_conn *c, uint8_t *opt, bool synack);
unsigned tcp_opts_write(struct myrio_tcp_conn *c, uint8_t *opt, bool with_sack);
unsigned tcp_opts_len(struct myrio_tcp_conn *c, bool with_sack);
/* Payload bytes per segment we send, from the peer's SYN options o (ts: every segment
 * carries timestamps); between the floor (minus option bytes) and our own MSS. */
uint16_t tcp_send_mss(const struct myrio_stack *s, const struct tcp_opts *o, bool ts);

/* tcp_sack.c */
unsigned tcp_sack_blocks(struct myrio_tcp_conn *c, uint32_t blocks[][2], unsigned max);
void tcp_sack_update(struct myrio_tcp_conn *c, const struct tcp_opts *o);
bool tcp_sack_relost(struct myrio_tcp_conn *c, bool now);
uint32_t tcp_pipe(struct myrio_tcp_conn *c);
struct myrio_pkt *tcp_next_lost(struct myrio_tcp_conn *c);

/* tcp_cc.c */
void cc_init(struct myrio_tcp_conn *c);
void cc_on_ack(struct myrio_tcp_conn *c, uint32_t acked);
/* After a transmit round: flight is what is in flight now, limited whether cwnd held data
 * back. cc_on_ack grows cwnd only while the sender uses it. */
void cc_note_usage(struct myrio_tcp_conn *c, uint32_t flight, bool limited);
void cc_enter_recovery(struct myrio_tcp_conn *c);
void cc_exit_recovery(struct myrio_tcp_conn *c);
void cc_on_rto(struct myrio_tcp_conn *c);
/* Whether duplicate ACKs (or SACKed data) may start a fast retransmit now. */
bool cc_loss_signal_ok(struct myrio_tcp_conn *c);
/* Data is about to go after the connection was idle longer than an RTO. */
void cc_after_idle(struct myrio_tcp_conn *c);

/* tcp_cubic.c */
void cubic_on_loss(struct myrio_tcp_conn *c);
void cubic_on_ack(struct myrio_tcp_conn *c, uint32_t acked);

/* The stack as a source of published counters (myrio/publish.h): every stack counter. */
int stack_counters(void *arg, struct myrio_xstat_name *names, uint64_t *values, unsigned n);

#endif
