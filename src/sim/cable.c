/* SPDX-License-Identifier: BSD-3-Clause */
/* Cables: NIC to NIC or NIC to an endpoint (TAP, AF_PACKET). The link runs at link_bps
 * (preamble 8 + FCS 4 + inter-frame gap 12 bytes per frame counted) or unlimited; the
 * transmitting NIC paces itself on the wire's busy time (tx.c). Faults, drawn from a
 * seeded generator so runs repeat: loss, reorder, duplicate, corrupt (the receiver drops
 * it as a bad CRC), link flaps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/endpoint.h"
#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

#define CABLE_SCRATCH (16u * 1024)
#define STASH_HOLD_NS 1000000ull /* a reordered frame waits at most 1 ms for a successor */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}
static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t sim_wire_ps(const struct sim_cable *c, uint32_t len)
{
	if (!c->link_bps)
		return 0;
	return (uint64_t)(len + 24) * 8 * 1000000000000ull / c->link_bps;
}

static bool faults_active(const struct myrio_sim_faults *f)
{
	return f->loss > 0 || f->reorder > 0 || f->duplicate > 0 || f->corrupt > 0;
}

int sim_cable_new(struct myrio_sim *w, struct sim_nic *a, struct sim_nic *b,
		  struct sim_endpoint *ep, struct sim_cable **out)
{
	if (a->cable || (b && b->cable) || (!b && !ep) || a == b) {
		log_err("cable: %s%s%s is already cabled or the cable has no other end", a->name,
			b ? " / " : "", b ? b->name : "");
		return -EBUSY;
	}
	struct sim_cable *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* the stashes too, whether or not faults are on now: set_faults may turn reordering
	 * on at any time, and the data path allocates nothing */
	c->scratch = malloc(CABLE_SCRATCH);
	c->ab.stash = malloc(CABLE_SCRATCH);
	c->ba.stash = malloc(CABLE_SCRATCH);
	if (!c->scratch || !c->ab.stash || !c->ba.stash) {
		sim_cable_free(c);
		return -ENOMEM;
	}
	c->world = w;
	c->a = a;
	c->b = b;
	c->ep = ep;
	c->link_bps = w->conf.link_bps;
	c->faults = w->conf.faults;
	c->faults_on = faults_active(&c->faults);
	c->rng = w->conf.seed * 0x100000001B3ull + w->n_cables + 1;
	atomic_store(&c->admin_up, true);
	c->up = true;
	c->next_flap_ns = c->faults.flap_period_ms * 1000000ull;
	c->ab.cable = c;
	c->ab.dst_nic = b;
	c->ab.dst_ep = b ? NULL : ep;
	c->ba.cable = c;
	c->ba.dst_nic = a;
	a->cable = c;
	a->out = &c->ab;
	a->link_state = 1;
	if (b) {
		b->cable = c;
		b->out = &c->ba;
		b->link_state = 1;
	}
	*out = c;
	return 0;
}

void sim_cable_free(struct sim_cable *c)
{
	if (!c)
		return;
	if (c->ep && c->ep->ops && c->ep->ops->destroy)
		c->ep->ops->destroy(c->ep);
	free(c->ab.stash);
	free(c->ba.stash);
	free(c->scratch);
	free(atomic_load(&c->new_faults));
	free(c);
}

/* Linearises a frame (with its checksum patch) into buf; returns its length. */
static uint32_t linearise(uint8_t *buf, uint32_t cap, const struct sim_frame *f)
{
	uint32_t len = f->len < cap ? f->len : cap, done = 0;
	for (unsigned i = 0; i < f->nfrags && done < len; i++) {
		uint32_t k = f->frags[i].len;
		if (k > len - done)
			k = len - done;
		memcpy(buf + done, f->frags[i].p, k);
		done += k;
	}
	if (f->patch_off >= 0 && (uint32_t)f->patch_off + 2 <= len && f->sum_from <= len) {
		uint16_t sum = csum_partial16(buf + f->sum_from, len - f->sum_from);
		put_be16(buf + f->patch_off, sim_frame_csum_field(f, sum));
	}
	return len;
}

