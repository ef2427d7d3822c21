/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP connections: the preallocated table and its tuple hash, lifecycle (open, close,
 * reuse), events, and the application calls that do not process segments. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/log.h"

#define NO_CONN UINT32_MAX

static const char *const state_names[] = {
    "CLOSED",	  "LISTEN",	"SYN_SENT", "SYN_RCVD", "ESTABLISHED", "FIN_WAIT_1",
    "FIN_WAIT_2", "CLOSE_WAIT", "CLOSING",  "LAST_ACK", "TIME_WAIT",
};

const char *myrio_tcp_state_name(enum myrio_tcp_state st)
{
	return (unsigned)st < sizeof(state_names) / sizeof(state_names[0]) ? state_names[st] : "?";
}

int tcp_init(struct myrio_stack *s)
{
	uint32_t n = s->conf.max_tcp_conns;
	uint32_t h = 16;
	while (h < 2 * n)
		h <<= 1;
	s->conns = calloc(n, sizeof(*s->conns));
	s->hash = malloc(h * sizeof(*s->hash));
	s->listeners = calloc(s->conf.max_listeners, sizeof(*s->listeners));
	if (!s->conns || !s->hash || !s->listeners) {
		free(s->conns);
		free(s->hash);
		free(s->listeners);
		s->conns = NULL;
		s->hash = NULL;
		s->listeners = NULL;
		return -ENOMEM;
	}
	s->hash_mask = h - 1;
	for (uint32_t i = 0; i < h; i++)
		s->hash[i] = NO_CONN;
	s->nconns = n;
	for (uint32_t i = 0; i < n; i++) {
		s->conns[i].s = s;
		s->conns[i].idx = i;
		s->conns[i].hash_next = i + 1 < n ? i + 1 : NO_CONN;
	}
	s->free_head = 0;
	tw_init(&s->wheel, s->now_ms);
	s->eph_next = (uint16_t)stack_random(s);
	s->cookie_key[0] = stack_random(s);
	s->cookie_key[1] = stack_random(s);
	s->port_key[0] = stack_random(s);
	s->port_key[1] = stack_random(s);
	return 0;
}

static void free_chain(struct myrio_pkt *p)
{
	while (p) {
		struct myrio_pkt *n = p->next;
		myrio_pkt_free(p);
		p = n;
	}
}

static void drop_send_queue(struct myrio_tcp_conn *c)
{
	free_chain(c->sndq);
	c->sndq = c->sndq_tail = c->snd_next = NULL;
	c->sndq_segs = 0;
}

static void drop_receive_queues(struct myrio_tcp_conn *c)
{
	tcp_rx_free_chain(c->s, c->rcvq);
	tcp_rx_free_chain(c->s, c->ooo);
	c->rcvq = c->rcvq_tail = c->ooo = NULL;
	c->ooo_segs = 0;
}

static uint32_t tuple_hash(const struct myrio_stack *s, uint32_t lip, uint16_t lport, uint32_t rip,
			   uint16_t rport)
{
	uint64_t k = ((uint64_t)rip << 32 | (uint64_t)rport << 16 | lport) ^ s->secret[0];
	k ^= (uint64_t)lip * 0x9E3779B97F4A7C15ULL;
	k = (k ^ (k >> 31)) * 0xBF58476D1CE4E5B9ULL;
	return (uint32_t)(k >> 32) & s->hash_mask;
}

struct myrio_tcp_conn *tcp_lookup(struct myrio_stack *s, uint32_t lip, uint16_t lport, uint32_t rip,
				  uint16_t rport)
{
	uint32_t i = s->hash[tuple_hash(s, lip, lport, rip, rport)];
	while (i != NO_CONN) {
		struct myrio_tcp_conn *c = &s->conns[i];
		if (c->rport == rport && c->rip == rip && c->lport == lport && c->lip == lip)
			return c;
		i = c->hash_next;
	}
	return NULL;
}

static void unhash(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	uint32_t *pi = &s->hash[tuple_hash(s, c->lip, c->lport, c->rip, c->rport)];
	while (*pi != NO_CONN) {
		if (*pi == c->idx) {
			*pi = c->hash_next;
			return;
		}
		pi = &s->conns[*pi].hash_next;
	}
}

/* The recycling list: TIME_WAIT connections the application let go, in the order they
 * became so (oldest first), so that a full table recycles the oldest in O(1). */
