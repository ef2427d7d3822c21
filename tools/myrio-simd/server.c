/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-simd's socket side: accepts applications, attaches them to NICs, passes BAR0 and
 * the interrupt eventfd, registers their DMA memory with the model (the IOMMU's job) and
 * relays config space. Every request is checked before use and every refusal is a clear
 * error reply; a client that hangs up (exit, crash, SIGKILL) has its NIC reset at once,
 * and so has one whose DMA file shrinks under the model (dma_guard.c), which is then
 * disconnected.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/fsuid.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "sim/model.h"
#include "util/log.h"

#define PAGE 4096u
/* Registered DMA memory per attachment: far more than any ring set needs, far less than
 * the daemon's address space. */
#define MAX_MAPPED_BYTES (64ull << 30)

#define LOG_BURST 10
#define LOG_WINDOW_NS 10000000000ull

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* May this source log one more line? A client sending nothing but bad requests adds
 * LOG_BURST lines per window, and one line saying how many it left out. */
static bool log_budget(struct simd_log_budget *b)
{
	uint64_t now = monotonic_ns();
	if (now - b->window_start >= LOG_WINDOW_NS) {
		if (b->suppressed)
			log_warn("%llu more such lines left out in the last %llu s",
				 (unsigned long long)b->suppressed, LOG_WINDOW_NS / 1000000000ull);
		b->window_start = now;
		b->lines = 0;
		b->suppressed = 0;
	}
	if (b->lines < LOG_BURST) {
		b->lines++;
		return true;
	}
	b->suppressed++;
	return false;
}

static void reply(struct simd_client *c, const struct simd_hdr *req, int status,
		  const void *payload, size_t len, const int *fds, unsigned nfds)
{
	struct {
		struct simd_hdr h;
		uint8_t payload[SIMD_STATUS_MAX];
	} m;
	simd_hdr_init(&m.h, req->type, req->seq);
	m.h.status = status;
	if (len > sizeof(m.payload))
		len = sizeof(m.payload);
	if (len)
		memcpy(m.payload, payload, len);
	int rc = simd_send(c->fd, &m, sizeof(m.h) + len, fds, nfds);
	if (rc < 0)
		log_debug("pid %d: reply to %s lost: %s", (int)c->pid, simd_type_name(req->type),
			  strerror(-rc));
}

static int refuse(struct simd_daemon *d, struct simd_client *c, const struct simd_hdr *req,
		  int status, const char *why)
{
	c->errors++;
	d->bad_requests++;
	if (log_budget(&c->log))
		log_warn("pid %d: %s refused: %s (%s)", (int)c->pid, simd_type_name(req->type),
			 why, strerror(-status));
	reply(c, req, status, NULL, 0, NULL, 0);
	return status;
}

static void note_shrink(struct simd_client *c, const struct simd_region *r, uintptr_t fault)
{
	if (c->shrank)
		return;
	c->shrank = true;
	c->shrank_iova = r->iova;
	c->shrank_len = r->len;
	c->shrank_off = fault - (uintptr_t)r->va;
}

/* DMA regions: unregister from the model first, so that it stops touching the memory,
 * then take it off the guard and unmap it here. */
static void drop_region(struct simd_daemon *d, struct simd_client *c, unsigned i)
{
	struct simd_region *r = &c->regions[i];
	uintptr_t fault = simd_guard_remove(&d->guard, r->guard);
	if (fault)
		note_shrink(c, r, fault);
	if (munmap(r->va, r->len) != 0)
		log_err("pid %d: cannot unmap DMA region 0x%llx+%llu: %s", (int)c->pid,
			(unsigned long long)r->iova, (unsigned long long)r->len, strerror(errno));
	c->mapped_bytes -= r->len;
	c->regions[i] = c->regions[--c->nregions];
}

/* Did the model fault in one of the client's regions (its file shrank)? */
static bool client_shrank(struct simd_daemon *d, struct simd_client *c)
{
	for (unsigned i = 0; i < c->nregions && !c->shrank; i++) {
		uintptr_t fault = simd_guard_fault(&d->guard, c->regions[i].guard);
		if (fault)
			note_shrink(c, &c->regions[i], fault);
	}
	return c->shrank;
}

static void detach(struct simd_daemon *d, struct simd_client *c, const char *why)
{
	if (!c->nic)
		return;
	/* Detach resets the NIC and forgets every DMA region before it returns. */
	sim_nic_detach(c->nic->nic);
	while (c->nregions)
		drop_region(d, c, c->nregions - 1);
	log_info("pid %d detached from %s (%s); %s is free", (int)c->pid, c->nic->conf->name, why,
		 c->nic->conf->name);
	c->nic->owner = NULL;
	c->nic = NULL;
}

static bool in_groups(const struct simd_client *c, uint32_t gid)
{
	for (unsigned i = 0; i < c->ngids; i++)
		if (c->gids[i] == gid)
			return true;
	return false;
}

static bool in_allow_list(const struct simd_client *c, const struct simd_nic_conf *n)
{
	for (unsigned i = 0; i < n->n_allow_uid; i++)
		if (n->allow_uid[i] == c->uid)
			return true;
	for (unsigned i = 0; i < n->n_allow_gid; i++)
		if (in_groups(c, n->allow_gid[i]))
			return true;
	return false;
}

static bool privileged(const struct simd_client *c)
{
	return c->uid == 0 || c->uid == geteuid();
}

/* Connecting at all: root, the daemon's user, the socket's group, or a user some NIC's
 * allow list names (the socket file's mode and group keep out the rest, this holds when
 * they are loosened). */
static bool admitted(const struct simd_daemon *d, const struct simd_client *c)
{
	if (privileged(c) || (d->conf.has_group && in_groups(c, d->conf.group)))
		return true;
	for (unsigned i = 0; i < d->nnics; i++)
		if (in_allow_list(c, d->nics[i].conf))
			return true;
	return false;
}

/* Attaching a NIC: its allow list when it has one; without one, anyone admitted, except
 * on a cable into a host interface (raw frames in and out of it): root only there. */
static bool may_attach(const struct simd_client *c, const struct simd_nic_conf *n)
{
	if (privileged(c))
		return true;
	if (n->n_allow_uid + n->n_allow_gid)
		return in_allow_list(c, n);
	return strncmp(n->cable, "tap:", 4) != 0 && strncmp(n->cable, "packet:", 7) != 0;
}

static int do_attach(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m)
{
	if (c->nic)
		return refuse(d, c, &m->h, -EISCONN, "this connection is attached already");
	struct simd_nic *n = simd_daemon_nic(d, m->u.attach_req.nic);
	if (!n)
		return refuse(d, c, &m->h, -ENODEV, "no NIC of that name");
	if (!may_attach(c, n->conf))
		return refuse(d, c, &m->h, -EACCES, "this user may not attach that NIC");
	if (n->owner) {
		n->refusals++;
		if (log_budget(&c->log))
			log_warn("pid %d: attach to %s refused: pid %d is attached to it",
				 (int)c->pid, n->conf->name, (int)n->owner->pid);
		c->errors++;
		d->bad_requests++;
		reply(c, &m->h, -EBUSY, NULL, 0, NULL, 0);
		return -EBUSY;
	}
	int rc = sim_nic_attach(n->nic);
	if (rc < 0)
		return refuse(d, c, &m->h, rc, "the model refused the attach");
	struct simd_attach_rep rep = {.bar0_len = sim_nic_bar0_len(n->nic)};
	memcpy(rep.mac, n->conf->mac, 6);
	const int fds[4] = {sim_nic_bar0_fd(n->nic), sim_nic_irq_fd(n->nic),
			    sim_world_wake_page_fd(d->sim), sim_nic_wake_fd(n->nic)};
	n->owner = c;
	n->attaches++;
	c->nic = n;
	log_info("pid %d (uid %d) attached to %s", (int)c->pid, (int)c->uid, n->conf->name);
	reply(c, &m->h, 0, &rep, sizeof(rep), fds, 4);
	return 0;
}

static int find_region(const struct simd_client *c, uint64_t iova, uint64_t len)
{
	for (unsigned i = 0; i < c->nregions; i++)
		if (c->regions[i].iova == iova && c->regions[i].len == len)
			return (int)i;
	return -1;
}

static int do_dma_map(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m,
		      int fd)
{
	const char *why;
	uint64_t iova = m->u.dma.iova, len = m->u.dma.len;
	int rc = simd_check_dma_range(iova, len, PAGE, &why);
	if (rc < 0)
		return refuse(d, c, &m->h, rc, why);
	for (unsigned i = 0; i < c->nregions; i++)
		if (simd_ranges_overlap(iova, len, c->regions[i].iova, c->regions[i].len))
			return refuse(d, c, &m->h, -EEXIST,
				      "DMA region overlaps one registered before");
	if (c->nregions == SIMD_MAX_REGIONS)
		return refuse(d, c, &m->h, -ENOSPC, "too many DMA regions");
	if (len > MAX_MAPPED_BYTES - c->mapped_bytes)
		return refuse(d, c, &m->h, -ENOSPC, "more than 64 GiB of DMA memory");
	/* Memory files only: a file of any other file system may block the model thread in
	 * a page fault for ever (a FUSE server that never answers), the whole daemon with it.
	 * A memfd lives on tmpfs (shmem); hugetlbfs files and MFD_HUGETLB memfds on
	 * hugetlbfs, mapped in whole huge pages. Asked first with F_GET_SEALS, which the VFS
	 * answers alone and only for shmem and hugetlbfs files: fstat and fstatfs go to the
	 * file's own file system, and a FUSE server would hold the daemon there. */
	struct stat st;
	struct statfs sfs;
	if (fcntl(fd, F_GET_SEALS) < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    fstatfs(fd, &sfs) != 0 || (sfs.f_type != TMPFS_MAGIC && sfs.f_type != HUGETLBFS_MAGIC))
		return refuse(d, c, &m->h, -EBADF,
			      "DMA region fd is not a memory file (memfd or hugetlbfs)");
	/* A huge page cannot be mapped, replaced or unmapped in part. */
	if (sfs.f_type == HUGETLBFS_MAGIC && ((uint64_t)sfs.f_bsize < PAGE ||
					      iova % (uint64_t)sfs.f_bsize != 0 ||
					      len % (uint64_t)sfs.f_bsize != 0))
		return refuse(d, c, &m->h, -EINVAL,
			      "hugetlbfs DMA region not in whole pages of its file");
	if (st.st_size < 0 || len > (uint64_t)st.st_size)
		return refuse(d, c, &m->h, -EINVAL, "DMA region longer than its file");
	/* Seal memfds against shrinking, where they allow it, so that a client cannot pull
	 * memory from under the model (SIGBUS). */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (va == MAP_FAILED)
		return refuse(d, c, &m->h, -errno, "cannot map the DMA region's file");
	/* Guarded before the model can touch it: the file may shrink at any time. */
	int guard = simd_guard_add(&d->guard, va, len);
	if (guard < 0) {
		munmap(va, len);
		return refuse(d, c, &m->h, guard, "no room left in the SIGBUS guard");
	}
	rc = sim_nic_dma_map(c->nic->nic, iova, va, len);
	if (rc < 0) {
		simd_guard_remove(&d->guard, guard);
		munmap(va, len);
		return refuse(d, c, &m->h, rc, "the model refused the DMA region");
	}
	c->regions[c->nregions++] =
	    (struct simd_region){.iova = iova, .len = len, .va = va, .guard = guard};
	c->mapped_bytes += len;
	log_debug("pid %d: %s: DMA region 0x%llx+%llu", (int)c->pid, c->nic->conf->name,
		  (unsigned long long)iova, (unsigned long long)len);
	reply(c, &m->h, 0, NULL, 0, NULL, 0);
	return 0;
}

static int do_dma_unmap(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m)
{
	int i = find_region(c, m->u.dma.iova, m->u.dma.len);
	if (i < 0)
		return refuse(d, c, &m->h, -ENOENT, "no DMA region registered at that IOVA");
	int rc = sim_nic_dma_unmap(c->nic->nic, m->u.dma.iova, m->u.dma.len);
	if (rc < 0)
		return refuse(d, c, &m->h, rc, "the model refused to unregister the region");
	drop_region(d, c, (unsigned)i);
	reply(c, &m->h, 0, NULL, 0, NULL, 0);
	return 0;
}

static int do_cfg(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m)
{
	const struct simd_cfg_req *q = &m->u.cfg;
	if ((q->size != 1 && q->size != 2 && q->size != 4) || q->off % q->size != 0 ||
	    q->off >= 4096 || q->off + q->size > 4096)
		return refuse(d, c, &m->h, -EINVAL, "config space access out of range");
	struct simd_cfg_rep rep = {0};
	int rc = m->h.type == SIMD_CFG_READ
		     ? sim_nic_cfg_read(c->nic->nic, q->off, q->size, &rep.val)
		     : sim_nic_cfg_write(c->nic->nic, q->off, q->size, q->val);
	if (rc < 0)
		return refuse(d, c, &m->h, rc, "the model refused the config space access");
	reply(c, &m->h, 0, &rep, m->h.type == SIMD_CFG_READ ? sizeof(rep) : 0, NULL, 0);
	return 0;
}

/* Function-level reset: the NIC back to power-on state; like an IOMMU, the DMA
 * registrations outlive it. */
static int do_reset(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m)
{
	(void)d;
	sim_nic_flr(c->nic->nic); /* the attachment's BAR0 and eventfd stay its own */
	reply(c, &m->h, 0, NULL, 0, NULL, 0);
	return 0;
}

/* MSI-X: the eventfd of each of the first n vectors (a slice each), the model's own, made
 * once per attach; the client enabled MSI-X in config space itself. */
static int do_irq_vectors(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m)
{
	uint32_t n = m->u.vectors.n;
	int fds[SIMD_MAX_FDS];
	if (n < 1 || n > SIMD_MAX_FDS)
		return refuse(d, c, &m->h, -EINVAL, "vector count out of range");
	for (uint32_t i = 0; i < n; i++) {
		fds[i] = sim_nic_vector_fd(c->nic->nic, i);
		if (fds[i] < 0)
			return refuse(d, c, &m->h, fds[i], "the model has no such vector");
	}
	reply(c, &m->h, 0, NULL, 0, fds, n);
	return 0;
}

static void do_status(struct simd_daemon *d, struct simd_client *c, const struct simd_msg *m)
{
	static char text[SIMD_STATUS_MAX];
	int n = simd_status_report(d, text, sizeof(text));
	reply(c, &m->h, 0, text, n > 0 ? (size_t)n : 0, NULL, 0);
}

/* One message from a client. Returns < 0 only when the connection must be closed. */
static int serve_one(struct simd_daemon *d, struct simd_client *c)
{
	struct simd_msg m;
	int fds[SIMD_MAX_FDS];
	unsigned nfds;
	const char *why;
	memset(&m.h, 0, sizeof(m.h)); /* a refused short message leaves no stale header */
	ssize_t n = simd_recv(c->fd, &m, sizeof(m), fds, SIMD_MAX_FDS, &nfds);
	if (n == 0)
		return -ECONNRESET;
	if (n == -EAGAIN)
		return 0;
	c->requests++;
	c->last_ns = monotonic_ns();
	if (n < 0) {
		if (n != -EMSGSIZE)
			return (int)n;
		/* Too long or too many fds: what we have of the header says whom to answer. */
		m.h.type = m.h.magic == SIMD_MAGIC ? m.h.type : 0;
		refuse(d, c, &m.h, -EMSGSIZE, "message too long or carrying too many fds");
		return 0;
	}
	int rc = simd_check_request(&m, (size_t)n, nfds, &why);
	if (rc < 0) {
		struct simd_hdr h = {0};
		if ((size_t)n >= sizeof(h))
			memcpy(&h, &m, sizeof(h));
		refuse(d, c, &h, rc, why);
	} else if (!c->nic && m.h.type != SIMD_ATTACH && m.h.type != SIMD_STATUS) {
		refuse(d, c, &m.h, -ENOTCONN, "attach to a NIC first");
	} else {
		switch (m.h.type) {
		case SIMD_ATTACH:
			do_attach(d, c, &m);
			break;
		case SIMD_DMA_MAP:
			do_dma_map(d, c, &m, fds[0]);
			break;
		case SIMD_DMA_UNMAP:
			do_dma_unmap(d, c, &m);
			break;
		case SIMD_CFG_READ:
		case SIMD_CFG_WRITE:
			do_cfg(d, c, &m);
			break;
		case SIMD_RESET:
			if (do_reset(d, c, &m) < 0)
				detach(d, c, "reset failed");
			break;
		case SIMD_STATUS:
			do_status(d, c, &m);
			break;
		case SIMD_IRQ_VECTORS:
			do_irq_vectors(d, c, &m);
			break;
		}
	}
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]); /* a mapped region keeps its own reference */
	return 0;
}

