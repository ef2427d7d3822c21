/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP options: MSS, window scale (RFC 7323), SACK-permitted and SACK (RFC 2018),
 * timestamps (RFC 7323). Parsing never reads past the option area, whatever the lengths
 * on the wire say. */
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"

#define OPT_EOL 0
#define OPT_NOP 1
#define OPT_MSS 2
#define OPT_WS 3
#define OPT_SACK_OK 4
#define OPT_SACK 5
#define OPT_TS 8

/* The smallest MSS a peer may impose (Linux's tcp_min_snd_mss): tiny segments would make a
 * transfer cost a buffer and a frame per few bytes (CVE-2019-11479). */
#define TCP_MIN_SND_MSS 48u
/* The timestamp option as every segment carries it: two NOPs, kind, length, 8 bytes. */
#define TS_OPT_LEN 12u

void tcp_opts_parse(const uint8_t *opt, unsigned len, bool syn, struct tcp_opts *o)
{
	memset(o, 0, sizeof(*o));
	unsigned i = 0;
	while (i < len) {
		uint8_t kind = opt[i];
		if (kind == OPT_EOL)
			break;
		if (kind == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len || opt[i + 1] < 2 || i + opt[i + 1] > len) {
			o->malformed = true; /* runs past the header: ignore the rest */
			break;
		}
		uint8_t olen = opt[i + 1];
		const uint8_t *v = opt + i + 2;
		switch (kind) {
		case OPT_MSS:
			if (olen == 4 && syn) {
				o->mss = get_be16(v);
				o->mss_ok = true;
			}
			break;
		case OPT_WS:
			if (olen == 3 && syn) {
				o->wscale = v[0] > 14 ? 14 : v[0]; /* RFC 7323 §2.3 */
				o->ws_ok = true;
			}
			break;
		case OPT_SACK_OK:
			if (olen == 2 && syn)
				o->sack_ok = true;
			break;
		case OPT_TS:
			if (olen == 10) {
				o->tsval = get_be32(v);
				o->tsecr = get_be32(v + 4);
				o->ts_ok = true;
			}
			break;
		case OPT_SACK:
			if (olen >= 10 && (olen - 2) % 8 == 0 && !syn) {
				unsigned n = (olen - 2u) / 8u;
				for (unsigned k = 0; k < n && o->nsack < 4; k++) {
					o->sack[o->nsack][0] = get_be32(v + 8 * k);
					o->sack[o->nsack][1] = get_be32(v + 8 * k + 4);
					o->nsack++;
				}
			}
			break;
		default:
			break;
		}
		i += olen;
	}
}

static uint32_t ts_now(const struct myrio_tcp_conn *c)
{
	return (uint32_t)c->s->now_ms; /* 1 ms timestamp clock */
}

unsigned tcp_opts_write_syn(struct myrio_tcp_conn *c, uint8_t *opt, bool synack)
{
	const struct myrio_stack_conf *cf = &c->s->conf;
	unsigned n = 0;
	opt[n++] = OPT_MSS;
	opt[n++] = 4;
	put_be16(opt + n, c->s->mss);
	n += 2;
	bool sack = synack ? c->sack_ok : cf->sack;
	bool ts = synack ? c->ts_ok : cf->timestamps;
	bool ws = synack ? c->ws_ok : cf->window_scale;
	if (sack && ts) {
		opt[n++] = OPT_SACK_OK;
		opt[n++] = 2;
	} else if (sack) {
		opt[n++] = OPT_NOP;
		opt[n++] = OPT_NOP;
		opt[n++] = OPT_SACK_OK;
		opt[n++] = 2;
	}
	if (ts) {
		if (!sack) {
			opt[n++] = OPT_NOP;
			opt[n++] = OPT_NOP;
		}
		opt[n++] = OPT_TS;
		opt[n++] = 10;
		put_be32(opt + n, c->cookie ? tcp_syncookie_tsval(c) : ts_now(c));
		put_be32(opt + n + 4, synack ? c->ts_recent : 0);
		n += 8;
	}
	if (ws) {
		opt[n++] = OPT_NOP;
		opt[n++] = OPT_WS;
		opt[n++] = 3;
		opt[n++] = c->rcv_wscale;
	}
	return n;
}

uint16_t tcp_send_mss(const struct myrio_stack *s, const struct tcp_opts *o, bool ts)
{
	/* RFC 9293 §3.7.1 / RFC 6691: the option carries the peer's largest payload without
	 * options (536 when absent); ours bounds it, the floor keeps it sane, and the options
	 * every segment carries come off last, so no peer value can make it wrap. */
	uint32_t mss = o->mss_ok ? o->mss : 536;
	if (mss > s->mss)
		mss = s->mss;
	if (mss < TCP_MIN_SND_MSS)
		mss = TCP_MIN_SND_MSS;
	return (uint16_t)(mss - (ts ? TS_OPT_LEN : 0));
}

unsigned tcp_opts_len(struct myrio_tcp_conn *c, bool with_sack)
{
	unsigned n = c->ts_ok ? TS_OPT_LEN : 0;
	if (with_sack && c->sack_ok && c->ooo) {
		uint32_t b[4][2];
		unsigned nb = tcp_sack_blocks(c, b, c->ts_ok ? 3 : 4);
		if (nb)
			n += 4 + 8 * nb;
	}
	return n;
}

unsigned tcp_opts_write(struct myrio_tcp_conn *c, uint8_t *opt, bool with_sack)
{
	unsigned n = 0;
	if (c->ts_ok) {
		opt[n++] = OPT_NOP;
		opt[n++] = OPT_NOP;
		opt[n++] = OPT_TS;
		opt[n++] = 10;
		put_be32(opt + n, ts_now(c));
		put_be32(opt + n + 4, c->ts_recent);
		n += 8;
	}
	if (with_sack && c->sack_ok && c->ooo) {
		uint32_t b[4][2];
		unsigned nb = tcp_sack_blocks(c, b, c->ts_ok ? 3 : 4);
		if (nb) {
			opt[n++] = OPT_NOP;
			opt[n++] = OPT_NOP;
			opt[n++] = OPT_SACK;
			opt[n++] = (uint8_t)(2 + 8 * nb);
			for (unsigned k = 0; k < nb; k++) {
				put_be32(opt + n, b[k][0]);
				put_be32(opt + n + 4, b[k][1]);
				n += 8;
			}
		}
	}
	return n;
}
