/* SPDX-License-Identifier: BSD-3-Clause */
/* The bus to a NIC hosted by the model daemon (myrio-simd): BAR0 and the interrupt eventfd
 * arrive by fd from the daemon, DMA regions go to it by fd with an IOVA chosen here (the
 * daemon plays the IOMMU), config space is a request on the socket. Closing the bus (or
 * this process dying) hangs up the socket, and the daemon resets the NIC for the next user.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bus/bus.h"
#include "bus/simd_proto.h"
#include "mem/dma.h"
#include "util/log.h"
#include "util/pci_cap.h"

struct simd_bus {
	struct myrio_bus bus; /* first: the driver holds a struct myrio_bus * */
	int sock;
	int bar0_fd;
	int irq_fd;
	int vec_fd[SIMD_MAX_FDS]; /* MSI-X vectors' eventfds, nvec of them (irq_vectors) */
	unsigned nvec;
	int wake_fd; /* the model thread's: written when it sleeps and we posted */
	const _Atomic uint32_t *wake_page;
	uint32_t seq;
	pthread_mutex_t lock; /* one request in flight on the socket */
	struct simd_iova_alloc iova;
	char path[108];
};

static struct simd_bus *to_simd(struct myrio_bus *bus)
{
	return (struct simd_bus *)bus;
}

/* One request, one reply. The reply must echo our type and seq; its status is returned.
 * The fds it carries go to rfds (*nrfds of them, at most SIMD_MAX_FDS) when rfds is not
 * NULL, and are closed otherwise. */
static int rpc_fds(struct simd_bus *sb, struct simd_msg *req, size_t req_len, const int *fds,
		   unsigned nfds, struct simd_msg *rep, int *rfds, unsigned *nrfds)
{
	uint16_t type = req->h.type;
	req->h.seq = ++sb->seq;
	int rc = simd_send(sb->sock, req, req_len, fds, nfds);
	if (rc < 0) {
		log_err("%s: model daemon at %s: %s failed: %s", sb->bus.name, sb->path,
			simd_type_name(type), strerror(-rc));
		return rc;
	}
	unsigned got_fds;
	int junk[SIMD_MAX_FDS];
	ssize_t n = simd_recv_timeout(sb->sock, rep, sizeof(*rep), junk, SIMD_MAX_FDS, &got_fds,
				      SIMD_REPLY_TIMEOUT_MS);
	for (unsigned i = 0; i < got_fds; i++)
		if (rfds)
			rfds[i] = junk[i];
		else
			close(junk[i]);
	if (nrfds)
		*nrfds = rfds ? got_fds : 0;
	if (n <= 0) {
		rc = n == 0 ? -ENOTCONN : (int)n;
		log_err("%s: no reply from the model daemon at %s to %s: %s", sb->bus.name,
			sb->path, simd_type_name(type),
			n == 0 ? "it closed the connection (did it exit?)" : strerror(-rc));
		return rc;
	}
	if ((size_t)n < sizeof(rep->h) || rep->h.magic != SIMD_MAGIC || rep->h.type != type ||
	    rep->h.seq != req->h.seq || rep->h.status > 0) {
		log_err("%s: malformed reply from the model daemon at %s to %s", sb->bus.name,
			sb->path, simd_type_name(type));
		return -EPROTO;
	}
	return rep->h.status;
}

static int rpc_locked(struct simd_bus *sb, struct simd_msg *req, size_t req_len, const int *fds,
		      unsigned nfds, struct simd_msg *rep)
{
	return rpc_fds(sb, req, req_len, fds, nfds, rep, NULL, NULL);
}

static int rpc(struct simd_bus *sb, struct simd_msg *req, size_t req_len, const int *fds,
	       unsigned nfds, struct simd_msg *rep)
{
	pthread_mutex_lock(&sb->lock);
	int rc = rpc_locked(sb, req, req_len, fds, nfds, rep);
	pthread_mutex_unlock(&sb->lock);
	return rc;
}