static void reuse_enlist(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	if (c->reusable || c->app_owned || c->state != MYRIO_TCP_TIME_WAIT)
		return;
	c->reusable = true;
	c->reuse_next = NULL;
	c->reuse_prev = s->reuse_tail;
	if (s->reuse_tail)
		s->reuse_tail->reuse_next = c;
	else
		s->reuse = c;
	s->reuse_tail = c;
}

static void reuse_delist(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	if (!c->reusable)
		return;
	if (c->reuse_prev)
		c->reuse_prev->reuse_next = c->reuse_next;
	else
		s->reuse = c->reuse_next;
	if (c->reuse_next)
		c->reuse_next->reuse_prev = c->reuse_prev;
	else
		s->reuse_tail = c->reuse_prev;
	c->reusable = false;
}

void tcp_time_wait_start(struct myrio_tcp_conn *c)
{
	c->t_2msl = c->s->now_ms + c->s->conf.time_wait_ms;
	tcp_timer_arm(c, c->t_2msl);
	reuse_delist(c); /* a restart makes it the youngest */
	reuse_enlist(c);
}

void tcp_conn_free(struct myrio_tcp_conn *c)
{
	struct myrio_stack *s = c->s;
	tw_del(&s->wheel, &c->timer);
	reuse_delist(c);
	tcp_pool_unwait(c);
	ready_del(&c->ready);
	drop_send_queue(c);
	drop_receive_queues(c);
	unhash(c);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->active = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->listener)
		c->listener->pending--;
	/* Not on the output list any more: run_output skips slots that are not in use. */
	c->in_use = false;
	c->zombie = false;
	c->state = MYRIO_TCP_CLOSED;
	c->hash_next = s->free_head;
	s->free_head = c->idx;
}

struct myrio_tcp_conn *tcp_conn_alloc(struct myrio_stack *s, uint32_t lip, uint16_t lport,
				      uint32_t rip, uint16_t rport)
{
	if (s->free_head == NO_CONN) {
		/* Recycle the oldest TIME_WAIT nobody holds (RFC 6191 lets a new incarnation
		 * take over a TIME_WAIT; this one is for another tuple, so it only costs the
		 * old one's protection against late duplicates). One still on the output list
		 * (an ACK due) waits for the next poll. */
		for (struct myrio_tcp_conn *c = s->reuse; c; c = c->reuse_next) {
			s->alloc_visits++;
			if (!c->on_output) {
				tcp_conn_free(c);
				break;
			}
		}
		if (s->free_head == NO_CONN) {
			s->st.drop_tcp_table_full++;
			return NULL;
		}
	}
	struct myrio_tcp_conn *c = &s->conns[s->free_head];
	s->free_head = c->hash_next;
	uint64_t gen = c->gen + 1;
	uint32_t idx = c->idx;
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->idx = idx;
	c->gen = gen;
	c->in_use = true;
	c->lip = lip;
	c->lport = lport;
	c->rip = rip;
	c->rport = rport;
	uint32_t h = tuple_hash(s, lip, lport, rip, rport);
	c->hash_next = s->hash[h];
	s->hash[h] = c->idx;
	c->next = s->active;
	if (s->active)
		s->active->prev = c;
	s->active = c;
	c->mss = s->mss;
	c->rto_ms = s->conf.rto_initial_ms;
	if (s->conf.window_scale)
		c->rcv_wscale = tcp_rcv_wscale(s);
	cc_init(c);
	return c;
}

uint8_t tcp_rcv_wscale(const struct myrio_stack *s)
{
	uint8_t ws = 0;
	while (ws < 14 && (s->conf.rcv_buf >> ws) > 65535)
		ws++;
	return ws;
}

void tcp_fini(struct myrio_stack *s)
{
	for (uint32_t i = 0; i < s->nconns; i++) {
		struct myrio_tcp_conn *c = &s->conns[i];
		if (!c->in_use)
			continue;
		if (c->state >= MYRIO_TCP_SYN_RCVD && c->state <= MYRIO_TCP_LAST_ACK &&
		    c->state != MYRIO_TCP_TIME_WAIT)
			tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_max);
		tcp_conn_free(c);
	}
	free(s->conns);
	free(s->hash);
	free(s->listeners);
	s->conns = NULL;
	s->hash = NULL;
	s->listeners = NULL;
}

uint32_t tcp_isn(struct myrio_stack *s, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
	/* RFC 6528: a keyed hash of the tuple plus a 4 us clock. */
	uint64_t k = (uint64_t)lip << 32 | rip;
	k ^= s->secret[0];
	k = (k ^ (k >> 33)) * 0xFF51AFD7ED558CCDULL;
	k ^= ((uint64_t)lport << 16 | rport) + s->secret[1];
	k = (k ^ (k >> 33)) * 0xC4CEB9FE1A85EC53ULL;
	k ^= k >> 33;
	return (uint32_t)k + (uint32_t)(s->now_us / 4);
}

