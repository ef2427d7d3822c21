/* SPDX-License-Identifier: BSD-3-Clause */
/* The model thread's idle sleep and how a host wakes it (model.h, docs/model-daemon.md).
 *
 * Firmware polls SRAM; so does the model, which costs a core while nothing happens. After
 * a few empty passes the thread sleeps on an eventfd (and the endpoints' fds) instead. The
 * handshake is Dekker's: the model stores 1 in the wake page, then looks at SRAM once
 * more; a host stores its doorbell, then (after a full fence) loads the word. One of the
 * two sees the other's store, so a post is never left asleep.
 *
 * Each attach gets a wake eventfd of its own. The client shares its open file description
 * and may clear O_NONBLOCK on it or read it itself, so the model reads it with RWF_NOWAIT
 * only (a read that cannot block whatever the description's flags) and takes EAGAIN as a
 * wake-up that the client swallowed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sim/endpoint.h"
#include "sim/model.h"
#include "sim/nic.h"
#include "util/log.h"

#define WAKE_PAGE 4096u

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008 /* Linux 4.14 */
#endif
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010 /* Linux 5.1 */
#endif

int sim_wake_open(struct myrio_sim *w)
{
	w->wake_page_fd = memfd_create("myrio-sim-wake", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	void *page = MAP_FAILED;
	if (w->wake_page_fd >= 0 && w->wake_fd >= 0 && ftruncate(w->wake_page_fd, WAKE_PAGE) == 0)
		page = mmap(NULL, WAKE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, w->wake_page_fd, 0);
	if (page == MAP_FAILED) {
		int rc = -errno;
		log_err("model: cannot create the model thread's wake-up page: %s", strerror(-rc));
		sim_wake_close(w);
		return rc;
	}
	w->sleeping = page;
	/* Its size is fixed (hosts refuse a page without F_SEAL_SHRINK: one that shrinks
	 * under their mapping would fault them). Hosts may map it to read only; our own
	 * writable mapping stays. That seal is best effort: on a kernel without it a host
	 * could only hold its own wake-ups back. */
	int rc = fcntl(w->wake_page_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0 ? 0 : -errno;
	(void)fcntl(w->wake_page_fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
	(void)fcntl(w->wake_page_fd, F_ADD_SEALS, F_SEAL_SEAL);
	if (rc < 0) {
		log_err("model: cannot seal the wake-up page: %s", strerror(-rc));
		sim_wake_close(w);
	}
	return rc;
}

void sim_wake_close(struct myrio_sim *w)
{
	if (w->sleeping)
		munmap((void *)w->sleeping, WAKE_PAGE);
	w->sleeping = NULL;
	if (w->wake_page_fd >= 0)
		close(w->wake_page_fd);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	w->wake_page_fd = w->wake_fd = -1;
}

/* A fresh wake eventfd for a new attach (the NIC is halted): a former owner keeps only
 * one the model no longer polls. A model asleep on the former set is woken to poll it. */
int sim_wake_attach(struct sim_nic *nic)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	sim_wake_detach(nic);
	pthread_mutex_lock(&nic->world->wake_lock);
	nic->wake_fd = fd;
	pthread_mutex_unlock(&nic->world->wake_lock);
	sim_world_wake(nic->world);
	return 0;
}

void sim_wake_detach(struct sim_nic *nic)
{
	pthread_mutex_lock(&nic->world->wake_lock);
	if (nic->wake_fd >= 0)
		close(nic->wake_fd);
	nic->wake_fd = -1;
	pthread_mutex_unlock(&nic->world->wake_lock);
}

/* The poll set: the world's own eventfd, the attached NICs' and the endpoints' fds.
 * nic_of[k] is the NIC whose wake eventfd fds[k] is, or NULL. */
static nfds_t gather(struct myrio_sim *w, struct pollfd *fds, struct sim_nic **nic_of)
{
	nfds_t n = 0;
	nic_of[n] = NULL;
	fds[n++] = (struct pollfd){.fd = w->wake_fd, .events = POLLIN};
	pthread_mutex_lock(&w->wake_lock);
	for (unsigned i = 0; i < w->n_nics; i++)
		if (w->nics[i]->wake_fd >= 0) {
			nic_of[n] = w->nics[i];
			fds[n++] = (struct pollfd){.fd = w->nics[i]->wake_fd, .events = POLLIN};
		}
	pthread_mutex_unlock(&w->wake_lock);
	for (unsigned i = 0; i < w->n_cables; i++) {
		struct sim_endpoint *ep = w->cables[i]->ep;
		int fd = ep && ep->ops->fd ? ep->ops->fd(ep) : -1;
		if (fd >= 0) {
			nic_of[n] = NULL;
			fds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
	}
	return n;
}

/* Empties the wake eventfds that woke us, never blocking: a client may have cleared
 * O_NONBLOCK on its (shared) description and read the count first. A fd that was closed
 * or replaced (detach, a new attach) while we slept is no longer the NIC's and left alone. */
static void drain(struct myrio_sim *w, const struct pollfd *fds, struct sim_nic *const *nic_of,
		  nfds_t n)
{
	uint64_t v;
	if (fds[0].revents & POLLIN)
		(void)!read(w->wake_fd, &v, sizeof(v)); /* our own: non-blocking, nobody else's */
	pthread_mutex_lock(&w->wake_lock);
	for (nfds_t k = 1; k < n; k++) {
		struct sim_nic *nic = nic_of[k];
		if (!nic || !(fds[k].revents & POLLIN) || nic->wake_fd != fds[k].fd)
			continue;
		struct iovec iov = {&v, sizeof(v)};
		if (preadv2(nic->wake_fd, &iov, 1, -1, RWF_NOWAIT) < 0 && errno != EAGAIN) {
			/* No read that cannot block (an old kernel): stop polling it; the host's
			 * posts are then seen every idle_ms. */
			log_warn("%s: the wake eventfd cannot be read without blocking (%s); "
				 "posts after a quiet spell wait for the model's timer",
				 nic->name, strerror(errno));
			close(nic->wake_fd);
			nic->wake_fd = -1;
		}
	}
	pthread_mutex_unlock(&w->wake_lock);
}

/* Sleeps up to timeout_ns, or until a host wakes the world or an endpoint has a frame. The
 * wake page says so first, and the world looks once more. */
void sim_wake_wait(struct myrio_sim *w, long timeout_ns)
{
	struct pollfd fds[1 + 2 * SIM_MAX_NICS];
	struct sim_nic *nic_of[1 + 2 * SIM_MAX_NICS];
	nfds_t n = gather(w, fds, nic_of);
	atomic_store_explicit(w->sleeping, 1, memory_order_seq_cst);
	/* StoreLoad: the word must be visible before the last look at SRAM reads the hosts'
	 * doorbells (a seq_cst store alone does not order later plain loads on weakly ordered
	 * CPUs). The host's side: myrio_bus_posted. */
	atomic_thread_fence(memory_order_seq_cst);
	if (sim_world_run_once(w)) { /* a post that came before the word was visible */
		atomic_store_explicit(w->sleeping, 0, memory_order_relaxed);
		return;
	}
	struct timespec ts = {timeout_ns / 1000000000l, timeout_ns % 1000000000l};
	atomic_fetch_add_explicit(&w->sleeps, 1, memory_order_relaxed);
	int r = ppoll(fds, n, &ts, NULL);
	atomic_store_explicit(w->sleeping, 0, memory_order_relaxed);
	if (r <= 0)
		return;
	drain(w, fds, nic_of, n);
	for (unsigned i = 0; i < w->n_cables; i++)
		w->cables[i]->ep_quiet = 0;
}

const _Atomic uint32_t *sim_world_sleeping(const struct myrio_sim *sim)
{
	return sim->sleeping;
}

void sim_world_wake(struct myrio_sim *sim)
{
	if (sim->wake_fd >= 0) {
		uint64_t one = 1;
		(void)!write(sim->wake_fd, &one, sizeof(one));
	}
}

uint64_t sim_world_sleeps(const struct myrio_sim *sim)
{
	return atomic_load_explicit(&sim->sleeps, memory_order_relaxed);
}

int sim_world_wake_page_fd(const struct myrio_sim *sim)
{
	return sim->wake_page_fd;
}