/* The client's DMA file shrank under the model, which now reads and writes zero-filled
 * memory there (dma_guard.c): it is dropped as if it had crashed, with this said. */
static void report_shrink(struct simd_daemon *d, const struct simd_client *c, const char *nic)
{
	log_err("pid %d: %s: DMA region at IOVA 0x%llx (%llu bytes) has no memory behind it any "
		"more (SIGBUS at offset 0x%llx): its file was truncated, or hugetlbfs had no "
		"page left for it. The device now sees zeros there; dropping the client. "
		"Register memory that cannot shrink (a memfd made with MFD_ALLOW_SEALING, "
		"which the daemon seals) and populated (MAP_POPULATE)",
		(int)c->pid, nic, (unsigned long long)c->shrank_iova,
		(unsigned long long)c->shrank_len, (unsigned long long)c->shrank_off);
	d->shrink_drops++;
}

static void drop_client(struct simd_daemon *d, unsigned slot, const char *why)
{
	struct simd_client *c = d->clients[slot];
	const char *nic = c->nic ? c->nic->conf->name : "no NIC";
	bool shrank = client_shrank(d, c);
	if (shrank) {
		report_shrink(d, c, nic);
		why = "its DMA memory shrank";
	}
	detach(d, c, why);
	if (!shrank && c->shrank) /* faulted while it was being dropped */
		report_shrink(d, c, nic);
	close(c->fd);
	free(c);
	d->clients[slot] = NULL;
}