void tcp_set_state(struct myrio_tcp_conn *c, uint8_t state)
{
	c->state = state;
}

static void make_zombie(struct myrio_tcp_conn *c)
{
	if (c->zombie)
		return;
	c->zombie = true;
	c->zombie_next = c->s->zombies;
	c->s->zombies = c;
	c->s->poll_tail |= POLL_TAIL_ZOMBIES;
}

void tcp_conn_finish(struct myrio_tcp_conn *c, int error)
{
	/* TIME_WAIT already told the application (CLOSED on entry). */
	bool was_open = c->state != MYRIO_TCP_CLOSED && c->state != MYRIO_TCP_TIME_WAIT;
	c->state = MYRIO_TCP_CLOSED;
	c->t_rtx = c->t_delack = c->t_2msl = c->t_keep = 0;
	tw_del(&c->s->wheel, &c->timer);
	reuse_delist(c);
	drop_send_queue(c);
	tcp_rx_free_chain(c->s, c->ooo);
	c->ooo = NULL;
	c->ooo_segs = 0;
	if (error == -ETIMEDOUT && tcp_soft_error(c))
		error = tcp_soft_error(c); /* why it timed out, as Linux reports it */
	if (error)
		c->error = error;
	if (c->app_owned) {
		if (was_open)
			tcp_event(c, error ? MYRIO_TCP_EV_ERROR : MYRIO_TCP_EV_CLOSED);
	} else {
		make_zombie(c);
	}
}

void tcp_reap(struct myrio_stack *s)
{
	struct myrio_tcp_conn *c = s->zombies;
	s->zombies = NULL;
	while (c) {
		struct myrio_tcp_conn *n = c->zombie_next;
		if (c->in_use && c->zombie && !c->app_owned && !c->on_output)
			tcp_conn_free(c);
		else if (c->in_use && c->zombie) {
			c->zombie = false;
			make_zombie(c); /* try again next poll */
		}
		c = n;
	}
}

void tcp_mark_output(struct myrio_tcp_conn *c)
{
	if (c->on_output)
		return;
	c->on_output = true;
	c->out_next = c->s->out_list;
	c->s->out_list = c;
}

void tcp_run_output(struct myrio_stack *s)
{
	/* Connections that mark themselves again (NIC ring full) wait for the next poll. */
	struct myrio_tcp_conn *c = s->out_list;
	s->out_list = NULL;
	while (c) {
		struct myrio_tcp_conn *n = c->out_next;
		c->on_output = false;
		if (c->in_use)
			tcp_output(c);
		c = n;
	}
}

struct myrio_tcp_listener *tcp_listener_find(struct myrio_stack *s, uint16_t port)
{
	for (uint32_t i = 0; i < s->conf.max_listeners; i++)
		if (s->listeners[i].in_use && s->listeners[i].port == port)
			return &s->listeners[i];
	return NULL;
}

int myrio_tcp_listen(struct myrio_stack *s, uint16_t port, unsigned backlog, void *user,
		     struct myrio_tcp_listener **out)
{
	*out = NULL;
	if (port == 0)
		return -EINVAL;
	if (tcp_listener_find(s, port)) {
		log_err("tcp_lite: TCP port %u already has a listener", port);
		return -EADDRINUSE;
	}
	for (uint32_t i = 0; i < s->conf.max_listeners; i++) {
		struct myrio_tcp_listener *l = &s->listeners[i];
		if (l->in_use)
			continue;
		memset(l, 0, sizeof(*l));
		l->s = s;
		l->in_use = true;
		l->port = port;
		l->backlog = backlog ? backlog : 16;
		l->user = user;
		*out = l;
		return 0;
	}
	log_err("tcp_lite: all %u listeners in use; raise max_listeners "
		"(MYRIO_MAX_LISTEN under the preload)",
		s->conf.max_listeners);
	return -ENOBUFS;
}

void myrio_tcp_listener_set_full(struct myrio_tcp_listener *l, bool full)
{
	l->full = full;
}

