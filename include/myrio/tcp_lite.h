/* SPDX-License-Identifier: BSD-3-Clause */
/* tcp_lite: a small zero-copy, polled Ethernet/ARP/IPv4/ICMP/UDP/TCP stack on one port.
 *
 * Model of use
 *   - One stack per port (per core). No threads, no locks: everything happens inside
 *     myrio_stack_poll, which the application calls in its own loop. poll receives a burst
 *     of frames, runs the timers that are due, and flushes queued transmits to the NIC.
 *   - Events (accepted, connected, readable, writable, closed, error) are delivered by the
 *     callbacks given in the configuration, from inside poll (and from the calls that send).
 *   - All memory is allocated by myrio_stack_create (connection table, ARP table, socket
 *     tables, transmit buffer pool); nothing is allocated on the data path. When a table is
 *     full the operation fails with -ENOBUFS / -EAGAIN and a counter says so.
 *
 * Zero-copy transmit
 *   p = myrio_stack_pkt_alloc(s);              payload starts at myrio_pkt_data(p)
 *   memcpy(myrio_pkt_data(p), data, n); p->len = n;     (n <= myrio_tcp_mss(c))
 *   myrio_tcp_send(c, p);                       the stack owns p from here on
 * The stack writes the TCP/IP/Ethernet headers into the headroom in front of the payload
 * and hands the same buffer to the NIC. TCP keeps it (a reference) until the peer
 * acknowledges it; UDP lets go of it when the NIC is done with it.
 *
 * Zero-copy receive
 *   while ((p = myrio_tcp_recv(c)) != NULL) { use(myrio_pkt_data(p), p->len);
 *                                            myrio_tcp_release(c, p); }
 * recv hands out the receive buffers the NIC wrote, trimmed to their in-order payload. The
 * advertised receive window shrinks by every byte the application holds and grows again
 * when it releases them, so a slow reader throttles the sender instead of draining the
 * port's receive pool.
 *
 * Copying helpers (myrio_tcp_write, myrio_tcp_read) exist for convenience.
 *
 * Addresses and ports in this API are in host byte order.
 * Functions return 0 (or a count) on success and a negative errno on failure.
 */
#ifndef MYRIO_TCP_LITE_H
#define MYRIO_TCP_LITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "myrio/pkt.h"
#include "myrio/port.h"

