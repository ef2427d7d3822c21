/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs one scripted segment test (format: docs/tcp_scripts.md): a tcp_lite stack on one end
 * of a pair link with a fake clock, the script on the other end injecting frames, expecting
 * the stack's answers within time bounds, calling the API and asserting on state and
 * counters. Every frame the stack sends is checked (length within the MTU, IP and TCP
 * headers consistent, checksums right, payload equal to what the application wrote).
 *
 * Usage: tcp_script FILE.pkt. Exit 0 when every line held, 1 at the first that did not. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/raw_peer.h"

#define MAX_TOK 32
#define MAX_HELD 64
#define TCP_OPT_MAX 40

struct frame {
	enum { FR_TCP, FR_ARP, FR_ICMP, FR_OTHER } kind;
	uint64_t at_ms;
	struct myrio_pkt *p;
	const uint8_t *ip; /* IPv4 header (TCP, ICMP) */
	struct tcpv t;
};

struct script {
	const char *path;
	unsigned line;
	const char *covers; /* the "#! covers" header: which defect the script tests */
	struct raw r;
	struct myrio_stack_conf conf;
	uint32_t mtu;
	bool dynamic_arp, up;

	uint16_t peer_port, stack_port;
	uint32_t peer_isn, peer_nxt;   /* absolute */
	uint32_t stack_isn, stack_max; /* absolute; stack_max: after its highest byte */
	uint32_t stack_tsval;	       /* the stack's last TSval */
	bool stack_isn_known, ts_on;   /* ts_on: segments carry timestamps by default */
	uint16_t peer_win;
	struct frame q[MAX_CAP]; /* frames the stack sent, not yet matched */
	unsigned nq;
	uint8_t last_tcp[60]; /* IP header + 8 bytes of the stack's last TCP segment (ICMP) */
	bool have_last_tcp;
	uint64_t tx_bad_seen;

	struct myrio_tcp_listener *l;
	struct myrio_tcp_conn *c;
	struct myrio_pkt *held[MAX_HELD];
	unsigned nheld;
	int64_t last_write, last_read;
	uint64_t app_written; /* bytes the application has handed to the stack */
	uint64_t app_read;    /* bytes it read (checked against the peer's pattern) */
};

static struct script S;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%u: ", S.path, S.line);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nFAILED%s%s\n", S.covers ? " -- covers " : "", S.covers ? S.covers : "");
	exit(1);
}

/* Payload byte at stream offset i: the application's stream and the peer's differ. */
static uint8_t app_byte(uint64_t i)
{
	return (uint8_t)(i * 13 + 5);
}
static uint8_t peer_byte(uint64_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static uint64_t now_ms(void)
{
	return S.r.now_ns / 1000000ull;
}

/* ---- numbers and addresses ---- */

static long long num(const char *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 0);
	if (errno || end == v || *end)
		fail("not a number: '%s'", v);
	return x;
}

static uint32_t ip_addr(const char *v)
{
	unsigned a, b, c, d;
	if (sscanf(v, "%u.%u.%u.%u", &a, &b, &c, &d) != 4 || a > 255 || b > 255 || c > 255 ||
	    d > 255)
		fail("not an IPv4 address: '%s'", v);
	return a << 24 | b << 16 | c << 8 | d;
}

static const char *const state_names[] = {
    "CLOSED",	  "LISTEN",	"SYN_SENT", "SYN_RCVD", "ESTABLISHED", "FIN_WAIT_1",
    "FIN_WAIT_2", "CLOSE_WAIT", "CLOSING",  "LAST_ACK", "TIME_WAIT",
};

static const struct {
	const char *name;
	int value;
} errnos[] = {
    {"0", 0},
    {"ECONNRESET", -ECONNRESET},
    {"ECONNREFUSED", -ECONNREFUSED},
    {"ETIMEDOUT", -ETIMEDOUT},
    {"EHOSTUNREACH", -EHOSTUNREACH},
    {"ENETUNREACH", -ENETUNREACH},
    {"EPIPE", -EPIPE},
    {"EAGAIN", -EAGAIN},
    {"ENOTCONN", -ENOTCONN},
    {"EMSGSIZE", -EMSGSIZE},
};

static const char *const event_names[] = {
    "", "ACCEPTED", "CONNECTED", "READABLE", "WRITABLE", "CLOSED", "ERROR",
};