void myrio_tcp_listener_close(struct myrio_tcp_listener *l)
{
	if (!l)
		return;
	struct myrio_stack *s = l->s;
	/* Half-open connections die with their listener. */
	for (uint32_t i = 0; i < s->nconns; i++) {
		struct myrio_tcp_conn *c = &s->conns[i];
		if (c->in_use && c->listener == l) {
			tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_max);
			c->listener = NULL;
			tcp_conn_finish(c, 0);
		}
	}
	l->pending = 0;
	tcp_acceptq_drop(l);
	ready_del(&l->ready);
	l->in_use = false;
}

int myrio_tcp_connect(struct myrio_stack *s, uint32_t ip, uint16_t port, void *user,
		      struct myrio_tcp_conn **out)
{
	*out = NULL;
	if (!ip || !port)
		return -EINVAL;
	if (s->conf.netmask && !s->conf.gateway &&
	    (ip & s->conf.netmask) != (s->conf.ip & s->conf.netmask))
		return -ENETUNREACH;
	stack_update_clock(s);
	uint16_t lport = 0;
	for (uint32_t tries = 0; tries < EPH_COUNT; tries++) {
		uint16_t cand = tcp_ephemeral_port(s, ip, port);
		if (!tcp_lookup(s, s->conf.ip, cand, ip, port) && !tcp_listener_find(s, cand) &&
		    (s->nq == 1 || shard_port_ours(s, ip, port, cand))) {
			lport = cand;
			break;
		}
	}
	if (!lport)
		return -EADDRNOTAVAIL;
	struct myrio_tcp_conn *c = tcp_conn_alloc(s, s->conf.ip, lport, ip, port);
	if (!c)
		return -ENOBUFS;
	c->app_owned = true;
	c->user = user;
	c->iss = tcp_isn(s, c->lip, c->lport, c->rip, c->rport);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->snd_end = c->iss + 1;
	c->state = MYRIO_TCP_SYN_SENT;
	c->rtt_start_us = s->now_us;
	s->st.tcp_active_opens++;
	tcp_send_syn(c);
	tcp_arm_rto(c);
	*out = c;
	return 0;
}

static bool can_send(const struct myrio_tcp_conn *c)
{
	return c->state == MYRIO_TCP_ESTABLISHED || c->state == MYRIO_TCP_CLOSE_WAIT;
}

/* Puts p at the end of the send queue: len bytes of data, or the FIN (one sequence number,
 * no data); the next to go if nothing is waiting. */
static void sndq_append(struct myrio_tcp_conn *c, struct myrio_pkt *p, uint32_t len, uint32_t flags)
{
	seg_set(p, c->snd_end, len, 0, flags);
	c->snd_end += (flags & SEG_FIN) ? 1 : len;
	p->next = NULL;
	if (c->sndq_tail)
		c->sndq_tail->next = p;
	else
		c->sndq = p;
	c->sndq_tail = p;
	c->sndq_segs++;
	if (!c->snd_next)
		c->snd_next = p;
}

int myrio_tcp_send(struct myrio_tcp_conn *c, struct myrio_pkt *p)
{
	if (c->error)
		return c->error;
	if (c->fin_queued)
		return -EPIPE;
	if (!can_send(c))
		return -ENOTCONN;
	if (p->len == 0)
		return -EINVAL;
	if (p->len > c->mss)
		return -EMSGSIZE;
	if (p->data_off < HDR_ROOM || p->data_off > p->buf_len || p->len > p->buf_len - p->data_off)
		return -ENOSPC;
	if (c->sndq_segs >= c->s->conf.snd_queue_segs) {
		c->want_writable = true;
		return -EAGAIN;
	}
	sndq_append(c, p, p->len, 0);
	/* With TSO, output waits for the poll (which hands frames to the NIC only then
	 * anyway), so that what the application writes meanwhile goes out in one request. */
	if (c->s->tso)
		tcp_mark_output(c);
	else
		tcp_output(c);
	return 0;
}

static inline struct myrio_pkt *pkt_alloc(struct myrio_tcp_conn *c)
{
	struct myrio_pkt *p = myrio_stack_pkt_alloc(c->s);
	if (!p)
		tcp_pool_wait(c);
	return p;
}

struct myrio_pkt *myrio_tcp_pkt_alloc(struct myrio_tcp_conn *c)
{
	return pkt_alloc(c);
}

