/* SPDX-License-Identifier: BSD-3-Clause */
/* The world: NICs and cables, run by one thread (busy-polling while there is work, sleeping
 * where a host's post wakes it when idle, unless conf.spin) or stepped by the caller
 * (myrio_sim_step: one iteration of every NIC's firmware loop and every cable per step,
 * 1 µs of virtual time each, so the link-rate model is deterministic too). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "sim/endpoint.h"
#include "sim/nic.h"
#include "util/log.h"

#define STEP_NS 1000ull
/* Idle back-off. Empty passes spin for IDLE_SPINS (a few microseconds), then the thread
 * sleeps where a host's post wakes it (wake.c), until the next frame, interrupt or cable
 * event falls due (sim_world_due) and at most IDLE_SLEEP_NS. A host posts its claims when it
 * waits for a send report (rings/status.c), so the bound only catches what nothing posts or
 * schedules (a stats refresh, the end of a boot); a shorter one woke the thread several
 * times per coalescing delay, each sleep costing tens of microseconds of CPU in a virtual
 * machine. After QUIET_NS without work, with no frame on a wire or waiting for one, it looks
 * at its own timers every conf.idle_ms only. A wait shorter than MIN_SLEEP_NS is spun: the
 * sleep would cost more. */
#define IDLE_SPINS 64u
#define IDLE_SLEEP_NS 1000000l
#define QUIET_NS 50000000ull
#define MIN_SLEEP_NS 2000l

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sim_world_new(const struct myrio_sim_conf *conf, struct myrio_sim **out)
{
	*out = NULL;
	struct myrio_sim_conf c;
	if (conf)
		c = *conf;
	else
		myrio_sim_conf_init(&c);
	if (c.rx_ring_entries == 0)
		c.rx_ring_entries = 512;
	if (c.tx_ring_entries == 0)
		c.tx_ring_entries = 1024;
	if (c.idle_ms == 0)
		c.idle_ms = 20;
	uint32_t r = c.rx_ring_entries, t = c.tx_ring_entries;
	if (r < 8 || r > SIM_MAX_RING || (r & (r - 1)) || t < 8 || t > SIM_MAX_RING ||
	    (t & (t - 1))) {
		log_err("model: ring sizes must be powers of 2 from 8 to %u (rx_ring=%u "
			"tx_ring=%u)",
			SIM_MAX_RING, r, t);
		return -EINVAL;
	}
	if (c.nics > SIM_MAX_NICS) {
		log_err("model: at most %u NICs per world (asked for %u)", SIM_MAX_NICS, c.nics);
		return -EINVAL;
	}
	struct myrio_sim *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->conf = c;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&w->step_lock, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutex_init(&w->wake_lock, NULL);
	w->t0_ns = mono_ns();
	w->wake_page_fd = w->wake_fd = -1;
	*out = w;
	return 0;
}

int sim_world_add_nic(struct myrio_sim *sim, const char *name, const uint8_t mac[6],
		      struct sim_nic **out)
{
	if (sim->thread_running) {
		log_err("model: add NICs before sim_world_start");
		return -EBUSY;
	}
	if (sim->n_nics >= SIM_MAX_NICS)
		return -ENOSPC;
	if (sim_nic_find(sim, name)) {
		log_err("model: a NIC named %s exists already", name);
		return -EEXIST;
	}
	struct sim_nic *nic;
	int rc = sim_nic_new(sim, sim->n_nics, name, mac, &nic);
	if (rc < 0)
		return rc;
	nic->timing = sim_timing_find(sim->conf.timing[0] ? sim->conf.timing : "none");
	sim->nics[sim->n_nics++] = nic;
	if (out)
		*out = nic;
	return 0;
}

static int add_cable(struct sim_nic *a, struct sim_nic *b, struct sim_endpoint *ep)
{
	struct myrio_sim *w = a->world;
	if (w->thread_running) {
		log_err("model: add cables before sim_world_start");
		return -EBUSY;
	}
	if (w->n_cables >= SIM_MAX_NICS)
		return -ENOSPC;
	struct sim_cable *c;
	int rc = sim_cable_new(w, a, b, ep, &c);
	if (rc < 0)
		return rc;
	w->cables[w->n_cables++] = c;
	return 0;
}

int sim_world_cable(struct sim_nic *a, struct sim_nic *b)
{
	if (!b || a->world != b->world)
		return -EINVAL;
	return add_cable(a, b, NULL);
}

