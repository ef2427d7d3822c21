/* SPDX-License-Identifier: BSD-3-Clause */
/* SYN cookies (RFC 4987 §3.6): when a listener's backlog is full, the SYN-ACK is sent
 * without keeping any state, and its initial sequence number carries what the connection
 * needs later, authenticated by a keyed hash:
 *
 *   bits 31-27  t: low 5 bits of a counter that ticks every 65.536 s (now_ms >> 16)
 *   bits 26-24  index into mss_table (largest entry not above the peer's MSS)
 *   bits 23-0   hash(key, addresses, ports, peer's ISN, t, index)
 *
 * The returning ACK (ack = cookie + 1, seq = peer's ISN + 1) is accepted when the hash
 * matches and t is at most two ticks old; it then becomes a connection as if it had
 * waited in SYN_RCVD. A forged ACK needs the hash: one chance in 2^24 per try.
 *
 * Options: when the SYN offers timestamps (and we use them), the SYN-ACK answers the
 * peer's timestamps, window scaling and SACK as a normal SYN-ACK would, and its TSval
 * carries what the connection must remember of them, as Linux does:
 *
 *   TSval = clock with bits 5-0 replaced (and 64 ms earlier if that put it ahead):
 *   bits 3-0  the peer's window scale (0-14), 15 when it offered none
 *   bit 4     the peer offered SACK
 *
 * The returning ACK echoes it in TSecr (RFC 7323 requires timestamps on every segment
 * once both sides offered them). Without timestamps the SYN-ACK offers only MSS: no
 * window scaling, so such a connection has a 64 KiB window. The option bits are not
 * covered by the hash: a peer can only change what applies to its own connection. */
#include "tcp_lite/stack.h"

#define COOKIE_TICK_SHIFT 16 /* ms */
#define COOKIE_MAX_AGE 2     /* ticks */
#define COOKIE_HASH_MASK 0xffffffu
#define TS_OPT_BITS 0x3fu
#define TS_WS_NONE 0xfu
#define TS_SACK 0x10u

static const uint16_t mss_table[] = {536, 1220, 1440, 1460, 4036, 8960};
#define MSS_TABLE_LEN (sizeof(mss_table) / sizeof(mss_table[0]))

static uint32_t cookie_hash(const struct myrio_stack *s, uint32_t lip, uint16_t lport, uint32_t rip,
			    uint16_t rport, uint32_t peer_isn, uint32_t t, uint32_t mssi)
{
	/* Two rounds of a 64-bit multiply-xorshift mix keyed by a secret drawn at init. */
	uint64_t k = ((uint64_t)lip << 32 | rip) ^ s->cookie_key[0];
	k = (k ^ (k >> 33)) * 0xFF51AFD7ED558CCDULL;
	k ^= ((uint64_t)lport << 48 | (uint64_t)rport << 32 | peer_isn) + s->cookie_key[1];
	k = (k ^ (k >> 33)) * 0xC4CEB9FE1A85EC53ULL;
	k ^= ((uint64_t)t << 8 | mssi) ^ s->cookie_key[0];
	k = (k ^ (k >> 29)) * 0xBF58476D1CE4E5B9ULL;
	k ^= k >> 32;
	return (uint32_t)k & COOKIE_HASH_MASK;
}

static uint32_t cookie_tick(const struct myrio_stack *s)
{
	return (uint32_t)(s->now_ms >> COOKIE_TICK_SHIFT);
}

void tcp_syncookie_send(struct myrio_stack *s, struct myrio_tcp_listener *l, uint32_t lip,
			uint16_t lport, uint32_t rip, uint16_t rport, uint32_t peer_isn,
			const struct tcp_opts *o)
{
	uint32_t peer_mss = o->mss_ok ? o->mss : 536;
	uint32_t mssi = 0;
	while (mssi + 1 < MSS_TABLE_LEN && mss_table[mssi + 1] <= peer_mss)
		mssi++;
	uint32_t t = cookie_tick(s);
	uint32_t cookie = (t & 0x1f) << 27 | mssi << 24 |
			  cookie_hash(s, lip, lport, rip, rport, peer_isn, t, mssi);

	/* A throw-away connection record only to build the SYN-ACK. */
	struct myrio_tcp_conn tmp = {0};
	tmp.s = s;
	const struct myrio_stack_conf *cf = &s->conf;
	if (cf->timestamps && o->ts_ok && s->now_ms > TS_OPT_BITS) {
		tmp.cookie = true;
		tmp.ts_ok = true;
		tmp.ts_recent = o->tsval;
		tmp.sack_ok = cf->sack && o->sack_ok;
		tmp.ws_ok = cf->window_scale && o->ws_ok;
		tmp.snd_wscale = tmp.ws_ok ? (o->wscale > 14 ? 14 : o->wscale) : 0;
		tmp.rcv_wscale = tmp.ws_ok ? tcp_rcv_wscale(s) : 0;
	}
	tmp.lip = lip;
	tmp.lport = lport;
	tmp.rip = rip;
	tmp.rport = rport;
	tmp.state = MYRIO_TCP_SYN_RCVD;
	tmp.iss = cookie;
	tmp.irs = peer_isn;
	tmp.rcv_nxt = tmp.rcv_adv = peer_isn + 1;
	l->cookies_until_ms = s->now_ms + (((uint64_t)COOKIE_MAX_AGE + 1) << COOKIE_TICK_SHIFT);
	if (tcp_send_syn(&tmp) == 0)
		s->st.tcp_syncookies_sent++;
}