#ifdef __cplusplus
extern "C" {
#endif

struct myrio_stack;
struct myrio_tcp_conn;
struct myrio_tcp_listener;
struct myrio_udp_sock;

enum myrio_tcp_event {
	MYRIO_TCP_EV_ACCEPTED = 1, /* passive open completed: c is new, its user = listener's */
	MYRIO_TCP_EV_CONNECTED,	   /* active open completed */
	MYRIO_TCP_EV_READABLE,	   /* in-order data arrived, or the peer closed its side */
	MYRIO_TCP_EV_WRITABLE,	   /* the send queue, or the transmit pool, has room again
				    * after a send was refused or a readiness set's wait
				    * with OUT interest found it full (ready_set.h) */
	MYRIO_TCP_EV_CLOSED,	   /* orderly end of both directions; call myrio_tcp_close */
	MYRIO_TCP_EV_ERROR,	   /* reset, refused or timed out (myrio_tcp_error); call
				    * myrio_tcp_close */
};

typedef void (*myrio_tcp_event_fn)(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev);
typedef void (*myrio_udp_event_fn)(void *arg, struct myrio_udp_sock *u); /* readable or
									  * error */
typedef uint64_t (*myrio_clock_fn)(void *arg);				 /* monotonic nanoseconds */

enum myrio_tcp_cc {
	MYRIO_TCP_CC_NEWRENO = 0, /* RFC 5681, RFC 6582 */
	MYRIO_TCP_CC_CUBIC,	  /* RFC 9438 */
};

struct myrio_stack_conf {
	uint32_t ip, netmask, gateway; /* host byte order; gateway 0 = on-link only */
	uint16_t mss;		       /* 0 = port MTU - 40 */

	/* Table sizes, all preallocated at create time. */
	uint32_t max_tcp_conns;	 /* connections incl. half-open and TIME_WAIT (256) */
	uint32_t max_listeners;	 /* (8) */
	uint32_t max_udp_socks;	 /* (16) */
	uint32_t arp_entries;	 /* (64) */
	uint32_t tx_pool_size;	 /* transmit buffers shared by all connections (4096) */
	uint32_t snd_queue_segs; /* per connection: segments queued or unacknowledged (512) */
	uint32_t rcv_buf;	 /* per connection receive window in bytes (256 KiB) */
	uint32_t ooo_max_segs;	 /* per connection out-of-order segments held (256) */
	uint32_t udp_rx_queue;	 /* per socket datagrams waiting to be read (256) */
	uint32_t reass_slots;	 /* IPv4 datagrams reassembled at once, 64 KiB each; 0 = fragments
				  * dropped (4) */

	/* Behaviour. */
	uint32_t arp_timeout_ms;      /* entry lifetime before re-resolution (60000) */
	uint32_t delayed_ack_ms;      /* 0 = acknowledge every segment at once (40) */
	uint32_t time_wait_ms;	      /* TIME_WAIT duration, 2*MSL (60000) */
	uint32_t reass_timeout_ms;    /* a datagram's fragments must all arrive within (30000) */
	uint32_t rto_min_ms;	      /* (200) */
	uint32_t rto_initial_ms;      /* RFC 6298 initial RTO (1000) */
	uint32_t rto_max_ms;	      /* (60000) */
	uint32_t max_retries;	      /* retransmissions before ETIMEDOUT (12) */
	uint32_t syn_retries;	      /* (6) */
	uint32_t challenge_ack_limit; /* RFC 5961 challenge ACKs per second per stack, on
				       * average: drawn at random each second (1000) */
	bool nagle;		      /* (false) */
	bool sack;		      /* offer/accept SACK (true) */
	bool timestamps;	      /* offer/accept RFC 7323 timestamps (true) */
	bool window_scale;	      /* (true) */
	bool syncookies_always;	      /* SYN cookies even below the backlog (false; tests) */
	bool tso;		      /* send several segments per NIC request when the port
				       * offers MYRIO_CAP_TSO (true) */
	uint64_t seed;		      /* ISN secret and ephemeral ports; 0 = getrandom() */
	enum myrio_tcp_cc cc;	      /* congestion control (NewReno) */

	myrio_clock_fn clock; /* NULL = CLOCK_MONOTONIC; tests pass a fake clock */
	void *clock_arg;

	myrio_tcp_event_fn tcp_event;
	myrio_udp_event_fn udp_event;
	void *event_arg;

	uint32_t max_timers; /* application timers pending at once (64) */
};

/* Defaults (throughput profile: delayed ACKs on, Nagle off). */
void myrio_stack_conf_init(struct myrio_stack_conf *conf);
/* Latency profile: no delayed ACKs; apply after myrio_stack_conf_init. */
void myrio_stack_conf_latency(struct myrio_stack_conf *conf);

/* Binds a stack to an open port of one queue (-EINVAL on a port of several: make one
 * stack per queue below; -EBUSY when the port has a stack already). The port stays the
 * caller's; close it after destroy. */
int myrio_stack_create(struct myrio_stack **out, struct myrio_port *port,
		       const struct myrio_stack_conf *conf);
/* One stack per queue of a port of several (myrio_port_open_queues), each polled by its
 * own thread: the stacks share the port, the address (conf.ip) and what ARP learns, and
 * nothing on the data path. Create the first with sibling NULL, the others with any
 * stack already made for the port. Received packets reach the stack of the queue their RSS
 * hash names; an active open on a stack picks a source port that brings its answers back
 * to that stack, and a listener is needed on every stack (each accepts the connections that
 * land on it). Refused, with a log line: a queue that has a stack (-EBUSY), sibling NULL
 * on a port that has stacks (-EBUSY), a sibling of another port or address (-EINVAL).
 * Siblings may be destroyed in any order, the first included; a queue let go takes a new
 * sibling of the stacks left. Destroy every stack before closing the port. */
int myrio_stack_create_queue(struct myrio_stack **out, struct myrio_port *port, uint16_t queue,
			     const struct myrio_stack_conf *conf, struct myrio_stack *sibling);
/* The queue a stack polls (0 for myrio_stack_create's). */
uint16_t myrio_stack_queue(const struct myrio_stack *s);
/* Aborts every connection (RST), frees everything. Buffers the application still holds
 * must have been released before. */
void myrio_stack_destroy(struct myrio_stack *s);

/* Receives a burst, runs due timers, flushes transmits. Returns the number of frames
 * received plus sent (0 = idle), never blocks. Frames sent into a send ring that is full
 * again do not count: polling more cannot move the rest before the NIC's send
 * completions, which interrupt a sleeper (see Sleeping). */
int myrio_stack_poll(struct myrio_stack *s);

/* ---- Time ----
 * The stack's clock is conf.clock (CLOCK_MONOTONIC by default), in nanoseconds. The stack
 * reads it once at the start of every myrio_stack_poll (and in myrio_stack_create) and
 * uses that reading for everything the poll does: now_ns and now_ms below return it, so
 * they stand still between polls. Protocol timers and application timers run on a wheel
 * of 1 ms ticks: one due at clock time T runs in the first poll whose reading is at or
 * past T rounded up to the millisecond (never early, at most 1 ms late, plus however
 * long the application leaves between polls). */
uint64_t myrio_stack_now_ns(const struct myrio_stack *s);   /* the last poll's reading */
uint64_t myrio_stack_now_ms(const struct myrio_stack *s);   /* the same, in whole ms */
uint64_t myrio_stack_clock_ns(const struct myrio_stack *s); /* the clock read now */

/* Application timers: fn(arg, s) runs once, from inside myrio_stack_poll, delay_ns after
 * the call (counted from the clock read now), unless cancelled before. *id (may be NULL)
 * names it for myrio_timer_cancel. -ENOBUFS when conf.max_timers are pending. fn may
 * start and cancel timers. */
typedef void (*myrio_timer_fn)(void *arg, struct myrio_stack *s);
int myrio_timer_start(struct myrio_stack *s, uint64_t delay_ns, myrio_timer_fn fn, void *arg,
		      uint64_t *id);
/* 0, or -ENOENT when that timer already ran or was cancelled (ids are not reused). */
int myrio_timer_cancel(struct myrio_stack *s, uint64_t id);

/* When the stack next has work without a frame arriving: the clock time (ns) of its
 * earliest timer (protocol or application), a time already past if transmits or other work
 * wait for the next poll, UINT64_MAX if nothing is scheduled. Transmits held by a full send
 * ring wait for the NIC's send completion interrupt instead: at most 1 ms. Valid until the
 * next call into the stack. */
uint64_t myrio_stack_next_deadline(const struct myrio_stack *s);

/* ---- Sleeping ----
 * One file descriptor per stack for any event loop (epoll, poll, libevent...): it becomes
 * readable when the stack has work, a frame from the NIC (its interrupt) or a due timer
 * (a timerfd set to myrio_stack_next_deadline). The port must give an interrupt eventfd
 * (open it with myrio_port_conf.irq: "sim:", "simd:", vfio; "pair:" always has one).
 * Returns the fd (the same every call, closed by myrio_stack_destroy) or a negative errno
 * (-ENOTSUP without interrupts).
 *
 * The sleep protocol, in this order:
 *   1. myrio_stack_arm(s): reads the fd (clears what woke it), asks the NIC to interrupt
 *      on the next frame, and sets the timer to the next deadline;
 *   2. myrio_stack_poll(s) once more: a frame that arrived before the arm raised no
 *      interrupt, so look again; if it did any work (> 0), go back to polling;
 *   3. sleep until the fd is readable (epoll_wait on it, or on an epoll set holding it).
 * Then poll until idle and start again. The poll in step 2 moves the timer earlier if it
 * started one; calls into the stack made outside a poll (a send, myrio_timer_start) after
 * step 1 need the protocol again. Spinning a while before arming saves the wake-up cost
 * when traffic is steady. */
int myrio_stack_fd(struct myrio_stack *s);
int myrio_stack_arm(struct myrio_stack *s); /* step 1; -EBADF before myrio_stack_fd */

/* A transmit buffer with headroom for all headers: payload goes at myrio_pkt_data(p),
 * p->len = 0. NULL when the pool is down to the sixteenth the stack keeps for its own
 * ACKs and control segments (counted in tx_pool_empty). Give it back with
 * myrio_pkt_free if unused. */
struct myrio_pkt *myrio_stack_pkt_alloc(struct myrio_stack *s);
/* Bytes of payload that fit in such a buffer. */
uint32_t myrio_stack_pkt_room(const struct myrio_stack *s);

/* ARP. */
int myrio_arp_add_static(struct myrio_stack *s, uint32_t ip, const uint8_t mac[6]);
int myrio_arp_announce(struct myrio_stack *s); /* gratuitous ARP (sent at create too) */
int myrio_arp_lookup(const struct myrio_stack *s, uint32_t ip, uint8_t mac[6]); /* -ENOENT */

/* ---- TCP ---- */

enum myrio_tcp_state {
	MYRIO_TCP_CLOSED = 0,
	MYRIO_TCP_LISTEN,
	MYRIO_TCP_SYN_SENT,
	MYRIO_TCP_SYN_RCVD,
	MYRIO_TCP_ESTABLISHED,
	MYRIO_TCP_FIN_WAIT_1,
	MYRIO_TCP_FIN_WAIT_2,
	MYRIO_TCP_CLOSE_WAIT,
	MYRIO_TCP_CLOSING,
	MYRIO_TCP_LAST_ACK,
	MYRIO_TCP_TIME_WAIT,
};

/* Passive open: at most backlog half-open connections wait for their final ACK; more
 * SYNs are dropped (counted), so a SYN flood cannot use more than the table. Accepted
 * connections are announced with MYRIO_TCP_EV_ACCEPTED and start with the given user. */
int myrio_tcp_listen(struct myrio_stack *s, uint16_t port, unsigned backlog, void *user,
		     struct myrio_tcp_listener **out);
void myrio_tcp_listener_close(struct myrio_tcp_listener *l);
/* The application's accept queue is full (or has room again). While full, as Linux with
 * tcp_abort_on_overflow=0, new SYNs and the final ACKs of half-open connections are
 * dropped (counted in drop_tcp_listen_overflow): the SYN_RCVD ones keep retransmitting
 * their SYN-ACK and complete once the application accepts; nothing is reset. */
void myrio_tcp_listener_set_full(struct myrio_tcp_listener *l, bool full);

/* Active open; MYRIO_TCP_EV_CONNECTED or MYRIO_TCP_EV_ERROR follows. */
int myrio_tcp_connect(struct myrio_stack *s, uint32_t ip, uint16_t port, void *user,
		      struct myrio_tcp_conn **out);

/* Zero-copy send of one segment's worth of payload (p->len <= myrio_tcp_mss(c), from
 * myrio_stack_pkt_alloc or any buffer with MYRIO_PKT_HEADROOM in front). On success the
 * stack owns p. -EAGAIN when the send queue is full (MYRIO_TCP_EV_WRITABLE follows),
 * -EMSGSIZE, -ENOSPC (no headroom, or the payload runs past the buffer), -EPIPE after
 * shutdown, -ENOTCONN. The peer sets the MSS: bound copies by myrio_stack_pkt_room too. */
int myrio_tcp_send(struct myrio_tcp_conn *c, struct myrio_pkt *p);
/* A transmit buffer for a segment of c (as myrio_stack_pkt_alloc). When the pool is dry it
 * returns NULL and c is queued for MYRIO_TCP_EV_WRITABLE: connections refused buffers are
 * told in the order they were refused, when buffers come back. */
struct myrio_pkt *myrio_tcp_pkt_alloc(struct myrio_tcp_conn *c);
/* Copies up to len bytes into new segments; returns the bytes taken (0 if full: the send
 * queue or the transmit pool, and MYRIO_TCP_EV_WRITABLE follows either way). */
ssize_t myrio_tcp_write(struct myrio_tcp_conn *c, const void *buf, size_t len);
/* Segments that can still be queued. */
uint32_t myrio_tcp_send_space(const struct myrio_tcp_conn *c);
uint16_t myrio_tcp_mss(const struct myrio_tcp_conn *c);
/* Keepalive (RFC 1122 §4.2.3.6, as SO_KEEPALIVE with TCP_KEEPIDLE/INTVL/CNT): after idle_ms
 * without a segment from the peer, an empty probe every interval_ms; when probes of them
 * go unanswered, the connection is reset and ends with -ETIMEDOUT. Probes wait while data
 * is outstanding (retransmission bounds that). idle_ms 0 turns it off; interval_ms 0 means
 * 75 s, probes 0 means 9 (Linux's defaults). */
int myrio_tcp_keepalive(struct myrio_tcp_conn *c, uint32_t idle_ms, uint32_t interval_ms,
			uint32_t probes);
/* Bytes queued and not yet acknowledged. */
uint64_t myrio_tcp_unacked(const struct myrio_tcp_conn *c);

/* Zero-copy receive: the next in-order payload buffer, or NULL. Hand it back with
 * myrio_tcp_release (which reopens the window); do not change p->len. */
struct myrio_pkt *myrio_tcp_recv(struct myrio_tcp_conn *c);
void myrio_tcp_release(struct myrio_tcp_conn *c, struct myrio_pkt *p);
/* Copies up to len in-order bytes; -EAGAIN when none yet, 0 at end of stream. */
ssize_t myrio_tcp_read(struct myrio_tcp_conn *c, void *buf, size_t len);
/* As myrio_tcp_read from off bytes into what is queued, leaving it queued (MSG_PEEK). */
ssize_t myrio_tcp_peek(const struct myrio_tcp_conn *c, size_t off, void *buf, size_t len);
/* In-order bytes waiting to be read (myrio_tcp_read), not counting buffers taken with
 * myrio_tcp_recv: what FIONREAD reports, and whether a read would find data. */
uint32_t myrio_tcp_rx_queued(const struct myrio_tcp_conn *c);
/* The peer sent FIN and everything before it has been handed out. */
bool myrio_tcp_eof(const struct myrio_tcp_conn *c);

/* Half-close: FIN after the queued data. Receiving continues. */
int myrio_tcp_shutdown(struct myrio_tcp_conn *c);
/* The application reads no more, as shutdown(SHUT_RD) in Linux: once the FIN is sent
 * (myrio_tcp_shutdown), data the peer sends beyond what was received is answered with a
 * RST and ends the connection with -ECONNRESET (tcp_abort_on_data), as for a closed one.
 * For a handle kept after the application's close() until the peer has everything. */
void myrio_tcp_shutdown_read(struct myrio_tcp_conn *c);
/* Done with the handle: orderly close; the stack finishes the close on its own. Received
 * data left unread resets the connection instead (RST, not FIN: RFC 2525 §2.17, as Linux;
 * tcp_abort_on_close), and so does data that arrives afterwards (tcp_abort_on_data). No
 * events for c afterwards; buffers still held from myrio_tcp_recv are freed with
 * myrio_pkt_free. */
void myrio_tcp_close(struct myrio_tcp_conn *c);
/* Done with the handle: RST now (SO_LINGER with a linger time of 0). */
void myrio_tcp_abort(struct myrio_tcp_conn *c);

enum myrio_tcp_state myrio_tcp_state(const struct myrio_tcp_conn *c);
const char *myrio_tcp_state_name(enum myrio_tcp_state st);
/* Why the connection ended: -ECONNRESET (-EPIPE for a reset after the peer's FIN, as
 * Linux), -ETIMEDOUT, ... or 0. An ICMP error ends a
 * connection only during the handshake (RFC 1122 §4.2.3.9, as Linux): port or protocol
 * unreachable -ECONNREFUSED / -ENOPROTOOPT, host or network unreachable -EHOSTUNREACH /
 * -ENETUNREACH (SYN_SENT only: any destination unreachable ends it). ARP giving up on the
 * next hop (3 requests unanswered, 3 s) counts as a host unreachable: a connect to a host
 * that never answers ARP ends -EHOSTUNREACH then, as Linux's. A connection that times out
 * after such an error ends with that error instead of -ETIMEDOUT. */
int myrio_tcp_error(const struct myrio_tcp_conn *c);
/* The last ICMP error reported for an open connection (0 if none): recorded, not fatal
 * (RFC 5927 §5.2: errors can be forged, so they do not end a synchronised connection). */
int myrio_tcp_soft_error(const struct myrio_tcp_conn *c);
void *myrio_tcp_user(const struct myrio_tcp_conn *c);
void myrio_tcp_set_user(struct myrio_tcp_conn *c, void *user);
void myrio_tcp_addr(const struct myrio_tcp_conn *c, uint32_t *lip, uint16_t *lport, uint32_t *rip,
		    uint16_t *rport);

/* ---- UDP ---- */

/* port 0 = an ephemeral port. */
int myrio_udp_open(struct myrio_stack *s, uint16_t port, void *user, struct myrio_udp_sock **out);
/* Default destination, and only datagrams from it are received. A connected socket also
 * receives the ICMP errors about what it sent there (see myrio_udp_error). ip and port 0
 * dissolve the association (as connect(AF_UNSPEC)). */
int myrio_udp_connect(struct myrio_udp_sock *u, uint32_t ip, uint16_t port);
/* The pending error of a connected socket, cleared by the call (as SO_ERROR): -ECONNREFUSED
 * when the peer answered a datagram with ICMP port unreachable (nobody listens there),
 * -ENOPROTOOPT, -EHOSTUNREACH, -ENETUNREACH for the other hard unreachables; 0 if none.
 * The socket's event callback runs when an error arrives, as for a datagram, so a request
 * to a closed port is answered at once instead of timing out. Errors for unconnected
 * sockets are not kept (as Linux without IP_RECVERR). */
int myrio_udp_error(struct myrio_udp_sock *u);
/* Zero-copy send of one frame's payload (p->len <= myrio_udp_max_payload). On success the
 * stack owns p (freed when the NIC is done). On failure nothing was sent and p is still the
 * caller's, unchanged: send it again or free it. -EAGAIN when the NIC's send ring and the
 * stack's batch are full: nothing more can be taken until the NIC completes sends, so poll
 * the stack (its waitable fd wakes on send completions) and send again, as with a
 * non-blocking socket or DPDK's rte_eth_tx_burst; -EMSGSIZE, -ENOSPC (no headroom),
 * -EDESTADDRREQ, -ENETUNREACH. */
int myrio_udp_send(struct myrio_udp_sock *u, struct myrio_pkt *p);
int myrio_udp_sendto(struct myrio_udp_sock *u, struct myrio_pkt *p, uint32_t ip, uint16_t port);
/* Next datagram (payload at myrio_pkt_data, p->len bytes, in one buffer) or NULL; free with
 * myrio_pkt_free. ip/port may be NULL. */
struct myrio_pkt *myrio_udp_recv(struct myrio_udp_sock *u, uint32_t *ip, uint16_t *port);
/* The longest payload a zero-copy send takes: one frame, MTU - 28. Received datagrams can
 * be longer, up to 65507 bytes: IPv4 fragments are reassembled (conf.reass_slots) into one
 * buffer. */
uint32_t myrio_udp_max_payload(const struct myrio_stack *s);
/* Copying send of up to 65507 bytes: one frame when it fits (zero-copy path, offloads),
 * else IPv4 fragments with the checksum computed in software. 0 (every fragment taken), or
 * nothing sent: -EAGAIN (the send ring and the batch cannot take every fragment: poll and
 * send again, as for myrio_udp_send), -ENOBUFS (not enough transmit buffers for every
 * fragment: they come back as the NIC completes sends), -EMSGSIZE, -ENETUNREACH. */
int myrio_udp_sendto_copy(struct myrio_udp_sock *u, const void *buf, size_t len, uint32_t ip,
			  uint16_t port);
uint16_t myrio_udp_port(const struct myrio_udp_sock *u);
void *myrio_udp_user(const struct myrio_udp_sock *u);
void myrio_udp_close(struct myrio_udp_sock *u);

/* ---- UDP multicast (IPv4 groups, 224.0.0.0/4) ---- */

#define MYRIO_UDP_MAX_GROUPS 20 /* memberships per socket (Linux's IP_MAX_MEMBERSHIPS) */
/* As myrio_udp_open, but the port may be shared with other sockets opened this way (as
 * SO_REUSEADDR): each gets its own copy of a multicast or broadcast datagram it takes; a
 * unicast datagram goes to the one connected to its source, else to an unconnected one (as
 * Linux's UDP lookup scores). -EADDRINUSE when a socket not shared holds it. */
int myrio_udp_open_shared(struct myrio_stack *s, uint16_t port, void *user,
			  struct myrio_udp_sock **out);
/* As IP_ADD_MEMBERSHIP / IP_DROP_MEMBERSHIP: the socket receives the datagrams sent to
 * group at its port, and only the groups it joined (as Linux with IP_MULTICAST_ALL off).
 * The stack reports the membership with IGMP (v3, or v2/v1 when such a querier is heard)
 * and opens the port's multicast filter to the group. -EINVAL for an address that is not
 * a group, -EADDRINUSE when joined already, -ENOBUFS beyond MYRIO_UDP_MAX_GROUPS or the
 * stack's 64 groups, -ENOTSUP on a port without multicast; leave: -EADDRNOTAVAIL when not
 * joined. Closing the socket leaves its groups. */
int myrio_udp_join(struct myrio_udp_sock *u, uint32_t group);
int myrio_udp_leave(struct myrio_udp_sock *u, uint32_t group);
/* As IP_MULTICAST_TTL: the TTL of datagrams the socket sends to a group, 1 (this link) by
 * default. Datagrams sent to a group are not looped back to this stack's own sockets. */
int myrio_udp_set_mcast_ttl(struct myrio_udp_sock *u, uint8_t ttl);

/* ---- Counters ---- */

struct myrio_stack_stats {
	/* link */
	uint64_t rx_frames, tx_frames, tx_ring_full, tx_dropped_full, tx_pool_empty;
	uint64_t drop_eth_short, drop_eth_not_for_us, drop_eth_type;
	/* ARP */
	uint64_t arp_rx, arp_requests_sent, arp_replies_sent, arp_queued, arp_queue_drop,
	    arp_unresolved_drop, arp_table_full;
	/* IPv4 */
	uint64_t ip_rx, ip_tx, drop_ip_short, drop_ip_version, drop_ip_hdr_csum, drop_ip_len,
	    drop_ip_not_for_us, drop_ip_frag, drop_ip_proto, ip_no_route;
	/* fragments taken for reassembly, datagrams completed, datagrams given up (timeout,
	 * overlap, slot needed for a newer one) */
	uint64_t ip_frags_rx, ip_reassembled, ip_reass_drops;
	uint64_t ip_frags_tx; /* fragments sent (echo replies longer than the MTU) */
	/* ICMP */
	uint64_t icmp_rx, icmp_echo_replies, icmp_unreach_sent, drop_icmp;
	/* UDP */
	uint64_t udp_rx, udp_tx, drop_udp_short, drop_udp_csum, drop_udp_no_port,
	    drop_udp_queue_full;
	/* TCP */
	uint64_t tcp_segs_in, tcp_segs_out, tcp_retransmits, tcp_fast_retransmits, tcp_rto_expired,
	    tcp_tail_loss_probes, tcp_lost_retransmits, tcp_ooo_segs, tcp_dup_segs, tcp_resets_sent,
	    tcp_resets_rcvd, tcp_challenge_acks, tcp_challenge_ack_limited, tcp_paws_drops,
	    tcp_zero_window_probes, tcp_csum_sw, tcp_csum_offload, tcp_tx_copy_nic_busy;
	uint64_t drop_tcp_short, drop_tcp_csum, drop_tcp_bad_off, drop_tcp_no_conn,
	    drop_tcp_syn_backlog, drop_tcp_table_full, drop_tcp_ooo_full, drop_tcp_out_of_window,
	    drop_tcp_bad_ack, drop_tcp_rcv_full, drop_tcp_listen_overflow;
	uint64_t tcp_active_opens, tcp_passive_opens, tcp_conns_established, tcp_timeouts;
	/* SYN cookies (backlog full: SYN-ACKs sent statelessly, returning ACKs that carried a
	 * valid / an invalid cookie) and orphans reset after their FIN retries ran out */
	uint64_t tcp_syncookies_sent, tcp_syncookies_ok, tcp_syncookies_failed, tcp_orphan_resets;
	/* keepalive probes sent, connections ended for lack of an answer */
	uint64_t tcp_keepalive_probes, tcp_keepalive_timeouts;
	/* TCP segmentation offload: requests handed to the NIC and the segments they held */
	uint64_t tcp_tso_requests, tcp_tso_segs;
	/* ICMP errors about our datagrams: taken (they matched a connection or socket and
	 * passed the checks of RFC 5927), ignored (short, forged, stale, no match); port
	 * unreachables not sent because of the rate limit */
	uint64_t icmp_errors_rx, icmp_errors_ignored, icmp_unreach_limited;
	/* connections ended by an ICMP error during the handshake; MSS reductions by path
	 * MTU discovery; path MTU estimates forgotten after their 10 minutes */
	uint64_t tcp_icmp_aborts, tcp_pmtu_lowered, tcp_pmtu_expired;
	uint64_t udp_icmp_errors; /* errors handed to connected UDP sockets */
	/* RFC 5227: another host claimed our address (in an ARP request or reply, or a
	 * probe for it); announcements sent to defend it */
	uint64_t arp_conflicts, arp_defends;
	/* Receive memory: buffers held now in connections' receive queues (not those the
	 * application took with recv); small payloads copied into a buffer already held;
	 * times the receive pool ran low; out-of-order segments pruned then; segments dropped
	 * because the pool was still low */
	uint64_t tcp_rx_bufs_held, tcp_rx_coalesced, tcp_rx_pressure, tcp_ooo_pruned,
	    drop_tcp_rx_pressure;
	/* duplicate ACKs for segments without data not accepted, held back (one per
	 * connection every 500 ms); data received after close answered with RST */
	uint64_t tcp_oow_acks_limited, tcp_abort_on_data;
	/* segments for no connection from a source that may not open one (RFC 1122 §3.2.1.3) */
	uint64_t drop_tcp_bad_src;
	/* IGMP: messages in and out, queries heard, our reports left out because another
	 * member answered (v1/v2), and messages dropped: short, bad checksum, impossible
	 * lengths (sources or records beyond the end), types a host does not take, queries
	 * to the wrong address */
	uint64_t igmp_rx, igmp_tx, igmp_queries_rx, igmp_reports_suppressed;
	uint64_t drop_igmp_short, drop_igmp_csum, drop_igmp_len, drop_igmp_type, drop_igmp_bad_dst;
	/* UDP multicast: datagrams copied for a further socket of the group; copies not made
	 * for want of a transmit buffer */
	uint64_t udp_mcast_copies, drop_udp_mcast_copy;
	/* UDP on a port of several stacks (myrio_stack_create_queue): datagrams copied to a
	 * sibling stack whose socket takes them, received so from a sibling, and copies lost
	 * (the sibling's backlog full, or no buffer) */
	uint64_t udp_handed_off, udp_handoff_rx, drop_udp_handoff;
	/* addresses ARP gave up on after 3 requests unanswered: their waiting frames are
	 * counted in arp_unresolved_drop, and their senders told as by an ICMP host
	 * unreachable (counted with the ICMP errors taken: a connection in its handshake
	 * ends with -EHOSTUNREACH) */
	uint64_t arp_failed;
	/* connections reset by myrio_tcp_close because received data was left unread (Linux's
	 * TCPAbortOnClose); frames that waited for an address and found the NIC's ring and the
	 * batch full when it resolved, dropped (TCP sends its segments again; a UDP datagram is
	 * lost; not in tx_dropped_full) */
	uint64_t tcp_abort_on_close, arp_resolved_drop;
};

struct myrio_tcp_conn_stats {
	uint64_t segs_in, segs_out, bytes_in, bytes_out, retransmits, fast_retransmits, rto_expired,
	    ooo_segs, dup_segs, drops_out_of_window, sack_blocks_rcvd, zero_window_probes,
	    challenge_acks;
	uint32_t srtt_us, rttvar_us, rto_ms, cwnd, ssthresh, snd_wnd, rcv_wnd, mss;
	uint32_t unacked_segs, queued_segs;
};

void myrio_stack_stats(const struct myrio_stack *s, struct myrio_stack_stats *out);
void myrio_tcp_conn_stats(const struct myrio_tcp_conn *c, struct myrio_tcp_conn_stats *out);
/* Every stack counter as "name value\n" lines (for tools); returns the length written
 * (as snprintf: the length needed if buf is too small). */
int myrio_stack_stats_format(const struct myrio_stack *s, char *buf, size_t len);
/* One line per TCP connection in use: addresses, state, and its counters as name=value
 * pairs; returns the length as snprintf does. */
int myrio_stack_conns_format(const struct myrio_stack *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