static void drop_all_shrunk(struct simd_daemon *d)
{
	uint64_t n;
	if (read(d->guard.event_fd, &n, sizeof(n)) != sizeof(n))
		return;
	for (unsigned i = 0; i < SIMD_MAX_CLIENTS; i++)
		if (d->clients[i] && client_shrank(d, d->clients[i]))
			drop_client(d, i, "its DMA memory shrank");
}

static unsigned connections_of(const struct simd_daemon *d, uid_t uid)
{
	unsigned n = 0;
	for (unsigned i = 0; i < SIMD_MAX_CLIENTS; i++)
		n += d->clients[i] && d->clients[i]->uid == uid;
	return n;
}

/* The peer's credentials, from the kernel (SO_PEERCRED, SO_PEERGROUPS). */
static int peer_identity(int fd, struct simd_client *c)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0)
		return -errno;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gids[0] = cred.gid;
	c->ngids = 1;
	gid_t more[32];
	socklen_t glen = sizeof(more);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, more, &glen) == 0)
		for (unsigned i = 0; i < glen / sizeof(gid_t) && c->ngids < 33; i++)
			c->gids[c->ngids++] = more[i];
	return 0;
}

/* Connections that attached nothing and asked nothing for idle_s: a slot each, kept
 * from whoever needs one. An attached driver may stay silent as long as it likes. */