/* A value on the right of an assertion: a number, a state, an errno or an event name. */
static long long value_of(const char *v)
{
	for (unsigned i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (strcmp(v, state_names[i]) == 0)
			return i;
	for (unsigned i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (strcmp(v, errnos[i].name) == 0)
			return errnos[i].value;
	return num(v);
}

/* key OP value, OP one of = != <= >= < > */
struct cmp {
	char key[48];
	char op[3];
	const char *val;
};

static bool split_cmp(const char *tok, struct cmp *c)
{
	size_t k = strcspn(tok, "=!<>");
	if (k == 0 || k >= sizeof(c->key) || !tok[k])
		return false;
	memcpy(c->key, tok, k);
	c->key[k] = '\0';
	size_t o = (tok[k + 1] == '=') ? 2 : 1;
	memcpy(c->op, tok + k, o);
	c->op[o] = '\0';
	c->val = tok + k + o;
	return true;
}

static bool holds(long long a, const char *op, long long b)
{
	if (!strcmp(op, "="))
		return a == b;
	if (!strcmp(op, "!="))
		return a != b;
	if (!strcmp(op, "<="))
		return a <= b;
	if (!strcmp(op, ">="))
		return a >= b;
	if (!strcmp(op, "<"))
		return a < b;
	if (!strcmp(op, ">"))
		return a > b;
	fail("unknown comparison '%s'", op);
	return false;
}

/* ---- the stack's frames ---- */

static void frame_check_tcp(struct frame *f, uint32_t len)
{
	const uint8_t *ip = myrio_pkt_data(f->p) + 14;
	uint16_t tot = get_be16(ip + 2);
	uint32_t ihl = (ip[0] & 15u) * 4u;
	if (ihl != 20 || tot < 40 || tot + 14u > len || tot > S.mtu)
		fail("stack sent a bad IPv4 frame: %u bytes, IP total length %u, MTU %u", len, tot,
		     S.mtu);
	if (csum_fold(csum_add(0, ip, 20)) != 0xffff)
		fail("stack sent a bad IPv4 header checksum");
	const uint8_t *th = ip + 20;
	uint16_t l4len = (uint16_t)(tot - 20);
	unsigned hl = (th[12] >> 4) * 4u;
	if (hl < 20 || hl > l4len)
		fail("stack sent a TCP header of %u bytes in %u", hl, l4len);
	if (l4_csum(get_be32(ip + 12), get_be32(ip + 16), 6, th, l4len) != 0)
		fail("stack sent a bad TCP checksum");
	struct tcpv *v = &f->t;
	v->sport = get_be16(th);
	v->dport = get_be16(th + 2);
	v->seq = get_be32(th + 4);
	v->ack = get_be32(th + 8);
	v->flags = th[13];
	v->win = get_be16(th + 14);
	v->opts = th + 20;
	v->optlen = hl - 20;
	v->data = th + hl;
	v->len = l4len - hl;
	f->ip = ip;
	if (v->flags & F_SYN) {
		S.stack_isn = v->seq;
		S.stack_isn_known = true;
		S.stack_max = v->seq + 1;
		S.stack_port = v->sport;
	}
	uint32_t end = v->seq + v->len + ((v->flags & (F_SYN | F_FIN)) ? 1u : 0u);
	if ((int32_t)(end - S.stack_max) > 0)
		S.stack_max = end;
	int k = find_opt(v->opts, v->optlen, 8);
	if (k >= 0 && (unsigned)k + 10 <= v->optlen)
		S.stack_tsval = get_be32(v->opts + k + 2);
	/* payload must be the application's bytes at that stream offset */
	for (unsigned i = 0; i < v->len; i++) {
		uint64_t off = (uint32_t)(v->seq + i - S.stack_isn - 1);
		if (v->data[i] != app_byte(off))
			fail("stack sent byte %u of seq %u wrong: 0x%02x, not 0x%02x", i,
			     v->seq - S.stack_isn, v->data[i], app_byte(off));
	}
	memcpy(S.last_tcp, ip, 28);
	S.have_last_tcp = true;
}

static void frame_take(struct myrio_pkt *p)
{
	if (S.nq == MAX_CAP)
		fail("more than %u frames from the stack left unmatched", MAX_CAP);
	struct frame *f = &S.q[S.nq++];
	memset(f, 0, sizeof(*f));
	f->p = p;
	f->at_ms = now_ms();
	const uint8_t *d = myrio_pkt_data(p);
	if (p->len < 14 || p->len > S.mtu + 14)
		fail("stack sent a frame of %u bytes (MTU %u)", p->len, S.mtu);
	uint16_t type = get_be16(d + 12);
	if (type == 0x0806)
		f->kind = FR_ARP;
	else if (type == 0x0800 && p->len >= 34 && d[23] == 6)
		f->kind = FR_TCP, frame_check_tcp(f, p->len);
	else if (type == 0x0800 && p->len >= 34 && d[23] == 1)
		f->kind = FR_ICMP, f->ip = d + 14;
	else
		f->kind = FR_OTHER;
}

static void poll_stack(void)
{
	myrio_stack_poll(S.r.s);
	struct myrio_pkt *in[64];
	uint16_t n;
	while ((n = S.r.pp->ops->rx_burst(S.r.pp, in, 64)) > 0)
		for (uint16_t i = 0; i < n; i++)
			frame_take(in[i]);
	/* a frame the port refused (too long) never reaches us: the port counts it */
	struct myrio_port_stats ps;
	S.r.sp->ops->stats(S.r.sp, &ps);
	if (ps.tx_dropped_bad != S.tx_bad_seen)
		fail("the port refused %llu frame(s) the stack sent (longer than the MTU)",
		     (unsigned long long)(ps.tx_dropped_bad - S.tx_bad_seen));
	if (S.r.last_conn && !S.c) {
		S.c = S.r.last_conn;
		S.r.last_conn = NULL;
	}
}

static void tick_ms(uint64_t ms)
{
	for (uint64_t i = 0; i < ms; i++) {
		raw_advance_ms(&S.r, 1);
		poll_stack();
	}
}

static void frame_drop(unsigned i)
{
	myrio_pkt_free(S.q[i].p);
	memmove(&S.q[i], &S.q[i + 1], (S.nq - i - 1) * sizeof(S.q[0]));
	S.nq--;
}

static int frame_find(int kind)
{
	for (unsigned i = 0; i < S.nq; i++)
		if ((int)S.q[i].kind == kind)
			return (int)i;
	return -1;
}

/* ---- stack set-up ---- */

static void conf_tweak(struct myrio_stack_conf *c)
{
	struct myrio_stack_conf keep = *c;
	*c = S.conf;
	c->clock = keep.clock;
	c->clock_arg = keep.clock_arg;
	c->tcp_event = keep.tcp_event;
	c->udp_event = keep.udp_event;
	c->event_arg = keep.event_arg;
	c->ip = keep.ip;
	c->netmask = keep.netmask;
}

static void stack_up(void)
{
	if (S.up)
		return;
	struct raw *r = &S.r;
	r->now_ns = 5000000000ull;
	struct myrio_port_conf pc;
	memset(&pc, 0, sizeof(pc));
	pc.mtu = S.mtu;
	char dev[96];
	snprintf(dev, sizeof(dev), "pair:script%d/0", (int)getpid());
	if (myrio_pair_port_open(dev, &pc, &r->sp) < 0)
		fail("pair port");
	snprintf(dev, sizeof(dev), "pair:script%d/1", (int)getpid());
	if (myrio_pair_port_open(dev, &pc, &r->pp) < 0)
		fail("pair port");
	if (myrio_pool_create_in(NULL, 512, 9216 + 256, &r->pool) < 0)
		fail("pool");
	if (raw_stack_up(r, conf_tweak, !S.dynamic_arp) < 0)
		fail("stack create");
	S.up = true;
}

static void cmd_stack(char **tok, int n)
{
	if (S.up)
		fail("'stack' must come before the first action");
	for (int i = 1; i < n; i++) {
		struct cmp c;
		if (!split_cmp(tok[i], &c) || strcmp(c.op, "="))
			fail("stack: expected key=value, got '%s'", tok[i]);
		const char *k = c.key;
		long long v = strcmp(k, "cc") ? num(c.val) : 0;
		if (!strcmp(k, "mtu"))
			S.mtu = (uint32_t)v;
		else if (!strcmp(k, "mss"))
			S.conf.mss = (uint16_t)v;
		else if (!strcmp(k, "sack"))
			S.conf.sack = v;
		else if (!strcmp(k, "ts"))
			S.conf.timestamps = v;
		else if (!strcmp(k, "ws"))
			S.conf.window_scale = v;
		else if (!strcmp(k, "nagle"))
			S.conf.nagle = v;
		else if (!strcmp(k, "delack"))
			S.conf.delayed_ack_ms = (uint32_t)v;
		else if (!strcmp(k, "rcvbuf"))
			S.conf.rcv_buf = (uint32_t)v;
		else if (!strcmp(k, "sndq"))
			S.conf.snd_queue_segs = (uint32_t)v;
		else if (!strcmp(k, "ooo"))
			S.conf.ooo_max_segs = (uint32_t)v;
		else if (!strcmp(k, "rto_min"))
			S.conf.rto_min_ms = (uint32_t)v;
		else if (!strcmp(k, "rto_initial"))
			S.conf.rto_initial_ms = (uint32_t)v;
		else if (!strcmp(k, "retries"))
			S.conf.max_retries = (uint32_t)v;
		else if (!strcmp(k, "syn_retries"))
			S.conf.syn_retries = (uint32_t)v;
		else if (!strcmp(k, "time_wait"))
			S.conf.time_wait_ms = (uint32_t)v;
		else if (!strcmp(k, "challenge_limit"))
			S.conf.challenge_ack_limit = (uint32_t)v;
		else if (!strcmp(k, "tso"))
			S.conf.tso = v;
		else if (!strcmp(k, "arp"))
			S.dynamic_arp = v == 0;
		else if (!strcmp(k, "cc"))
			S.conf.cc =
			    !strcmp(c.val, "cubic") ? MYRIO_TCP_CC_CUBIC : MYRIO_TCP_CC_NEWRENO;
		else
			fail("stack: unknown key '%s'", k);
	}
}

/* ---- segments from the peer ---- */

/* opts=mss:N,ws:N,sackok,ts[:V:E],nop,eol,sack:A-B[:C-D...],none (sequence numbers of SACK
 * blocks relative to the stack's ISN) */
static unsigned build_opts(const char *spec, uint8_t *o)
{
	unsigned n = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n + 10 > TCP_OPT_MAX + 10)
			fail("options longer than 40 bytes");
		if (!strcmp(t, "none"))
			continue;
		if (!strcmp(t, "nop")) {
			o[n++] = 1;
		} else if (!strcmp(t, "eol")) {
			o[n++] = 0;
		} else if (!strcmp(t, "sackok")) {
			o[n++] = 4, o[n++] = 2;
		} else if (!strncmp(t, "mss:", 4)) {
			o[n++] = 2, o[n++] = 4;
			put_be16(o + n, (uint16_t)num(t + 4));
			n += 2;
		} else if (!strncmp(t, "ws:", 3)) {
			o[n++] = 3, o[n++] = 3, o[n++] = (uint8_t)num(t + 3);
		} else if (!strncmp(t, "ts", 2) && (t[2] == 0 || t[2] == ':')) {
			uint32_t val = (uint32_t)now_ms() + 1, ecr = S.stack_tsval;
			if (t[2] == ':') {
				char *colon = strchr(t + 3, ':');
				if (!colon)
					fail("ts:VAL:ECR expected");
				*colon = 0;
				val = (uint32_t)num(t + 3);
				ecr = (uint32_t)num(colon + 1);
			}
			o[n++] = 8, o[n++] = 10;
			put_be32(o + n, val);
			put_be32(o + n + 4, ecr);
			n += 8;
		} else if (!strncmp(t, "sack:", 5)) {
			unsigned start = n;
			o[n++] = 5, o[n++] = 2;
			char *bsave = NULL;
			for (char *b = strtok_r(t + 5, ":", &bsave); b;
			     b = strtok_r(NULL, ":", &bsave)) {
				char *dash = strchr(b, '-');
				if (!dash || n + 8 > TCP_OPT_MAX)
					fail("sack:A-B[:C-D] expected");
				*dash = 0;
				put_be32(o + n, S.stack_isn + (uint32_t)num(b));
				put_be32(o + n + 4, S.stack_isn + (uint32_t)num(dash + 1));
				n += 8;
				o[start + 1] = (uint8_t)(o[start + 1] + 8);
			}
		} else {
			fail("unknown option '%s'", t);
		}
	}
	while (n % 4)
		o[n++] = 1;
	if (n > TCP_OPT_MAX)
		fail("options longer than 40 bytes");
	return n;
}