static int simd_dma_map(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	struct simd_bus *sb = to_simd(bus);
	struct simd_msg req, rep;
	if (r->fd < 0 || r->len == 0 || r->page_size == 0)
		return -EINVAL;
	simd_hdr_init(&req.h, SIMD_DMA_MAP, 0);
	req.u.dma.len = r->len;
	pthread_mutex_lock(&sb->lock);
	int rc = simd_iova_get(&sb->iova, r->len, r->page_size, &req.u.dma.iova);
	if (rc == 0)
		rc = rpc_locked(sb, &req, sizeof(req.h) + sizeof(req.u.dma), &r->fd, 1, &rep);
	pthread_mutex_unlock(&sb->lock);
	if (rc < 0) {
		log_err("%s: cannot register %zu bytes of DMA memory with the model daemon: %s",
			bus->name, r->len, strerror(-rc));
		return rc;
	}
	r->iova = req.u.dma.iova;
	r->bus = bus;
	return 0;
}

static void simd_dma_unmap(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	struct simd_bus *sb = to_simd(bus);
	struct simd_msg req, rep;
	if (r->bus != bus)
		return;
	simd_hdr_init(&req.h, SIMD_DMA_UNMAP, 0);
	req.u.dma.iova = r->iova;
	req.u.dma.len = r->len;
	int rc = rpc(sb, &req, sizeof(req.h) + sizeof(req.u.dma), NULL, 0, &rep);
	if (rc < 0)
		log_warn("%s: model daemon refused to unregister DMA memory at 0x%llx: %s",
			 bus->name, (unsigned long long)r->iova, strerror(-rc));
	r->bus = NULL;
	r->iova = 0;
}