uint32_t tcp_syncookie_tsval(const struct myrio_tcp_conn *c)
{
	uint32_t now = (uint32_t)c->s->now_ms;
	uint32_t bits = (c->ws_ok ? c->snd_wscale : TS_WS_NONE) | (c->sack_ok ? TS_SACK : 0);
	uint32_t tsval = (now & ~TS_OPT_BITS) | bits;
	return tsval > now ? tsval - (TS_OPT_BITS + 1) : tsval;
}

/* The options a cookie's SYN-ACK agreed to, read back from the TSecr of the returning
 * ACK into c (not yet listed anywhere): false when that echo cannot be ours (from the
 * future, older than a cookie may be, or a window scale beyond 14). */
static bool cookie_opts(const struct myrio_stack *s, const struct tcp_opts *o,
			struct myrio_tcp_conn *c)
{
	*c = (struct myrio_tcp_conn){0};
	if (!o->ts_ok || !s->conf.timestamps)
		return true; /* the SYN-ACK offered MSS only */
	uint32_t age = (uint32_t)s->now_ms - o->tsecr;
	uint32_t ws = o->tsecr & TS_WS_NONE;
	if (age > ((uint32_t)COOKIE_MAX_AGE + 1) << COOKIE_TICK_SHIFT ||
	    (ws > 14 && ws != TS_WS_NONE))
		return false;
	c->ts_ok = true;
	c->ts_recent = o->tsval; /* a record only: its clock is stamped when it is copied */
	c->sack_ok = s->conf.sack && (o->tsecr & TS_SACK);
	c->ws_ok = s->conf.window_scale && ws != TS_WS_NONE;
	if (c->ws_ok) {
		c->snd_wscale = (uint8_t)ws;
		c->rcv_wscale = tcp_rcv_wscale(s);
	}
	return true;
}

struct myrio_tcp_conn *tcp_syncookie_check(struct myrio_stack *s, struct myrio_tcp_listener *l,
					   uint32_t lip, uint16_t lport, uint32_t rip,
					   uint16_t rport, uint32_t seq, uint32_t ack,
					   const struct tcp_opts *o, bool *valid)
{
	*valid = false;
	if (!l->cookies_until_ms || s->now_ms > l->cookies_until_ms)
		return NULL; /* no cookie sent lately: not worth a hash */
	uint32_t cookie = ack - 1, peer_isn = seq - 1;
	uint32_t now = cookie_tick(s);
	uint32_t t = now - ((now - (cookie >> 27)) & 0x1f);
	uint32_t mssi = (cookie >> 24) & 7;
	struct myrio_tcp_conn opts;
	if (now - t > COOKIE_MAX_AGE || mssi >= MSS_TABLE_LEN ||
	    (cookie & COOKIE_HASH_MASK) !=
		cookie_hash(s, lip, lport, rip, rport, peer_isn, t, mssi) ||
	    !cookie_opts(s, o, &opts)) {
		s->st.tcp_syncookies_failed++;
		return NULL;
	}
	*valid = true;
	struct myrio_tcp_conn *c = tcp_conn_alloc(s, lip, lport, rip, rport);
	if (!c)
		return NULL;
	s->st.tcp_syncookies_ok++;
	s->st.tcp_passive_opens++;
	c->passive = true;
	c->user = l->user;
	c->irs = peer_isn;
	c->rcv_nxt = c->rcv_adv = seq;
	c->ts_ok = opts.ts_ok;
	tcp_ts_recent_set(c, opts.ts_recent);
	c->sack_ok = opts.sack_ok;
	c->ws_ok = opts.ws_ok;
	c->snd_wscale = opts.snd_wscale;
	c->rcv_wscale = opts.rcv_wscale;
	const struct tcp_opts peer = {.mss = mss_table[mssi], .mss_ok = true};
	c->mss = tcp_send_mss(s, &peer, c->ts_ok);
	cc_init(c);
	c->iss = cookie;
	c->snd_una = cookie;
	c->snd_nxt = c->snd_max = c->snd_end = cookie + 1;
	c->snd_wl1 = peer_isn;
	c->snd_wl2 = cookie;
	c->state = MYRIO_TCP_SYN_RCVD;
	c->retries = 1; /* no RTT sample: the SYN-ACK's send time is unknown */
	c->rtt_start_us = s->now_us;
	return c;
}
