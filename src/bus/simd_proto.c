/* SPDX-License-Identifier: BSD-3-Clause */
/* The model daemon's wire protocol: message checks, fd passing, IOVA allocation. */
#include "bus/simd_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/log.h"

size_t simd_request_len(uint16_t type)
{
	switch (type) {
	case SIMD_ATTACH:
		return sizeof(struct simd_attach_req);
	case SIMD_DMA_MAP:
	case SIMD_DMA_UNMAP:
		return sizeof(struct simd_dma_req);
	case SIMD_CFG_READ:
	case SIMD_CFG_WRITE:
		return sizeof(struct simd_cfg_req);
	case SIMD_IRQ_VECTORS:
		return sizeof(struct simd_vectors_req);
	case SIMD_RESET:
	case SIMD_STATUS:
		return 0;
	default:
		return 0;
	}
}

unsigned simd_request_fds(uint16_t type)
{
	return type == SIMD_DMA_MAP ? 1 : 0;
}

const char *simd_type_name(uint16_t type)
{
	static const char *const names[] = {
	    [SIMD_ATTACH] = "attach",	    [SIMD_DMA_MAP] = "dma-map",
	    [SIMD_DMA_UNMAP] = "dma-unmap", [SIMD_CFG_READ] = "cfg-read",
	    [SIMD_CFG_WRITE] = "cfg-write", [SIMD_RESET] = "reset",
	    [SIMD_STATUS] = "status",	    [SIMD_IRQ_VECTORS] = "irq-vectors",
	};
	if (type == 0 || type >= SIMD_TYPE_END)
		return "unknown";
	return names[type];
}

int simd_check_request(const void *buf, size_t len, unsigned nfds, const char **why)
{
	struct simd_hdr h;
	if (len < sizeof(h)) {
		*why = "message shorter than the protocol header";
		return -EPROTO;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != SIMD_MAGIC) {
		*why = "bad magic: not a myrio-simd client";
		return -EPROTO;
	}
	if (h.version != SIMD_VERSION) {
		*why = "protocol version mismatch: use a library and daemon of the same release";
		return -EPROTONOSUPPORT;
	}
	if (h.type == 0 || h.type >= SIMD_TYPE_END) {
		*why = "unknown request type";
		return -EOPNOTSUPP;
	}
	if (len != sizeof(h) + simd_request_len(h.type)) {
		*why = "request length does not match its type";
		return -EBADMSG;
	}
	if (nfds != simd_request_fds(h.type)) {
		*why = "wrong number of file descriptors for this request";
		return -EBADMSG;
	}
	if (h.type == SIMD_ATTACH) {
		const struct simd_attach_req *a =
		    (const void *)((const uint8_t *)buf + sizeof(struct simd_hdr));
		size_t n = strnlen(a->nic, sizeof(a->nic));
		if (n == 0 || n == sizeof(a->nic)) {
			*why = "NIC name empty or not NUL-terminated";
			return -EINVAL;
		}
	}
	*why = NULL;
	return 0;
}

int simd_check_dma_range(uint64_t iova, uint64_t len, uint64_t page, const char **why)
{
	if (len == 0) {
		*why = "zero-length DMA region";
		return -EINVAL;
	}
	if (page == 0 || (page & (page - 1)) != 0 || iova % page != 0 || len % page != 0) {
		*why = "DMA region IOVA or length not page aligned";
		return -EINVAL;
	}
	if (iova + len < iova) {
		*why = "DMA region wraps around the IOVA space";
		return -EOVERFLOW;
	}
	if (iova + len > SIMD_IOVA_LIMIT) {
		*why = "DMA region beyond the 48-bit IOVA space";
		return -ERANGE;
	}
	*why = NULL;
	return 0;
}

bool simd_ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	/* Written so that no sum can overflow: ranges were checked not to wrap. */
	return a < b + blen && b < a + alen;
}

void simd_hdr_init(struct simd_hdr *h, uint16_t type, uint32_t seq)
{
	memset(h, 0, sizeof(*h));
	h->magic = SIMD_MAGIC;
	h->version = SIMD_VERSION;
	h->type = type;
	h->seq = seq;
}

int simd_send(int sock, const void *msg, size_t len, const int *fds, unsigned nfds)
{
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int) * SIMD_MAX_FDS)];
	} ctl;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > SIMD_MAX_FDS)
		return -EINVAL;
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

ssize_t simd_recv(int sock, void *buf, size_t cap, int *fds, unsigned max_fds, unsigned *nfds)
{
	/* Room for more fds than anyone may send, so that excess ones arrive (and get
	 * closed) instead of being silently dropped with MSG_CTRUNC. */
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int) * 16)];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ssize_t n;
	*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	unsigned got = 0;
	bool excess = false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < max_fds) {
				fds[got++] = fd;
			} else {
				close(fd);
				excess = true;
			}
		}
	}
	*nfds = got;
	if (excess || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (unsigned i = 0; i < got; i++)
			close(fds[i]);
		*nfds = 0;
		return -EMSGSIZE;
	}
	return n;
}

ssize_t simd_recv_timeout(int sock, void *buf, size_t cap, int *fds, unsigned max_fds,
			  unsigned *nfds, int timeout_ms)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int rc;
	*nfds = 0;
	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	return simd_recv(sock, buf, cap, fds, max_fds, nfds);
}

void simd_iova_init(struct simd_iova_alloc *a)
{
	a->next = SIMD_IOVA_BASE;
}

int simd_iova_get(struct simd_iova_alloc *a, uint64_t len, uint64_t align, uint64_t *iova)
{
	if (len == 0 || align == 0 || (align & (align - 1)) != 0)
		return -EINVAL;
	uint64_t start = (a->next + align - 1) & ~(align - 1);
	/* A guard page's worth of IOVA between regions catches device overruns. */
	if (start < a->next || start + len < start || start + len > SIMD_IOVA_LIMIT - align)
		return -ENOSPC;
	*iova = start;
	a->next = start + len + align;
	return 0;
}

const char *simd_socket_path(const char *explicit_path)
{
	if (explicit_path && *explicit_path)
		return explicit_path;
	const char *env = getenv(SIMD_SOCKET_ENV);
	if (env && *env)
		return env;
	return SIMD_DEFAULT_SOCKET;
}

int simd_connect(const char *path, int *sock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	*sock = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_err("model daemon socket path too long (%zu bytes, at most %zu): %s",
			strlen(path), sizeof(sa.sun_path) - 1, path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int rc = -errno;
		close(s);
		if (rc == -ENOENT || rc == -ECONNREFUSED)
			log_err("model daemon not running at %s (%s): start it with "
				"'myrio-simd --socket %s --nic nic0,cable=nic1 --nic nic1' or name "
				"another socket with simd:NIC@SOCKET or $%s",
				path, strerror(-rc), path, SIMD_SOCKET_ENV);
		else
			log_err("cannot connect to the model daemon at %s: %s", path,
				strerror(-rc));
		return rc;
	}
	*sock = s;
	return 0;
}