/* The daemon's model runs on its own clock: waiting is a real sleep. */
static void simd_delay_us(struct myrio_bus *bus, unsigned us)
{
	myrio_bus_posted(bus); /* a command or a handoff the model should see */
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int simd_cfg_read(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t *val)
{
	struct simd_msg req, rep;
	simd_hdr_init(&req.h, SIMD_CFG_READ, 0);
	memset(&req.u.cfg, 0, sizeof(req.u.cfg));
	req.u.cfg.off = off;
	req.u.cfg.size = size;
	int rc = rpc(to_simd(bus), &req, sizeof(req.h) + sizeof(req.u.cfg), NULL, 0, &rep);
	if (rc == 0)
		*val = rep.u.cfg_rep.val;
	return rc;
}

static int simd_cfg_write(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t val)
{
	struct simd_msg req, rep;
	simd_hdr_init(&req.h, SIMD_CFG_WRITE, 0);
	memset(&req.u.cfg, 0, sizeof(req.u.cfg));
	req.u.cfg.off = off;
	req.u.cfg.size = size;
	req.u.cfg.val = val;
	return rpc(to_simd(bus), &req, sizeof(req.h) + sizeof(req.u.cfg), NULL, 0, &rep);
}

static int simd_irq_fd(struct myrio_bus *bus)
{
	return to_simd(bus)->irq_fd;
}

/* MSI on or off in the daemon's config space, as vfio-pci sets it on hardware: the model
 * signals the eventfd passed at attach only while MSI is enabled. */
static int simd_irq_setup(struct myrio_bus *bus, bool msi)
{
	unsigned cap = myrio_bus_find_cap(bus, PCI_CAP_ID_MSI);
	uint32_t flags;
	if (!cap)
		return -ENOTSUP;
	int rc = simd_cfg_read(bus, cap + PCI_MSI_FLAGS, 2, &flags);
	if (rc == 0)
		rc = simd_cfg_write(bus, cap + PCI_MSI_FLAGS, 2,
				    msi ? flags | PCI_MSI_FLAGS_ENABLE
					: flags & ~PCI_MSI_FLAGS_ENABLE);
	if (rc < 0)
		return rc;
	return msi ? to_simd(bus)->irq_fd : 0;
}

/* MSI-X with a vector per slice (§6.4): MSI-X on in the daemon's config space, and the
 * model's eventfd of each vector, asked for once per attach and kept. */
static int simd_irq_vectors(struct myrio_bus *bus, unsigned n, int *fds)
{
	struct simd_bus *sb = to_simd(bus);
	if (n < 1 || n > SIMD_MAX_FDS)
		return -ENOTSUP;
	int rc = myrio_bus_msix_enable(bus);
	if (rc < 0)
		return rc;
	if (sb->nvec < n) {
		struct simd_msg req, rep;
		int got[SIMD_MAX_FDS];
		unsigned ngot = 0;
		simd_hdr_init(&req.h, SIMD_IRQ_VECTORS, 0);
		req.u.vectors = (struct simd_vectors_req){.n = n};
		pthread_mutex_lock(&sb->lock);
		rc = rpc_fds(sb, &req, sizeof(req.h) + sizeof(req.u.vectors), NULL, 0, &rep, got,
			     &ngot);
		pthread_mutex_unlock(&sb->lock);
		if (rc == 0 && ngot != n)
			rc = -EPROTO;
		if (rc < 0) {
			for (unsigned i = 0; i < ngot; i++)
				close(got[i]);
			log_warn("%s: the model daemon gave no interrupt vectors (%s): the queues "
				 "run polled",
				 bus->name, strerror(-rc));
			return rc;
		}
		for (unsigned i = 0; i < sb->nvec; i++)
			close(sb->vec_fd[i]);
		memcpy(sb->vec_fd, got, n * sizeof(got[0]));
		sb->nvec = n;
	}
	memcpy(fds, sb->vec_fd, n * sizeof(fds[0]));
	return 0;
}

static int simd_reset(struct myrio_bus *bus)
{
	struct simd_msg req, rep;
	simd_hdr_init(&req.h, SIMD_RESET, 0);
	return rpc(to_simd(bus), &req, sizeof(req.h), NULL, 0, &rep);
}

static void simd_close(struct myrio_bus *bus)
{
	struct simd_bus *sb = to_simd(bus);
	if (sb->bus.bar0)
		munmap((void *)sb->bus.bar0, sb->bus.bar0_len);
	if (sb->bar0_fd >= 0)
		close(sb->bar0_fd);
	if (sb->irq_fd >= 0)
		close(sb->irq_fd);
	for (unsigned i = 0; i < sb->nvec; i++)
		close(sb->vec_fd[i]);
	if (sb->wake_page)
		munmap((void *)sb->wake_page, 4096);
	if (sb->wake_fd >= 0)
		close(sb->wake_fd);
	if (sb->sock >= 0)
		close(sb->sock); /* the daemon sees the hang-up and resets the NIC */
	pthread_mutex_destroy(&sb->lock);
	free(sb);
}

static void simd_wake(struct myrio_bus *bus)
{
	uint64_t one = 1;
	(void)!write(to_simd(bus)->wake_fd, &one, sizeof(one));
}

static const struct myrio_bus_ops simd_bus_ops = {
    .dma_map = simd_dma_map,
    .dma_unmap = simd_dma_unmap,
    .delay_us = simd_delay_us,
    .cfg_read = simd_cfg_read,
    .cfg_write = simd_cfg_write,
    .irq_fd = simd_irq_fd,
    .irq_setup = simd_irq_setup,
    .irq_vectors = simd_irq_vectors,
    .reset = simd_reset,
    .wake = simd_wake,
    .close = simd_close,
};

static const char *attach_hint(int rc)
{
	switch (rc) {
	case -ENODEV:
		return "no NIC of that name: 'myrio-simd status' lists them";
	case -EBUSY:
		return "another process is attached to it: 'myrio-simd status' shows which";
	default:
		return "see the daemon's log";
	}
}

/* The model thread's wake page: one 4 KiB memory file, mapped to read only. Its size must
 * be sealed: a page the daemon could shrink under our mapping would fault us
 * (SIGBUS) in myrio_bus_posted. */
static int map_wake_page(struct simd_bus *sb, int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < 4096)
		return -EPROTO;
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	sb->wake_page = p;
	sb->bus.sleeping = sb->wake_page;
	return 0;
}