static uint8_t parse_flags(const char *f)
{
	uint8_t x = 0;
	for (; *f; f++) {
		switch (*f) {
		case 'S':
			x |= F_SYN;
			break;
		case 'F':
			x |= F_FIN;
			break;
		case 'R':
			x |= F_RST;
			break;
		case 'P':
			x |= F_PSH;
			break;
		case '.':
			x |= F_ACK;
			break;
		case 'E':
			x |= 0x40;
			break;
		case 'W':
			x |= 0x80;
			break;
		case 'U':
			x |= 0x20;
			break;
		default:
			fail("unknown flag '%c' in '%s'", *f, f);
		}
	}
	return x;
}

/* Rewrites the source address of a built frame and its checksums. */
static void frame_set_src(uint8_t *f, uint32_t src)
{
	uint8_t *ip = f + 14, *th = ip + 20;
	uint16_t l4len = (uint16_t)(get_be16(ip + 2) - 20);
	put_be32(ip + 12, src);
	put_be16(ip + 10, 0);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
	put_be16(th + 16, 0);
	put_be16(th + 16, l4_csum(src, get_be32(ip + 16), 6, th, l4len));
}

static void send_frame(uint8_t *f, uint32_t n)
{
	memcpy(f, S.r.smac, 6);
	if (n < 60)
		memset(f + n, 0, 60 - n);
	raw_send(&S.r, f, n < 60 ? 60 : n);
	poll_stack();
}

