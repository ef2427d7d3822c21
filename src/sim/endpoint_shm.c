/* SPDX-License-Identifier: BSD-3-Clause */
/* A model cable between two processes through shared memory ("shm:NAME/0", "shm:NAME/1"):
 * each process hosts its own model NIC, and the cable between the two runs through a file
 * of shm_open (/dev/shm/myrio-shm-NAME, layout in endpoint_shm.h). Whichever end opens
 * first creates the file; the other checks its header. The name is unlinked as soon as
 * both ends hold it (or when an end closes before the other came), so nothing is left.
 *
 * Frames are copied in by deliver and out by poll. The other process is not trusted:
 * every index and length it can write is read once and checked before use (an index more
 * than a ring ahead, a length out of range: the frames are dropped and counted, never read
 * or written beyond a slot). The sizes are this build's own, checked against the header,
 * never taken from it. A peer that shrinks the file (ftruncate) makes accesses fault:
 * shared memory cannot refuse that, as a socket would.
 *
 * There is no fd to sleep on (fd returns -1): the model at either end must spin or be
 * stepped by a thread that polls, which is what the cable is for (no wake-up per frame).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim/endpoint_shm.h"
#include "util/log.h"

#define SHM_PREFIX "/myrio-shm-"
#define SHM_OPEN_WAIT_MS 5000 /* for the creating end to size and label the file */

_Static_assert((SHM_SLOTS & (SHM_SLOTS - 1)) == 0, "SHM_SLOTS is a power of 2");

struct shm_endpoint {
	struct sim_endpoint ep; /* first */
	struct shm_cable *c;
	unsigned side;
	uint32_t head; /* of ring[side], ours: never read back from the file */
	uint32_t tail; /* of ring[!side], ours */
	char path[NAME_MAX + 1];
	uint8_t buf[SIM_EP_MAX_FRAME];
};

static void shm_deliver(struct sim_endpoint *ep, const uint8_t *frame, uint32_t len)
{
	struct shm_endpoint *s = (struct shm_endpoint *)ep;
	struct shm_ring *r = &s->c->ring[s->side];
	if (len < SIM_EP_MIN_FRAME || len > SIM_EP_MAX_FRAME) {
		ep->drops++;
		return;
	}
	/* a tail more than a ring behind or ahead of our head is the peer's garbage: full */
	uint32_t used = s->head - atomic_load_explicit(&r->tail, memory_order_acquire);
	if (used >= SHM_SLOTS) {
		ep->drops++;
		return;
	}
	struct shm_slot *slot = &r->slot[s->head & (SHM_SLOTS - 1)];
	memcpy(slot->data, frame, len);
	atomic_store_explicit((_Atomic uint32_t *)&slot->len, len, memory_order_relaxed);
	atomic_store_explicit(&r->head, ++s->head, memory_order_release);
	ep->tx_frames++;
}

static unsigned shm_poll(struct sim_endpoint *ep, sim_emit_fn emit, void *ctx, unsigned max)
{
	struct shm_endpoint *s = (struct shm_endpoint *)ep;
	struct shm_ring *r = &s->c->ring[!s->side];
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t avail = head - s->tail;
	if (avail > SHM_SLOTS) { /* not a head the peer could have reached: skip to it */
		ep->drops++;
		s->tail = head;
		atomic_store_explicit(&r->tail, s->tail, memory_order_release);
		return 0;
	}
	unsigned done = 0;
	while (done < max && s->tail != head) {
		struct shm_slot *slot = &r->slot[s->tail & (SHM_SLOTS - 1)];
		uint32_t len =
		    atomic_load_explicit((_Atomic uint32_t *)&slot->len, memory_order_relaxed);
		bool ok = len >= SIM_EP_MIN_FRAME && len <= SIM_EP_MAX_FRAME;
		if (ok)
			memcpy(s->buf, slot->data, len); /* the peer may rewrite the slot */
		atomic_store_explicit(&r->tail, ++s->tail, memory_order_release);
		if (!ok) {
			ep->drops++;
			continue;
		}
		ep->rx_frames++;
		emit(ctx, s->buf, len);
		done++;
	}
	return done;
}

static int shm_fd(struct sim_endpoint *ep)
{
	(void)ep;
	return -1;
}

static void shm_destroy(struct sim_endpoint *ep)
{
	struct shm_endpoint *s = (struct shm_endpoint *)ep;
	if (s->c) {
		if (!atomic_load(&s->c->hdr.claimed[!s->side]))
			shm_unlink(s->path); /* the peer never came: the name goes with us */
		atomic_store(&s->c->hdr.claimed[s->side], 0);
		munmap(s->c, sizeof(*s->c));
	}
	free(s);
}