int sim_world_cable_endpoint(struct sim_nic *nic, struct sim_endpoint *ep)
{
	if (!ep)
		return -EINVAL;
	return add_cable(nic, NULL, ep);
}

/* Set while this thread is inside an iteration (sim_world_sync must not wait for itself). */
static _Thread_local bool in_iteration;

unsigned sim_world_run_once(struct myrio_sim *sim)
{
	unsigned work = 0;
	/* odd epoch: inside an iteration (see sim_world_sync) */
	atomic_fetch_add_explicit(&sim->epoch, 1, memory_order_seq_cst);
	in_iteration = true;
	sim->due_ns = UINT64_MAX;
	if (!sim->conf.stepped) /* a host loop (the thread, a daemon's) runs on wall time */
		sim->now_ns = mono_ns() - sim->t0_ns;
	uint64_t now = sim->now_ns;
	for (unsigned i = 0; i < sim->n_cables; i++)
		work += sim_cable_poll(sim->cables[i], now);
	for (unsigned i = 0; i < sim->n_nics; i++)
		work += sim_nic_poll(sim->nics[i], now);
	in_iteration = false;
	atomic_fetch_add_explicit(&sim->epoch, 1, memory_order_release);
	return work;
}

/* A slow link (link=) can hold a frame longer than the quiet spell before deep sleep. */
static bool wires_busy(const struct myrio_sim *w)
{
	for (unsigned i = 0; i < w->n_cables; i++)
		if (sim_cable_busy(w->cables[i], w->now_ns))
			return true;
	return false;
}

/* How long the idle thread may sleep: until the next due work, within its bound. */
static long idle_timeout_ns(const struct myrio_sim *w, uint64_t last_work)
{
	bool quiet = w->now_ns - last_work >= QUIET_NS && !wires_busy(w);
	long t = quiet ? w->conf.idle_ms * 1000000l : IDLE_SLEEP_NS;
	if (w->due_ns != UINT64_MAX) {
		uint64_t until = w->due_ns > w->now_ns ? w->due_ns - w->now_ns : 0;
		if (until < (uint64_t)t)
			t = (long)until;
	}
	return t;
}

static void *world_thread(void *arg)
{
	struct myrio_sim *w = arg;
	prctl(PR_SET_TIMERSLACK, 1000ul);
	unsigned idle = 0;
	uint64_t last_work = 0, spin_ns = (uint64_t)w->conf.idle_spin_us * 1000;
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		unsigned work = sim_world_run_once(w);
		if (work) {
			idle = 0;
			last_work = w->now_ns;
		} else if (++idle >= IDLE_SPINS && !w->conf.spin &&
			   w->now_ns - last_work >= spin_ns) {
			idle = IDLE_SPINS; /* no overflow */
			long t = idle_timeout_ns(w, last_work);
			if (t >= MIN_SLEEP_NS)
				sim_wake_wait(w, t);
		}
	}
	return NULL;
}

int sim_world_start(struct myrio_sim *sim)
{
	if (sim->conf.stepped || sim->thread_running)
		return 0;
	atomic_store(&sim->stop, false);
	int rc = sim->sleeping ? 0 : sim_wake_open(sim);
	if (rc < 0)
		return rc;
	rc = pthread_create(&sim->thread, NULL, world_thread, sim);
	if (rc != 0) {
		log_err("model: cannot start the model thread: %s", strerror(rc));
		return -rc;
	}
	sim->thread_running = true;
	return 0;
}

/* Returns once no iteration of the world can still see the state the caller changed
 * before calling: the caller has published its change (a new DMA table, a halted flag);
 * an iteration that starts afterwards sees it, and one that is running (odd epoch) is
 * waited for. Works for the model thread, a stepping thread and any host loop calling
 * sim_world_run_once, without a lock on the data path. */
void sim_world_sync(struct myrio_sim *w)
{
	if (!w || in_iteration)
		return;
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t e = atomic_load_explicit(&w->epoch, memory_order_seq_cst);
	if (!(e & 1))
		return;
	while (atomic_load_explicit(&w->epoch, memory_order_acquire) == e)
		sched_yield();
}