static void cmd_inject_tcp(char **tok, int n)
{
	stack_up();
	struct tcpf t;
	memset(&t, 0, sizeof(t));
	t.flags = parse_flags(tok[1]);
	t.sport = S.peer_port;
	t.dport = S.stack_port;
	t.seq = S.peer_nxt;
	t.ack = S.stack_max;
	t.win = S.peer_win;
	uint8_t opts[TCP_OPT_MAX + 12];
	static uint8_t payload[9000];
	bool opts_given = false, bad_csum = false;
	uint32_t src = PEER_IP;
	long long len = 0;
	for (int i = 2; i < n; i++) {
		struct cmp c;
		if (!split_cmp(tok[i], &c) || strcmp(c.op, "="))
			fail("expected key=value, got '%s'", tok[i]);
		if (!strcmp(c.key, "seq"))
			t.seq = S.peer_isn + (uint32_t)num(c.val);
		else if (!strcmp(c.key, "ack"))
			t.ack = S.stack_isn + (uint32_t)num(c.val);
		else if (!strcmp(c.key, "win"))
			t.win = (uint16_t)num(c.val), S.peer_win = t.win;
		else if (!strcmp(c.key, "len"))
			len = num(c.val);
		else if (!strcmp(c.key, "opts"))
			t.optlen = (uint8_t)build_opts(c.val, opts), opts_given = true;
		else if (!strcmp(c.key, "src"))
			src = ip_addr(c.val);
		else if (!strcmp(c.key, "sport"))
			t.sport = (uint16_t)num(c.val);
		else if (!strcmp(c.key, "dport"))
			t.dport = (uint16_t)num(c.val);
		else if (!strcmp(c.key, "csum"))
			bad_csum = !strcmp(c.val, "bad");
		else
			fail("unknown key '%s'", c.key);
	}
	if (len < 0 || len > (long long)sizeof(payload))
		fail("len %lld out of range", len);
	if (!opts_given && S.ts_on && !(t.flags & F_RST))
		t.optlen = (uint8_t)build_opts("nop,nop,ts", opts);
	if ((t.flags & F_SYN) && opts_given)
		S.ts_on = find_opt(opts, t.optlen, 8) >= 0;
	t.opts = opts;
	uint32_t rel = t.seq - S.peer_isn - 1 + ((t.flags & F_SYN) ? 1u : 0u);
	for (long long i = 0; i < len; i++)
		payload[i] = peer_byte(rel + (uint64_t)i);
	t.data = payload;
	t.len = (uint16_t)len;
	uint32_t end =
	    t.seq + (uint32_t)len + ((t.flags & F_SYN) ? 1u : 0u) + ((t.flags & F_FIN) ? 1u : 0u);
	if ((int32_t)(end - S.peer_nxt) > 0 || (t.flags & F_SYN))
		S.peer_nxt = end;
	static uint8_t f[9216];
	uint32_t fl = build_tcp(f, &t);
	if (src != PEER_IP)
		frame_set_src(f, src);
	if (bad_csum)
		f[14 + 20 + 16] ^= 0x5a;
	send_frame(f, fl);
}