/* The attach reply: status, BAR0 length and exactly four fds, checked before use. */
static int attach(struct simd_bus *sb, const char *nic)
{
	struct simd_msg req, rep;
	int fds[SIMD_MAX_FDS];
	unsigned nfds;
	simd_hdr_init(&req.h, SIMD_ATTACH, ++sb->seq);
	memset(&req.u.attach_req, 0, sizeof(req.u.attach_req));
	memcpy(req.u.attach_req.nic, nic, strlen(nic));
	int rc = simd_send(sb->sock, &req, sizeof(req.h) + sizeof(req.u.attach_req), NULL, 0);
	if (rc < 0)
		return rc;
	ssize_t n = simd_recv_timeout(sb->sock, &rep, sizeof(rep), fds, SIMD_MAX_FDS, &nfds,
				      SIMD_REPLY_TIMEOUT_MS);
	if (n <= 0) {
		rc = n == 0 ? -ECONNRESET : (int)n;
		log_err("simd:%s: no reply from the model daemon at %s: %s", nic, sb->path,
			n == 0 ? "it closed the connection" : strerror(-rc));
		return rc;
	}
	if ((size_t)n < sizeof(rep.h) || rep.h.magic != SIMD_MAGIC || rep.h.type != SIMD_ATTACH ||
	    rep.h.seq != req.h.seq || rep.h.status > 0) {
		rc = -EPROTO;
	} else if (rep.h.status < 0) {
		rc = rep.h.status;
		log_err("simd:%s: the model daemon at %s refused the attach: %s (%s)", nic,
			sb->path, strerror(-rc), attach_hint(rc));
	} else if ((size_t)n != sizeof(rep.h) + sizeof(rep.u.attach_rep) || nfds != 4) {
		rc = -EPROTO;
	}
	if (rc == -EPROTO)
		log_err("simd:%s: malformed attach reply from the model daemon at %s", nic,
			sb->path);
	if (rc < 0) {
		for (unsigned i = 0; i < nfds; i++)
			close(fds[i]);
		return rc;
	}
	sb->bar0_fd = fds[0];
	sb->irq_fd = fds[1];
	sb->wake_fd = fds[3];
	rc = map_wake_page(sb, fds[2]);
	close(fds[2]);
	if (rc < 0) {
		log_err("simd:%s: the model daemon sent an unusable wake page", nic);
		return rc;
	}
	struct stat st;
	uint64_t len = rep.u.attach_rep.bar0_len;
	if (fstat(sb->bar0_fd, &st) != 0 || !S_ISREG(st.st_mode) || len == 0 ||
	    len > (uint64_t)st.st_size || len > (1ull << 30)) {
		log_err("simd:%s: the model daemon sent an unusable BAR0 (%llu bytes)", nic,
			(unsigned long long)len);
		return -EPROTO;
	}
	void *bar0 = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sb->bar0_fd, 0);
	if (bar0 == MAP_FAILED) {
		rc = -errno;
		log_err("simd:%s: cannot map BAR0: %s", nic, strerror(-rc));
		return rc;
	}
	sb->bus.bar0 = bar0;
	sb->bus.bar0_len = len;
	return 0;
}

int myrio_simd_bus_open(const char *nic, const char *socket_path, struct myrio_bus **out)
{
	*out = NULL;
	if (!nic || !*nic || strlen(nic) >= SIMD_NAME_MAX) {
		log_err("simd:%s: NIC names are 1 to %d characters", nic ? nic : "",
			SIMD_NAME_MAX - 1);
		return -EINVAL;
	}
	const char *path = simd_socket_path(socket_path);
	struct simd_bus *sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	sb->bus.ops = &simd_bus_ops;
	snprintf(sb->bus.kind, sizeof(sb->bus.kind), "simd");
	snprintf(sb->bus.name, sizeof(sb->bus.name), "simd:%s", nic);
	snprintf(sb->path, sizeof(sb->path), "%s", path);
	sb->bar0_fd = sb->irq_fd = sb->wake_fd = -1;
	pthread_mutex_init(&sb->lock, NULL);
	simd_iova_init(&sb->iova);
	int rc = simd_connect(path, &sb->sock);
	if (rc == 0)
		rc = attach(sb, nic);
	if (rc < 0) {
		simd_close(&sb->bus);
		return rc;
	}
	*out = &sb->bus;
	return 0;
}