static void drop_idle(struct simd_daemon *d)
{
	if (!d->conf.idle_s)
		return;
	uint64_t now = monotonic_ns(), limit = (uint64_t)d->conf.idle_s * 1000000000ull;
	for (unsigned i = 0; i < SIMD_MAX_CLIENTS; i++) {
		struct simd_client *c = d->clients[i];
		if (c && !c->nic && now - c->last_ns > limit)
			drop_client(d, i, "idle");
	}
}

static void accept_client(struct simd_daemon *d)
{
	int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct simd_client who = {0};
	const char *why = NULL;
	if (peer_identity(fd, &who) < 0)
		why = "its credentials cannot be read";
	else if (!admitted(d, &who))
		why = "user not admitted (not root, not in the socket's group, in no allow list)";
	else if (connections_of(d, who.uid) >= SIMD_MAX_CLIENTS_PER_UID)
		why = "this user holds its limit of connections already";
	for (unsigned i = 0; !why && i < SIMD_MAX_CLIENTS; i++) {
		if (d->clients[i])
			continue;
		struct simd_client *c = calloc(1, sizeof(*c));
		if (!c)
			break;
		*c = who;
		c->fd = fd;
		c->last_ns = monotonic_ns();
		d->clients[i] = c;
		log_debug("pid %d (uid %d) connected", (int)c->pid, (int)c->uid);
		return;
	}
	d->refused_connections++;
	if (log_budget(&d->conn_log))
		log_warn("pid %d (uid %d): connection refused: %s", (int)who.pid, (int)who.uid,
			 why ? why : "every connection slot is in use");
	close(fd);
}