ssize_t myrio_tcp_write(struct myrio_tcp_conn *c, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	size_t done = 0;
	if (c->error)
		return c->error;
	if (c->fin_queued)
		return -EPIPE;
	if (!can_send(c))
		return -ENOTCONN;
	while (done < len) {
		if (c->sndq_segs >= c->s->conf.snd_queue_segs) {
			c->want_writable = true;
			break;
		}
		struct myrio_pkt *p = pkt_alloc(c);
		if (!p)
			break;
		uint32_t n = (uint32_t)(len - done < c->mss ? len - done : c->mss);
		if (n > myrio_pkt_tailroom(p)) /* whatever the MSS says, no more than it holds */
			n = myrio_pkt_tailroom(p);
		memcpy(myrio_pkt_data(p), b + done, n);
		p->len = n;
		int rc = myrio_tcp_send(c, p);
		if (rc < 0) {
			myrio_pkt_free(p);
			break;
		}
		done += n;
	}
	return (ssize_t)done;
}

uint32_t myrio_tcp_send_space(const struct myrio_tcp_conn *c)
{
	uint32_t max = c->s->conf.snd_queue_segs;
	return c->sndq_segs < max ? max - c->sndq_segs : 0;
}

uint16_t myrio_tcp_mss(const struct myrio_tcp_conn *c)
{
	return c->mss;
}

uint64_t myrio_tcp_unacked(const struct myrio_tcp_conn *c)
{
	if (c->state == MYRIO_TCP_CLOSED)
		return 0;
	return (uint32_t)(c->snd_end - c->snd_una);
}

/* A window update once the application freed a good part of the buffer. */
static void maybe_window_update(struct myrio_tcp_conn *c)
{
	if (c->state < MYRIO_TCP_ESTABLISHED || c->state > MYRIO_TCP_FIN_WAIT_2 || c->fin_rcvd)
		return;
	uint32_t adv = c->rcv_adv - c->rcv_nxt;
	uint32_t step = 2u * c->mss < c->s->conf.rcv_buf / 2 ? 2u * c->mss : c->s->conf.rcv_buf / 2;
	/* The free space bounds the window: most releases stop here. Then what an ACK would
	 * advertise, not the free space: without window scaling that is capped at 65535, and
	 * an ACK that does not move the window is a duplicate ACK to the sender (RFC 5681
	 * §4.2), which takes three for a loss. */
	uint32_t free = c->s->conf.rcv_buf - c->rcv_held;
	if (free <= adv || free - adv < step)
		return;
	if (!c->ws_ok || (65535ull << c->rcv_wscale) < c->s->conf.rcv_buf) {
		uint32_t now = tcp_rcv_window(c);
		if (now <= adv || now - adv < step)
			return;
	}
	c->ack_now = true;
	tcp_mark_output(c);
}

struct myrio_pkt *myrio_tcp_recv(struct myrio_tcp_conn *c)
{
	struct myrio_pkt *p = c->rcvq;
	if (!p)
		return NULL;
	c->rcvq = p->next;
	if (!c->rcvq)
		c->rcvq_tail = NULL;
	p->next = NULL;
	p->user = c->gen;	     /* lets release tell whether the window still counts it */
	c->s->st.tcp_rx_bufs_held--; /* the application's now */
	return p;
}

void myrio_tcp_release(struct myrio_tcp_conn *c, struct myrio_pkt *p)
{
	if (c->in_use && p->user == c->gen) {
		c->rcv_held -= p->len < c->rcv_held ? p->len : c->rcv_held;
		maybe_window_update(c);
	}
	myrio_pkt_free(p);
}

ssize_t myrio_tcp_read(struct myrio_tcp_conn *c, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t done = 0;
	while (done < len && c->rcvq) {
		struct myrio_pkt *p = c->rcvq;
		uint32_t n = (uint32_t)(len - done < p->len ? len - done : p->len);
		memcpy(b + done, myrio_pkt_data(p), n);
		done += n;
		c->rcv_held -= n;
		if (n == p->len) {
			c->rcvq = p->next;
			if (!c->rcvq)
				c->rcvq_tail = NULL;
			tcp_rx_free(c->s, p);
		} else {
			myrio_pkt_adj(p, n);
		}
	}
	if (done) {
		maybe_window_update(c);
		return (ssize_t)done;
	}
	if (c->fin_rcvd)
		return 0;
	if (c->error)
		return c->error;
	return -EAGAIN;
}

ssize_t myrio_tcp_peek(const struct myrio_tcp_conn *c, size_t off, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t done = 0;
	for (const struct myrio_pkt *p = c->rcvq; p && done < len; p = p->next) {
		if (off >= p->len) {
			off -= p->len;
			continue;
		}
		size_t n = p->len - off < len - done ? p->len - off : len - done;
		memcpy(b + done, myrio_pkt_data(p) + off, n);
		done += n;
		off = 0;
	}
	if (done || c->rcvq)
		return (ssize_t)done;
	if (c->fin_rcvd)
		return 0;
	return c->error ? c->error : -EAGAIN;
}