/* < icmp unreach code=N [mtu=N] [quote_seq=N] [src=IP]: quotes the stack's last TCP
 * segment (its IP header and 8 bytes of TCP, RFC 792), as a router or host would. */
static void cmd_inject_icmp(char **tok, int n)
{
	stack_up();
	if (!S.have_last_tcp)
		fail("icmp: no TCP segment from the stack to quote yet");
	uint8_t type = 3, code = 3;
	uint16_t mtu = 0;
	uint32_t src = PEER_IP;
	uint8_t quote[28];
	memcpy(quote, S.last_tcp, 28);
	for (int i = 2; i < n; i++) {
		struct cmp c;
		if (!split_cmp(tok[i], &c))
			fail("expected key=value, got '%s'", tok[i]);
		if (!strcmp(c.key, "type"))
			type = (uint8_t)num(c.val);
		else if (!strcmp(c.key, "code"))
			code = (uint8_t)num(c.val);
		else if (!strcmp(c.key, "mtu"))
			mtu = (uint16_t)num(c.val);
		else if (!strcmp(c.key, "src"))
			src = ip_addr(c.val);
		else if (!strcmp(c.key, "quote_seq"))
			put_be32(quote + 24, S.stack_isn + (uint32_t)num(c.val));
		else
			fail("unknown key '%s'", c.key);
	}
	if (strcmp(tok[1], "unreach"))
		type = (uint8_t)num(tok[1]);
	uint8_t f[128];
	uint32_t off = build_eth(f, NULL, 0x0800);
	off += build_ip(f + off, 1, src, STACK_IP, 8 + 28);
	uint8_t *ic = f + off;
	ic[0] = type;
	ic[1] = code;
	put_be16(ic + 2, 0);
	put_be16(ic + 4, 0);
	put_be16(ic + 6, mtu);
	memcpy(ic + 8, quote, 28);
	put_be16(ic + 2, csum_finish(csum_add(0, ic, 36)));
	send_frame(f, off + 36);
}

/* < arp request|reply sip=IP tip=IP */
static void cmd_inject_arp(char **tok, int n)
{
	stack_up();
	uint32_t sip = PEER_IP, tip = STACK_IP;
	for (int i = 2; i < n; i++) {
		struct cmp c;
		if (!split_cmp(tok[i], &c))
			fail("expected key=value, got '%s'", tok[i]);
		if (!strcmp(c.key, "sip"))
			sip = ip_addr(c.val);
		else if (!strcmp(c.key, "tip"))
			tip = ip_addr(c.val);
		else
			fail("unknown key '%s'", c.key);
	}
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t f[60];
	memset(f, 0, sizeof(f));
	build_eth(f, bcast, 0x0806);
	put_be16(f + 14, 1);
	put_be16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put_be16(f + 20, !strcmp(tok[1], "reply") ? 2 : 1);
	memcpy(f + 22, peer_mac, 6);
	put_be32(f + 28, sip);
	put_be32(f + 38, tip);
	raw_send(&S.r, f, 60);
	poll_stack();
}

/* ---- expectations ---- */

static long long opt_value(const struct tcpv *v, const char *key, const char *want)
{
	int k;
	if (!strcmp(key, "mss"))
		return (k = find_opt(v->opts, v->optlen, 2)) >= 0 ? get_be16(v->opts + k + 2) : -1;
	if (!strcmp(key, "ws"))
		return (k = find_opt(v->opts, v->optlen, 3)) >= 0 ? v->opts[k + 2] : -1;
	if (!strcmp(key, "sackok"))
		return find_opt(v->opts, v->optlen, 4) >= 0;
	if (!strcmp(key, "ts"))
		return find_opt(v->opts, v->optlen, 8) >= 0;
	if (!strcmp(key, "tsecr"))
		return (k = find_opt(v->opts, v->optlen, 8)) >= 0
			   ? (long long)get_be32(v->opts + k + 6)
			   : -1;
	if (!strcmp(key, "nsack"))
		return (k = find_opt(v->opts, v->optlen, 5)) >= 0 ? (v->opts[k + 1] - 2) / 8 : 0;
	if (!strcmp(key, "sack")) {
		/* the blocks, relative to the stack's view of our ISN, as A-B:C-D */
		char got[128] = "";
		k = find_opt(v->opts, v->optlen, 5);
		for (int b = 0; k >= 0 && b < (v->opts[k + 1] - 2) / 8; b++) {
			const uint8_t *p = v->opts + k + 2 + 8 * b;
			size_t l = strlen(got);
			snprintf(got + l, sizeof(got) - l, "%s%u-%u", b ? ":" : "",
				 get_be32(p) - S.peer_isn, get_be32(p + 4) - S.peer_isn);
		}
		return strcmp(got, want) == 0 ? 0 : (fprintf(stderr, "sack blocks: %s\n", got), 1);
	}
	fail("unknown segment field '%s'", key);
	return 0;
}