/* The socket's directory must be the daemon's own: whoever else may rename or replace
 * entries in it could put something else at the path between our calls. A sticky
 * directory (/tmp) lets nobody touch an entry of ours. */
static int safe_socket_dir(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) != 0) {
		int rc = -errno;
		log_err("socket directory %s: %s", dir, strerror(errno));
		return rc;
	}
	bool shared = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
	if (!S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) || shared) {
		log_err("socket directory %s is not a directory owned by uid %d (or root) and "
			"writable by it alone (or sticky): refusing to create the socket there",
			dir, (int)geteuid());
		return -EPERM;
	}
	return 0;
}

/* The socket file is created with its final mode (umask around bind): nothing is done to
 * the path afterwards, so no symlink put there can redirect a chmod. */
static int bind_with_mode(int s, const struct sockaddr_un *sa, unsigned mode, int gid)
{
	int old_gid = gid >= 0 ? setfsgid((gid_t)gid) : -1; /* the file's group, at birth */
	mode_t old = umask(0);
	umask(mode ? (mode_t)(~mode & 0777) : old); /* mode 0: the daemon's umask decides */
	int rc = bind(s, (const struct sockaddr *)sa, sizeof(*sa));
	int saved = errno;
	umask(old);
	if (old_gid >= 0)
		setfsgid((gid_t)old_gid);
	errno = saved;
	return rc;
}