uint32_t myrio_tcp_rx_queued(const struct myrio_tcp_conn *c)
{
	uint32_t n = 0;
	for (const struct myrio_pkt *p = c->rcvq; p; p = p->next)
		n += p->len;
	return n;
}

bool myrio_tcp_eof(const struct myrio_tcp_conn *c)
{
	return c->fin_rcvd && !c->rcvq;
}

int myrio_tcp_shutdown(struct myrio_tcp_conn *c)
{
	switch (c->state) {
	case MYRIO_TCP_SYN_SENT:
		tcp_conn_finish(c, 0);
		return 0;
	case MYRIO_TCP_SYN_RCVD:
	case MYRIO_TCP_ESTABLISHED:
	case MYRIO_TCP_CLOSE_WAIT:
		break;
	default:
		return c->fin_queued ? 0 : -ENOTCONN;
	}
	if (c->fin_queued)
		return 0;
	struct myrio_pkt *p = stack_alloc(c->s);
	if (!p)
		return -ENOBUFS;
	/* The FIN is a segment of its own in the send queue, so it is retransmitted like
	 * data. */
	sndq_append(c, p, 0, SEG_FIN);
	c->fin_queued = true;
	if (c->state == MYRIO_TCP_ESTABLISHED)
		c->state = MYRIO_TCP_FIN_WAIT_1;
	else if (c->state == MYRIO_TCP_CLOSE_WAIT)
		c->state = MYRIO_TCP_LAST_ACK;
	/* SYN_RCVD: the FIN waits until the handshake completes (tcp_input). */
	tcp_output(c);
	return 0;
}

void myrio_tcp_shutdown_read(struct myrio_tcp_conn *c)
{
	c->rcv_shut = true;
}

void myrio_tcp_abort(struct myrio_tcp_conn *c)
{
	if (!c)
		return;
	c->app_owned = false;
	ready_del(&c->ready);
	if (c->state != MYRIO_TCP_CLOSED && c->state != MYRIO_TCP_TIME_WAIT &&
	    c->state != MYRIO_TCP_SYN_SENT) {
		tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_max);
		c->s->st.tcp_resets_sent++;
	}
	drop_receive_queues(c);
	tcp_conn_finish(c, 0);
}

void myrio_tcp_close(struct myrio_tcp_conn *c)
{
	if (!c)
		return;
	ready_del(&c->ready);
	if (c->state == MYRIO_TCP_CLOSED || c->state == MYRIO_TCP_TIME_WAIT) {
		c->app_owned = false;
		if (c->state == MYRIO_TCP_CLOSED)
			tcp_conn_finish(c, 0);
		else
			reuse_enlist(c);
		return;
	}
	/* Unread data: tell the peer it was lost (RFC 2525 §2.17, Linux's tcp_close). */
	if (c->rcvq) {
		c->s->st.tcp_abort_on_close++;
		myrio_tcp_abort(c);
		return;
	}
	c->app_owned = false;
	c->rcv_shut = true;
	myrio_tcp_shutdown(c);
	if (c->state == MYRIO_TCP_CLOSED)
		return;
	/* An orphan must not wait forever for a peer that never closes or a window that
	 * never opens; while it still retransmits, the retry limit bounds it instead
	 * (tcp_timers.c, orphan_deadline). FIN_WAIT_2 restarts this when it is entered. */
	c->t_2msl = c->s->now_ms + c->s->conf.time_wait_ms;
	tcp_timer_arm(c, c->t_2msl);
}

enum myrio_tcp_state myrio_tcp_state(const struct myrio_tcp_conn *c)
{
	return (enum myrio_tcp_state)c->state;
}

int myrio_tcp_error(const struct myrio_tcp_conn *c)
{
	return c->error;
}

void *myrio_tcp_user(const struct myrio_tcp_conn *c)
{
	return c->user;
}

void myrio_tcp_set_user(struct myrio_tcp_conn *c, void *user)
{
	c->user = user;
}

void myrio_tcp_addr(const struct myrio_tcp_conn *c, uint32_t *lip, uint16_t *lport, uint32_t *rip,
		    uint16_t *rport)
{
	if (lip)
		*lip = c->lip;
	if (lport)
		*lport = c->lport;
	if (rip)
		*rip = c->rip;
	if (rport)
		*rport = c->rport;
}