static void check_segment(const struct frame *f, char **tok, int n, const char *flags)
{
	const struct tcpv *v = &f->t;
	uint8_t want = parse_flags(flags);
	if ((v->flags & ~F_PSH) != (want & ~F_PSH))
		fail("expected flags %s, the stack sent 0x%02x (seq %u ack %u len %u)", flags,
		     v->flags, v->seq - S.stack_isn, v->ack - S.peer_isn, v->len);
	for (int i = 2; i < n; i++) {
		struct cmp c;
		if (!split_cmp(tok[i], &c))
			fail("expected key OP value, got '%s'", tok[i]);
		if (!strcmp(c.key, "within") || !strcmp(c.key, "count"))
			continue;
		long long got;
		if (!strcmp(c.key, "seq"))
			got = (uint32_t)(v->seq - S.stack_isn);
		else if (!strcmp(c.key, "ack"))
			got = (uint32_t)(v->ack - S.peer_isn);
		else if (!strcmp(c.key, "win"))
			got = v->win;
		else if (!strcmp(c.key, "len"))
			got = v->len;
		else if (!strcmp(c.key, "sport"))
			got = v->sport;
		else if (!strcmp(c.key, "dport"))
			got = v->dport;
		else if (!strcmp(c.key, "sack")) {
			if (opt_value(v, "sack", c.val))
				fail("SACK blocks differ from %s", c.val);
			continue;
		} else
			got = opt_value(v, c.key, c.val);
		if (!holds(got, c.op, value_of(c.val)))
			fail("segment %s: %s is %lld, expected %s%s (seq %u ack %u len %u)", flags,
			     c.key, got, c.op, c.val, v->seq - S.stack_isn, v->ack - S.peer_isn,
			     v->len);
	}
}

/* "within" bounds of an expectation: within=D or within=A..B, ms from now. */
static void within_of(char **tok, int n, uint64_t *lo, uint64_t *hi, long long *count)
{
	*lo = 0, *hi = 0, *count = 1;
	for (int i = 2; i < n; i++) {
		if (!strncmp(tok[i], "within=", 7)) {
			const char *v = tok[i] + 7, *dots = strstr(v, "..");
			if (dots) {
				char a[32];
				snprintf(a, sizeof(a), "%.*s", (int)(dots - v), v);
				*lo = (uint64_t)num(a);
				*hi = (uint64_t)num(dots + 2);
			} else {
				*hi = (uint64_t)num(v);
			}
		} else if (!strncmp(tok[i], "count=", 6)) {
			*count = num(tok[i] + 6);
		}
	}
}

static const char *kind_name(int kind)
{
	return kind == FR_TCP ? "TCP segment" : kind == FR_ARP ? "ARP frame" : "ICMP message";
}

/* Waits (moving the clock) until a frame of that kind arrives, up to hi ms. */
static int await(int kind, uint64_t lo, uint64_t hi, const char *what)
{
	uint64_t start = now_ms();
	poll_stack();
	int i;
	while ((i = frame_find(kind)) < 0 && now_ms() - start < hi)
		tick_ms(1);
	if (i < 0)
		fail("no %s (%s) within %llu ms", kind_name(kind), what, (unsigned long long)hi);
	uint64_t at = S.q[i].at_ms;
	if (at < start + lo)
		fail("%s (%s) came after %lld ms, expected no sooner than %llu ms", kind_name(kind),
		     what, (long long)(at - start), (unsigned long long)lo);
	return i;
}

static void cmd_expect_frame(char **tok, int n)
{
	stack_up();
	uint64_t lo, hi;
	long long count;
	within_of(tok, n, &lo, &hi, &count);
	if (!strcmp(tok[1], "none")) {
		/* nothing of that kind may come within hi ms */
		int kind = n > 2 && !strcmp(tok[2], "arp")    ? FR_ARP
			   : n > 2 && !strcmp(tok[2], "icmp") ? FR_ICMP
							      : FR_TCP;
		uint64_t start = now_ms();
		poll_stack();
		while (frame_find(kind) < 0 && now_ms() - start < hi)
			tick_ms(1);
		int i = frame_find(kind);
		if (i >= 0) {
			const struct tcpv *v = &S.q[i].t;
			fail(
			    "expected no %s, got one after %llu ms (flags 0x%02x seq %u ack %u len "
			    "%u)",
			    kind_name(kind), (unsigned long long)(S.q[i].at_ms - start), v->flags,
			    v->seq - S.stack_isn, v->ack - S.peer_isn, v->len);
		}
		return;
	}
	if (!strcmp(tok[1], "arp")) {
		int i = await(FR_ARP, lo, hi, "ARP");
		const uint8_t *a = myrio_pkt_data(S.q[i].p) + 14;
		uint16_t op = get_be16(a + 6);
		if (n > 2 && !strcmp(tok[2], "reply") && op != 2)
			fail("expected an ARP reply, got op %u", op);
		if (n > 2 && !strcmp(tok[2], "request") && op != 1)
			fail("expected an ARP request, got op %u", op);
		frame_drop((unsigned)i);
		return;
	}
	if (!strcmp(tok[1], "icmp")) {
		int i = await(FR_ICMP, lo, hi, "ICMP");
		const uint8_t *ic = S.q[i].ip + 20;
		for (int k = 2; k < n; k++) {
			struct cmp c;
			if (!split_cmp(tok[k], &c) || !strcmp(c.key, "within"))
				continue;
			long long got = !strcmp(c.key, "type")	 ? ic[0]
					: !strcmp(c.key, "code") ? ic[1]
								 : -1;
			if (!holds(got, c.op, num(c.val)))
				fail("ICMP %s is %lld, expected %s%s", c.key, got, c.op, c.val);
		}
		frame_drop((unsigned)i);
		return;
	}
	for (long long k = 0; k < count; k++) {
		int i = await(FR_TCP, k ? 0 : lo, hi, tok[1]);
		check_segment(&S.q[i], tok, n, tok[1]);
		frame_drop((unsigned)i);
	}
}