static const struct sim_endpoint_ops shm_ops = {
    .deliver = shm_deliver,
    .poll = shm_poll,
    .fd = shm_fd,
    .destroy = shm_destroy,
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void nap_ms(void)
{
	nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}

/* The file another end created: its size and header as this build lays them out. */
static int attach(int fd, const char *spec, struct shm_cable **out)
{
	uint64_t until = mono_ms() + SHM_OPEN_WAIT_MS;
	struct stat st;
	int rc;
	while ((rc = fstat(fd, &st)) == 0 && st.st_size == 0 && mono_ms() < until)
		nap_ms(); /* created, not yet sized */
	if (rc != 0)
		return -errno;
	if (st.st_size != (off_t)sizeof(struct shm_cable)) {
		log_err("shm:%s: the file has %lld bytes, this build's cable %zu", spec,
			(long long)st.st_size, sizeof(struct shm_cable));
		return -EPROTO;
	}
	struct shm_cable *c =
	    mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	while (atomic_load_explicit(&c->hdr.magic, memory_order_acquire) == 0 &&
	       mono_ms() < until)
		nap_ms(); /* sized, not yet labelled */
	const struct shm_header *h = &c->hdr;
	if (atomic_load_explicit(&c->hdr.magic, memory_order_acquire) != SHM_MAGIC ||
	    h->version != SHM_VERSION || h->slots != SHM_SLOTS ||
	    h->max_frame != SIM_EP_MAX_FRAME || h->size != sizeof(*c)) {
		log_err("shm:%s: not a cable of this version (magic %#x version %u, %u slots of "
			"%u bytes)",
			spec, (unsigned)atomic_load(&c->hdr.magic), h->version, h->slots,
			h->max_frame);
		munmap(c, sizeof(*c));
		return -EPROTO;
	}
	*out = c;
	return 0;
}

static int create(int fd, struct shm_cable **out)
{
	if (ftruncate(fd, sizeof(struct shm_cable)) != 0)
		return -errno;
	struct shm_cable *c =
	    mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	c->hdr.version = SHM_VERSION;
	c->hdr.slots = SHM_SLOTS;
	c->hdr.max_frame = SIM_EP_MAX_FRAME;
	c->hdr.size = sizeof(*c);
	atomic_store_explicit(&c->hdr.magic, SHM_MAGIC, memory_order_release);
	*out = c;
	return 0;
}

int sim_endpoint_shm_open(const char *spec, struct sim_endpoint **out)
{
	*out = NULL;
	const char *slash = spec ? strrchr(spec, '/') : NULL;
	size_t name_len = slash ? (size_t)(slash - spec) : 0;
	if (!slash || name_len == 0 || memchr(spec, '/', name_len) ||
	    name_len > NAME_MAX - sizeof(SHM_PREFIX) || (strcmp(slash, "/0") && strcmp(slash, "/1"))) {
		log_err("shm:%s: give NAME/0 or NAME/1 (the cable's two ends), NAME without '/'",
			spec ? spec : "");
		return -EINVAL;
	}
	struct shm_endpoint *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ep.ops = &shm_ops;
	s->side = slash[1] == '1';
	s->ep.nic_index = s->side;
	snprintf(s->path, sizeof(s->path), SHM_PREFIX "%.*s", (int)name_len, spec);
	snprintf(s->ep.name, sizeof(s->ep.name), "shm:%s", spec);
	int rc, fd = shm_open(s->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if ((rc = create(fd, &s->c)) < 0)
			shm_unlink(s->path);
	} else if (errno == EEXIST && (fd = shm_open(s->path, O_RDWR | O_CLOEXEC, 0)) >= 0) {
		rc = attach(fd, spec, &s->c);
	} else {
		rc = -errno;
	}
	if (fd >= 0)
		close(fd); /* the mapping stays */
	if (rc < 0) {
		log_err("shm:%s: cannot open %s: %s", spec, s->path, strerror(-rc));
		free(s);
		return rc;
	}
	if (atomic_exchange(&s->c->hdr.claimed[s->side], 1)) {
		log_err("shm:%s: that end of the cable is taken", spec);
		munmap(s->c, sizeof(*s->c));
		free(s);
		return -EBUSY;
	}
	/* both ends hold the mapping now: the name is no longer needed */
	if (atomic_load(&s->c->hdr.claimed[!s->side]))
		shm_unlink(s->path);
	*out = &s->ep;
	return 0;
}