static int listen_on(const char *path, unsigned mode, int gid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* The directory (e.g. /run/myrio) may not exist yet: create its last level. */
	char dir[sizeof(sa.sun_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			log_warn("cannot create %s: %s", dir, strerror(errno));
	}
	int rc = safe_socket_dir(slash && slash != dir ? dir : slash ? "/" : ".");
	if (rc < 0)
		return rc;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	if (bind_with_mode(s, &sa, mode, gid) != 0) {
		if (errno != EADDRINUSE)
			goto fail;
		/* A socket file left by a daemon that died: take it over, unless a live
		 * daemon answers on it. */
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int alive = connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(probe);
		if (alive) {
			close(s);
			log_err("another myrio-simd is serving %s: stop it, or use --socket", path);
			return -EADDRINUSE;
		}
		unlink(path);
		if (bind_with_mode(s, &sa, mode, gid) != 0)
			goto fail;
	}
	if (listen(s, 16) != 0)
		goto fail;
	return s;
fail:
	rc = -errno;
	close(s);
	log_err("cannot listen on %s: %s", path, strerror(-rc));
	return rc;
}

static int serve_loop(struct simd_daemon *d)
{
	enum { SIGNALS, LISTEN, GUARD, CLIENTS };
	struct pollfd pfd[CLIENTS + SIMD_MAX_CLIENTS];
	unsigned slot_of[CLIENTS + SIMD_MAX_CLIENTS];
	for (;;) {
		unsigned n = CLIENTS;
		pfd[SIGNALS] = (struct pollfd){.fd = d->signal_fd, .events = POLLIN};
		pfd[LISTEN] = (struct pollfd){.fd = d->listen_fd, .events = POLLIN};
		pfd[GUARD] = (struct pollfd){.fd = d->guard.event_fd, .events = POLLIN};
		for (unsigned i = 0; i < SIMD_MAX_CLIENTS; i++) {
			if (!d->clients[i])
				continue;
			slot_of[n] = i;
			pfd[n++] = (struct pollfd){.fd = d->clients[i]->fd, .events = POLLIN};
		}
		if (poll(pfd, n, d->conf.idle_s ? 1000 : -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[SIGNALS].revents) {
			struct signalfd_siginfo si;
			if (read(d->signal_fd, &si, sizeof(si)) == sizeof(si))
				log_info("signal %u: shutting down", si.ssi_signo);
			return 0;
		}
		if (pfd[GUARD].revents & POLLIN)
			drop_all_shrunk(d);
		for (unsigned k = CLIENTS; k < n; k++) {
			unsigned slot = slot_of[k];
			if (!pfd[k].revents || !d->clients[slot])
				continue;
			int rc = (pfd[k].revents & POLLIN) ? serve_one(d, d->clients[slot])
							   : -ECONNRESET;
			/* A fault noted while serving (an unmap took the region off the guard) */
			if (rc == 0 && d->clients[slot]->shrank)
				drop_client(d, slot, "its DMA memory shrank");
			else if (rc < 0)
				drop_client(d, slot,
					    rc == -ECONNRESET ? "connection closed"
							      : strerror(-rc));
		}
		drop_idle(d);
		if (pfd[LISTEN].revents & POLLIN)
			accept_client(d);
	}
}

int simd_serve(struct simd_daemon *d)
{
	int rc = listen_on(d->conf.socket_path, d->conf.socket_mode,
			   d->conf.has_group ? (int)d->conf.group : -1);
	if (rc < 0)
		return rc;
	d->listen_fd = rc;
	log_info("serving %u NICs on %s", d->nnics, d->conf.socket_path);
	rc = serve_loop(d);
	for (unsigned i = 0; i < SIMD_MAX_CLIENTS; i++)
		if (d->clients[i])
			drop_client(d, i, "daemon shutting down");
	close(d->listen_fd);
	unlink(d->conf.socket_path);
	return rc;
}