/* ---- application calls and assertions ---- */

static long long conn_field(const char *key)
{
	if (!S.c)
		fail("no connection to ask for '%s'", key);
	struct myrio_tcp_conn_stats st;
	myrio_tcp_conn_stats(S.c, &st);
#define FIELD(name)                                                                                \
	if (!strcmp(key, #name))                                                                   \
		return (long long)st.name;
	FIELD(retransmits)
	FIELD(fast_retransmits)
	FIELD(rto_expired)
	FIELD(ooo_segs)
	FIELD(dup_segs)
	FIELD(drops_out_of_window)
	FIELD(zero_window_probes)
	FIELD(challenge_acks)
	FIELD(srtt_us)
	FIELD(rto_ms)
	FIELD(cwnd)
	FIELD(ssthresh)
	FIELD(snd_wnd)
	FIELD(rcv_wnd)
	FIELD(mss)
	FIELD(unacked_segs)
	FIELD(queued_segs)
	FIELD(segs_out)
	FIELD(bytes_in)
	FIELD(bytes_out)
#undef FIELD
	fail("unknown connection field '%s'", key);
	return 0;
}

static long long stack_counter(const char *key)
{
	static char buf[16384];
	myrio_stack_stats_format(S.r.s, buf, sizeof(buf));
	size_t kl = strlen(key);
	for (char *l = buf; *l; l = strchr(l, '\n') + 1) {
		if (!strncmp(l, key, kl) && l[kl] == ' ')
			return atoll(l + kl + 1);
		if (!strchr(l, '\n'))
			break;
	}
	fail("unknown stack counter '%s'", key);
	return 0;
}

static long long fact(const char *key)
{
	if (!strncmp(key, "stat.", 5))
		return stack_counter(key + 5);
	if (!strncmp(key, "conn.", 5))
		return conn_field(key + 5);
	if (!strncmp(key, "ev.", 3)) {
		for (unsigned i = 1; i < sizeof(event_names) / sizeof(event_names[0]); i++)
			if (!strcmp(key + 3, event_names[i]))
				return S.r.ev_count[i];
		fail("unknown event '%s'", key + 3);
	}
	if (!strcmp(key, "written"))
		return S.last_write;
	if (!strcmp(key, "read"))
		return S.last_read;
	if (!strcmp(key, "conn"))
		return S.c != NULL;
	if (!strcmp(key, "unmatched"))
		return S.nq;
	if (!S.c)
		fail("no connection to ask for '%s'", key);
	if (!strcmp(key, "state"))
		return myrio_tcp_state(S.c);
	if (!strcmp(key, "error"))
		return myrio_tcp_error(S.c);
	if (!strcmp(key, "mss"))
		return myrio_tcp_mss(S.c);
	if (!strcmp(key, "unacked"))
		return (long long)myrio_tcp_unacked(S.c);
	if (!strcmp(key, "eof"))
		return myrio_tcp_eof(S.c);
	fail("unknown fact '%s'", key);
	return 0;
}

static void cmd_expect(char **tok, int n)
{
	stack_up();
	for (int i = 1; i < n; i++) {
		struct cmp c;
		if (!split_cmp(tok[i], &c))
			fail("expect: key OP value, got '%s'", tok[i]);
		long long got = fact(c.key);
		if (!holds(got, c.op, value_of(c.val))) {
			const char *name = "";
			if (!strcmp(c.key, "state") && got >= 0 && got <= MYRIO_TCP_TIME_WAIT)
				name = state_names[got];
			fail("%s is %lld %s, expected %s%s", c.key, got, name, c.op, c.val);
		}
	}
}

static void app_write(long long len)
{
	static uint8_t buf[65536];
	long long total = 0;
	while (total < len) {
		size_t chunk =
		    (size_t)(len - total) < sizeof(buf) ? (size_t)(len - total) : sizeof(buf);
		for (size_t i = 0; i < chunk; i++)
			buf[i] = app_byte(S.app_written + i);
		ssize_t w = myrio_tcp_write(S.c, buf, chunk);
		if (w <= 0) {
			if (total == 0)
				total = w;
			break;
		}
		S.app_written += (uint64_t)w;
		total += w;
	}
	S.last_write = total;
	poll_stack();
}

static void app_read(long long len)
{
	static uint8_t buf[65536];
	if (len > (long long)sizeof(buf))
		len = sizeof(buf);
	ssize_t got = myrio_tcp_read(S.c, buf, (size_t)len);
	S.last_read = got;
	for (ssize_t i = 0; i < got; i++)
		if (buf[i] != peer_byte(S.app_read + (uint64_t)i))
			fail("read byte %lld wrong", (long long)(S.app_read + (uint64_t)i));
	if (got > 0)
		S.app_read += (uint64_t)got;
	poll_stack();
}

static void need_conn(const char *what)
{
	stack_up();
	if (!S.c)
		fail("%s: no connection", what);
}

static void release_held(void)
{
	for (unsigned i = 0; i < S.nheld; i++)
		if (S.c)
			myrio_tcp_release(S.c, S.held[i]);
		else
			myrio_pkt_free(S.held[i]);
	S.nheld = 0;
}

static void cmd_app(char **tok, int n)
{
	const char *c = tok[0];
	stack_up();
	if (!strcmp(c, "listen")) {
		S.stack_port = n > 1 ? (uint16_t)num(tok[1]) : 80;
		unsigned backlog = n > 2 ? (unsigned)num(tok[2]) : 16;
		if (myrio_tcp_listen(S.r.s, S.stack_port, backlog, NULL, &S.l) < 0)
			fail("listen failed");
	} else if (!strcmp(c, "connect")) {
		S.peer_port = n > 1 ? (uint16_t)num(tok[1]) : 80;
		struct myrio_tcp_conn *cn;
		int rc = myrio_tcp_connect(S.r.s, PEER_IP, S.peer_port, NULL, &cn);
		if (rc < 0)
			fail("connect failed: %d", rc);
		S.c = cn;
		poll_stack();
	} else if (!strcmp(c, "write")) {
		need_conn(c);
		app_write(num(tok[1]));
	} else if (!strcmp(c, "read")) {
		need_conn(c);
		app_read(num(tok[1]));
	} else if (!strcmp(c, "hold")) { /* zero-copy receive, kept until release */
		need_conn(c);
		struct myrio_pkt *p;
		long long want = n > 1 ? num(tok[1]) : 1;
		for (long long i = 0; i < want && S.nheld < MAX_HELD && (p = myrio_tcp_recv(S.c));
		     i++) {
			const uint8_t *d = myrio_pkt_data(p);
			for (uint32_t k = 0; k < p->len; k++)
				if (d[k] != peer_byte(S.app_read + k))
					fail("held byte %llu wrong",
					     (unsigned long long)(S.app_read + k));
			S.app_read += p->len;
			S.held[S.nheld++] = p;
		}
	} else if (!strcmp(c, "release")) {
		release_held();
		poll_stack();
	} else if (!strcmp(c, "shutdown")) {
		need_conn(c);
		myrio_tcp_shutdown(S.c);
		poll_stack();
	} else if (!strcmp(c, "close") || !strcmp(c, "abort")) {
		need_conn(c);
		release_held();
		if (!strcmp(c, "close"))
			myrio_tcp_close(S.c);
		else
			myrio_tcp_abort(S.c);
		S.c = NULL;
		S.r.last_conn = NULL;
		poll_stack();
	} else if (!strcmp(c, "forget")) { /* the next accepted connection becomes current */
		S.c = NULL;
		S.r.last_conn = NULL;
	} else if (!strcmp(c, "wait")) {
		tick_ms((uint64_t)num(tok[1]));
	} else if (!strcmp(c, "drop")) { /* the stack's frames so far are lost on the wire */
		poll_stack();
		while (S.nq)
			frame_drop(0);
	} else if (!strcmp(c, "peer")) {
		for (int i = 1; i < n; i++) {
			struct cmp k;
			if (!split_cmp(tok[i], &k) || strcmp(k.op, "="))
				fail("peer: key=value");
			if (!strcmp(k.key, "port"))
				S.peer_port = (uint16_t)num(k.val);
			else if (!strcmp(k.key, "win"))
				S.peer_win = (uint16_t)num(k.val);
			else if (!strcmp(k.key, "ts"))
				S.ts_on = num(k.val);
			else
				fail("peer: unknown key '%s'", k.key);
		}
	} else {
		fail("unknown command '%s'", c);
	}
}

/* ---- the script ---- */

static int tokenize(char *line, char **tok)
{
	int n = 0;
	for (char *p = strtok(line, " \t\r\n"); p && n < MAX_TOK; p = strtok(NULL, " \t\r\n"))
		tok[n++] = p;
	return n;
}

static void run_line(char *line)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *tok[MAX_TOK];
	int n = tokenize(line, tok);
	if (n == 0)
		return;
	if (!strcmp(tok[0], "stack"))
		cmd_stack(tok, n);
	else if (!strcmp(tok[0], "<") && n > 1 && !strcmp(tok[1], "icmp"))
		cmd_inject_icmp(tok + 1, n - 1);
	else if (!strcmp(tok[0], "<") && n > 1 && !strcmp(tok[1], "arp"))
		cmd_inject_arp(tok + 1, n - 1);
	else if (!strcmp(tok[0], "<") && n > 1)
		cmd_inject_tcp(tok, n);
	else if (!strcmp(tok[0], ">") && n > 1)
		cmd_expect_frame(tok, n);
	else if (!strcmp(tok[0], "expect"))
		cmd_expect(tok, n);
	else
		cmd_app(tok, n);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SCRIPT\n", argv[0]);
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	S.path = argv[1];
	S.mtu = 1500;
	myrio_stack_conf_init(&S.conf);
	S.conf.delayed_ack_ms = 0;
	S.conf.seed = 1;
	S.peer_port = 40000;
	S.stack_port = 80;
	S.peer_isn = 1000000;
	S.peer_nxt = S.peer_isn;
	S.peer_win = 65535;
	static char covers[1024];
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		S.line++;
		if (!strncmp(line, "#! covers", 9)) {
			snprintf(covers, sizeof(covers), "%s", line + 9 + strspn(line + 9, " \t"));
			covers[strcspn(covers, "\n")] = 0;
			S.covers = covers;
			continue;
		}
		run_line(line);
	}
	fclose(f);
	while (S.nq)
		frame_drop(0);
	release_held();
	if (S.up)
		raw_close(&S.r);
	printf("%s: passed\n", S.path);
	return 0;
}