static void deliver(struct sim_wire *w, const struct sim_frame *f)
{
	w->frames++;
	if (w->dst_nic) {
		sim_rx_frame(w->dst_nic, f);
		return;
	}
	struct sim_endpoint *ep = w->dst_ep;
	if (f->bad_crc) /* the far side's MAC drops it (counted in w->corrupted) */
		return;
	struct sim_cable *c = w->cable;
	uint32_t len = linearise(c->scratch, CABLE_SCRATCH, f);
	ep->ops->deliver(ep, c->scratch, len); /* the endpoint counts its own frames */
}

static void deliver_stash(struct sim_wire *w)
{
	struct sim_frag fr = {w->stash, w->stash_len};
	struct sim_frame f = {.frags = &fr, .nfrags = 1, .len = w->stash_len, .patch_off = -1};
	w->stashed = false;
	deliver(w, &f);
}

static void send_on(struct sim_wire *w, const struct sim_frame *f, uint64_t now)
{
	struct sim_cable *c = w->cable;
	if (!c->up) {
		w->down_drops++;
		return;
	}
	if (__builtin_expect(!c->faults_on, 1)) {
		deliver(w, f);
		if (__builtin_expect(w->stashed, 0))
			deliver_stash(w);
		return;
	}
	/* Four draws per frame whatever happens, so a seed gives one sequence. */
	double r_loss = rng_unit(&c->rng), r_corrupt = rng_unit(&c->rng);
	double r_reorder = rng_unit(&c->rng), r_dup = rng_unit(&c->rng);
	if (r_loss < c->faults.loss) {
		w->lost++;
		return;
	}
	struct sim_frame g = *f;
	if (r_corrupt < c->faults.corrupt) {
		g.bad_crc = true;
		w->corrupted++;
	}
	if (r_reorder < c->faults.reorder && !w->stashed && !g.bad_crc) {
		w->stash_len = linearise(w->stash, CABLE_SCRATCH, &g);
		w->stashed = true;
		w->stash_at = now;
		w->reordered++;
		return;
	}
	deliver(w, &g);
	if (r_dup < c->faults.duplicate) {
		w->duplicated++;
		deliver(w, &g);
	}
	if (w->stashed)
		deliver_stash(w);
}

void sim_wire_send(struct sim_nic *from, const struct sim_frame *f, uint64_t now)
{
	struct sim_wire *w = from->out;
	if (!w || !w->cable->up) {
		from->st.tx_link_down++;
		if (w)
			w->down_drops++;
		return;
	}
	send_on(w, f, now);
}

struct ep_rx_ctx {
	struct sim_cable *c;
	uint64_t now;
	unsigned n;
};

static void ep_emit(void *arg, const uint8_t *frame, uint32_t len)
{
	struct ep_rx_ctx *x = arg;
	struct sim_cable *c = x->c;
	struct sim_wire *w = &c->ba;
	uint8_t pad[60];
	struct sim_frag fr = {frame, len};
	/* A kernel interface hands over unpadded frames; its NIC would pad them to the
	 * Ethernet minimum on the wire. */
	if (len < 60) {
		memcpy(pad, frame, len);
		memset(pad + len, 0, 60 - len);
		fr.p = pad;
		fr.len = len = 60;
	}
	struct sim_frame f = {.frags = &fr, .nfrags = 1, .len = len, .patch_off = -1};
	if (c->link_bps) {
		uint64_t start = x->now * 1000 > w->t_free ? x->now * 1000 : w->t_free;
		w->t_free = start + sim_wire_ps(c, len);
	}
	x->n++;
	send_on(w, &f, x->now);
}

static void set_up(struct sim_cable *c, bool up)
{
	if (c->up == up)
		return;
	c->up = up;
	sim_nic_link_changed(c->a, up);
	if (c->b)
		sim_nic_link_changed(c->b, up);
}