int myrio_sim_thread_cpu_ns(struct myrio_sim *sim, uint64_t *ns)
{
	clockid_t cid;
	struct timespec ts;
	if (!sim->thread_running)
		return -ENOTSUP;
	int rc = pthread_getcpuclockid(sim->thread, &cid);
	if (rc != 0)
		return -rc;
	if (clock_gettime(cid, &ts) != 0)
		return -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

uint64_t sim_world_now(struct myrio_sim *w)
{
	return w->now_ns;
}

bool sim_world_is_stepped(const struct myrio_sim *sim)
{
	return sim->conf.stepped;
}

void myrio_sim_step(struct myrio_sim *sim, unsigned n)
{
	if (!sim->conf.stepped) {
		if (sim->step_warned)
			return;
		sim->step_warned = true;
		log_warn("model: myrio_sim_step on a threaded world does nothing; create it with "
			 "conf.stepped (or \"stepped\" in the spec string)");
		return;
	}
	pthread_mutex_lock(&sim->step_lock);
	for (unsigned i = 0; i < n; i++) {
		sim->now_ns += STEP_NS;
		sim_world_run_once(sim);
	}
	pthread_mutex_unlock(&sim->step_lock);
}

struct sim_nic *sim_nic_find(struct myrio_sim *sim, const char *name)
{
	for (unsigned i = 0; i < sim->n_nics; i++)
		if (!strcmp(sim->nics[i]->name, name))
			return sim->nics[i];
	return NULL;
}

unsigned sim_world_nic_count(const struct myrio_sim *sim)
{
	return sim->n_nics;
}

struct sim_nic *sim_world_nic(struct myrio_sim *sim, unsigned index)
{
	return index < sim->n_nics ? sim->nics[index] : NULL;
}

int myrio_sim_create(struct myrio_sim **out, const struct myrio_sim_conf *conf)
{
	struct myrio_sim *w;
	int rc = sim_world_new(conf, &w);
	if (rc < 0)
		return rc;
	unsigned n = w->conf.nics ? w->conf.nics : 2;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		char name[16];
		snprintf(name, sizeof(name), "sim%u", i);
		rc = sim_world_add_nic(w, name, NULL, NULL);
	}
	for (unsigned i = 0; i + 1 < n && rc == 0; i += 2)
		rc = sim_world_cable(w->nics[i], w->nics[i + 1]);
	if (rc == 0)
		rc = sim_world_start(w);
	if (rc < 0) {
		myrio_sim_destroy(w);
		return rc;
	}
	*out = w;
	return 0;
}

void myrio_sim_destroy(struct myrio_sim *sim)
{
	if (!sim)
		return;
	if (sim->thread_running) {
		atomic_store(&sim->stop, true);
		sim_world_wake(sim);
		pthread_join(sim->thread, NULL);
		sim->thread_running = false;
	}
	sim_wake_close(sim);
	sim_irq_kick_close(sim);
	for (unsigned i = 0; i < sim->n_cables; i++)
		sim_cable_free(sim->cables[i]);
	for (unsigned i = 0; i < sim->n_nics; i++)
		sim_nic_free(sim->nics[i]);
	pthread_mutex_destroy(&sim->step_lock);
	pthread_mutex_destroy(&sim->wake_lock);
	free(sim);
}

int myrio_sim_set_faults(struct myrio_sim *sim, const char *nic, const struct myrio_sim_faults *f)
{
	struct sim_nic *n = sim_nic_find(sim, nic);
	if (!n || !n->cable) {
		log_err("model: no cabled NIC named %s", nic);
		return -ENOENT;
	}
	if (f->loss < 0 || f->loss > 1 || f->reorder < 0 || f->reorder > 1 || f->duplicate < 0 ||
	    f->duplicate > 1 || f->corrupt < 0 || f->corrupt > 1 ||
	    (f->flap_period_ms && f->flap_down_ms >= f->flap_period_ms)) {
		log_err("model: fault probabilities must be 0..1 and a flap's down time shorter "
			"than its period");
		return -EINVAL;
	}
	struct myrio_sim_faults *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *f;
	free(atomic_exchange(&n->cable->new_faults, copy));
	sim_world_wake(sim); /* a sleeping thread applies them now */
	return 0;
}

int myrio_sim_set_link(struct myrio_sim *sim, const char *nic, bool up)
{
	struct sim_nic *n = sim_nic_find(sim, nic);
	if (!n || !n->cable) {
		log_err("model: no cabled NIC named %s", nic);
		return -ENOENT;
	}
	atomic_store(&n->cable->admin_up, up);
	sim_world_wake(sim);
	return 0;
}
