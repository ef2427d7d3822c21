/* The model thread's deep sleep and how a host wakes it (model.h, docs/model-daemon.md).
 *
 * Firmware polls SRAM; so does the model, which costs a core while nothing happens. After
 * a quiet spell the thread sleeps on an eventfd (and the endpoints' fds) instead. The
 * handshake is Dekker's: the model stores 1 in the wake page, then looks at SRAM once
 * more; a host stores its doorbell, then (after a full fence) loads the word. One of the
 * two sees the other's store, so a post is never left asleep. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/endpoint.h"
#include "sim/model.h"
#include "sim/nic.h"
#include "util/log.h"

#define WAKE_PAGE 4096u

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
	/* Hosts may map it to read only; our own writable mapping stays. Best effort: on a
	 * kernel without the seal a host could only hold its own wake-ups back. */
	(void)fcntl(w->wake_page_fd, F_ADD_SEALS,
		    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
	return 0;
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

/* Sleeps up to timeout_ns, or until a host wakes the world or an endpoint has a frame.
 * With sleep, the wake page says so (and the world looks once more first). */
void sim_wake_wait(struct myrio_sim *w, long timeout_ns, bool deep)
{
	struct pollfd fds[SIM_MAX_NICS + 1];
	nfds_t n = 0;
	fds[n++] = (struct pollfd){.fd = w->wake_fd, .events = POLLIN};
	for (unsigned i = 0; i < w->n_cables; i++) {
		struct sim_endpoint *ep = w->cables[i]->ep;
		int fd = ep && ep->ops->fd ? ep->ops->fd(ep) : -1;
		if (fd >= 0)
			fds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	if (deep) {
		atomic_store_explicit(w->sleeping, 1, memory_order_seq_cst);
		if (sim_world_run_once(w)) { /* a post that came before the word was visible */
			atomic_store_explicit(w->sleeping, 0, memory_order_relaxed);
			return;
		}
	}
	struct timespec ts = {timeout_ns / 1000000000l, timeout_ns % 1000000000l};
	int r = ppoll(fds, n, &ts, NULL);
	if (deep)
		atomic_store_explicit(w->sleeping, 0, memory_order_relaxed);
	if (r <= 0)
		return;
	if (fds[0].revents & POLLIN) {
		uint64_t v;
		(void)!read(w->wake_fd, &v, sizeof(v));
	}
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

int sim_world_wake_page_fd(const struct myrio_sim *sim)
{
	return sim->wake_page_fd;
}

int sim_world_wake_fd(const struct myrio_sim *sim)
{
	return sim->wake_fd;
}