/* A frame is on the cable (its last bit still ahead, or held back by a reorder fault) or
 * waits for it in a NIC's send ring: no deep sleep, the frame is due without a host's post. */
bool sim_cable_busy(const struct sim_cable *c, uint64_t now)
{
	uint64_t now_ps = now * 1000;
	for (const struct sim_wire *w = &c->ab; w <= &c->ba; w++)
		if (w->stashed || w->t_free > now_ps || w->t_queued > now_ps)
			return true;
	return false;
}

/* Frames from the endpoint (TAP, AF_PACKET). An idle endpoint costs a system call per
 * poll: look every 8th iteration while it is quiet (the world's idle sleep waits on its fd
 * instead). */
static __attribute__((noinline)) unsigned endpoint_poll(struct sim_cable *c, uint64_t now)
{
	if (!c->ep->ops->poll || (c->ep_quiet != 0 && (++c->ep_quiet & 7) != 0))
		return 0;
	struct sim_wire *w = &c->ba;
	if (c->link_bps && w->t_free > now * 1000)
		return 0;
	struct ep_rx_ctx x = {c, now, 0};
	c->ep->ops->poll(c->ep, ep_emit, &x, 32);
	c->ep_quiet = x.n ? 0 : c->ep_quiet | 1;
	return x.n;
}

/* New faults, flaps, the administrative state and held frames: what a cable seldom has. */
static __attribute__((noinline)) unsigned cable_events(struct sim_cable *c, uint64_t now)
{
	unsigned work = 0;
	struct myrio_sim_faults *nf = atomic_load_explicit(&c->new_faults, memory_order_relaxed);
	if (nf) {
		nf = atomic_exchange(&c->new_faults, NULL);
		if (nf) {
			c->faults = *nf;
			c->faults_on = faults_active(nf);
			c->flapped_down = false;
			c->next_flap_ns = now + nf->flap_period_ms * 1000000ull;
			free(nf);
		}
	}
	if (__builtin_expect(c->faults.flap_period_ms != 0, 0) && now >= c->next_flap_ns) {
		uint64_t down = (uint64_t)c->faults.flap_down_ms * 1000000ull;
		uint64_t period = (uint64_t)c->faults.flap_period_ms * 1000000ull;
		c->flapped_down = !c->flapped_down;
		c->next_flap_ns =
		    now + (c->flapped_down ? down : (period > down ? period - down : 1));
	}
	if (c->faults.flap_period_ms != 0) /* the idle sleep ends by the next flap */
		sim_world_due(c->world, c->next_flap_ns);
	bool want = atomic_load_explicit(&c->admin_up, memory_order_relaxed) && !c->flapped_down;
	if (__builtin_expect(want != c->up, 0)) {
		set_up(c, want);
		work++;
	}
	for (struct sim_wire *w = &c->ab; w <= &c->ba; w++) {
		if (__builtin_expect(!w->stashed, 1))
			continue;
		if (now - w->stash_at < STASH_HOLD_NS) { /* the idle sleep ends by then */
			sim_world_due(c->world, w->stash_at + STASH_HOLD_NS);
			continue;
		}
		if (c->up) {
			deliver_stash(w);
		} else { /* the link went down with the frame on it */
			w->stashed = false;
			w->down_drops++;
		}
		work++;
	}
	return work;
}

unsigned sim_cable_poll(struct sim_cable *c, uint64_t now)
{
	unsigned work = 0;
	bool want = atomic_load_explicit(&c->admin_up, memory_order_relaxed) && !c->flapped_down;
	if (__builtin_expect(atomic_load_explicit(&c->new_faults, memory_order_relaxed) != NULL ||
				 c->faults.flap_period_ms != 0 || want != c->up || c->ab.stashed ||
				 c->ba.stashed,
			     0))
		work = cable_events(c, now);
	if (c->ep)
		work += endpoint_poll(c, now);
	return work;
}
