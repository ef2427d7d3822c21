/* SPDX-License-Identifier: BSD-3-Clause */
/* The interposed data calls: read/write and their vector, socket and file variants, down
 * to two paths (send, receive) per accelerated socket. Kernel fds and pending sockets go
 * straight to the kernel. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "preload.h"

#define SENDFILE_CHUNK 65536

static bool accelerated(struct psock *ps)
{
	return ps && ps->state != PS_PENDING;
}

static void after_send(ssize_t rc)
{
	if (preload_raise_sigpipe) {
		preload_raise_sigpipe = false;
		int saved = errno;
		raise(SIGPIPE);
		errno = saved;
	}
	(void)rc;
}

/* Takes the lock and enters a call on the socket fd names, when that is still ps (the
 * caller looked it up without the lock: a signal handler of this thread, or another
 * thread, may have closed fd and freed ps since). False with EBADF, the lock released,
 * otherwise or for a fork's dead socket. */
static bool lock_enter(int fd, struct psock *ps, struct psock **outer)
{
	engine_lock();
	if (fdtab_get(fd) != ps || ps->state == PS_DEAD) {
		engine_unlock();
		errno = EBADF;
		return false;
	}
	*outer = psock_enter(ps);
	return true;
}

static ssize_t send_path(int fd, struct psock *ps, const struct iovec *iov, int n, int flags,
			 const struct sockaddr *to, socklen_t tolen)
{
	uint32_t ip = 0;
	uint16_t port = 0;
	struct sockaddr_in sin;
	bool bad_to = to && (tolen < sizeof sin || to->sa_family != AF_INET);
	if (to && !bad_to)
		memcpy(&sin, to, sizeof sin);
	struct psock *outer;
	if (!lock_enter(fd, ps, &outer))
		return -1;
	ssize_t rc;
	if (ps->type == SOCK_STREAM) {
		rc = tcp_sendv(ps, iov, n, flags);
	} else if (bad_to) {
		rc = neg_errno(-EINVAL);
	} else {
		if (to) {
			ip = ntohl(sin.sin_addr.s_addr);
			port = ntohs(sin.sin_port);
		}
		if (to && !engine_is_accel_remote(ip) && !IN_MULTICAST(ip)) {
			preload_log_once("sendto() from an accelerated socket to an address the "
					 "interface does not reach (ENETUNREACH)");
			rc = neg_errno(-ENETUNREACH);
		} else {
			rc = udp_sendv(ps, iov, n, flags, ip, port);
		}
	}
	psock_exit(ps, outer);
	engine_unlock();
	after_send(rc);
	return rc;
}

static ssize_t recv_path(int fd, struct psock *ps, const struct iovec *iov, int n, int flags,
			 struct sockaddr *from, socklen_t *fromlen, int *msg_flags)
{
	struct psock *outer;
	if (!lock_enter(fd, ps, &outer))
		return -1;
	ssize_t rc;
	if (ps->type == SOCK_STREAM) {
		rc = tcp_recvv(ps, iov, n, flags);
		from = NULL;
	} else {
		uint32_t ip = 0;
		uint16_t port = 0;
		rc = udp_recvv(ps, iov, n, flags, &ip, &port, msg_flags);
		if (rc >= 0 && from && fromlen) {
			struct sockaddr_in sin = {.sin_family = AF_INET,
						  .sin_port = htons(port),
						  .sin_addr.s_addr = htonl(ip)};
			memcpy(from, &sin, *fromlen < sizeof sin ? *fromlen : sizeof sin);
			*fromlen = sizeof sin;
		}
	}
	psock_exit(ps, outer);
	engine_unlock();
	return rc;
}

/* A pending UDP socket given a destination the interface reaches is accelerated here. */
static bool udp_goes_accel(struct psock *ps, const struct sockaddr *to, socklen_t tolen)
{
	struct sockaddr_in sin;
	if (!ps || ps->state != PS_PENDING || ps->type != SOCK_DGRAM || !to || tolen < sizeof sin ||
	    to->sa_family != AF_INET)
		return false;
	memcpy(&sin, to, sizeof sin);
	return engine_is_accel_remote(ntohl(sin.sin_addr.s_addr)) && engine_available();
}

EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps)) {
		kernel_calls_resolve();
		return kern.read(fd, buf, len);
	}
	struct iovec v = {buf, len};
	return recv_path(fd, ps, &v, 1, 0, NULL, NULL, NULL);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__builtin_trap();
	return read(fd, buf, len);
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps)) {
		kernel_calls_resolve();
		return kern.write(fd, buf, len);
	}
	struct iovec v = {(void *)buf, len};
	return send_path(fd, ps, &v, 1, 0, NULL, 0);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps))
		return kern.readv(fd, iov, n);
	if (n < 0 || n > IOV_MAX)
		return neg_errno(-EINVAL);
	return recv_path(fd, ps, iov, n, 0, NULL, NULL, NULL);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps))
		return kern.writev(fd, iov, n);
	if (n < 0 || n > IOV_MAX)
		return neg_errno(-EINVAL);
	return send_path(fd, ps, iov, n, 0, NULL, 0);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps))
		return kern.recvfrom(fd, buf, len, flags, from, fromlen);
	struct iovec v = {buf, len};
	return recv_path(fd, ps, &v, 1, flags, from, fromlen, NULL);
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	return recvfrom(fd, buf, len, flags, NULL, NULL);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		__builtin_trap();
	return recvfrom(fd, buf, len, flags, NULL, NULL);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
			      struct sockaddr *from, socklen_t *fromlen)
{
	if (len > buflen)
		__builtin_trap();
	return recvfrom(fd, buf, len, flags, from, fromlen);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
		      socklen_t tolen)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps) && !udp_goes_accel(ps, to, tolen))
		return kern.sendto(fd, buf, len, flags, to, tolen);
	struct iovec v = {(void *)buf, len};
	return send_path(fd, ps, &v, 1, flags, to, tolen);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	return sendto(fd, buf, len, flags, NULL, 0);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps))
		return kern.recvmsg(fd, msg, flags);
	if (msg->msg_iovlen > IOV_MAX)
		return neg_errno(-EMSGSIZE);
	msg->msg_flags = 0;
	bool stream = ps->type == SOCK_STREAM; /* ps may be gone after the call (a close) */
	ssize_t rc = recv_path(fd, ps, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
			       msg->msg_name ? &msg->msg_namelen : NULL, &msg->msg_flags);
	if (rc >= 0) {
		if (stream)
			msg->msg_namelen = 0;
		msg->msg_controllen = 0; /* no ancillary data from tcp_lite */
	}
	return rc;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps) && !udp_goes_accel(ps, msg->msg_name, msg->msg_namelen))
		return kern.sendmsg(fd, msg, flags);
	if (msg->msg_iovlen > IOV_MAX)
		return neg_errno(-EMSGSIZE);
	if (msg->msg_controllen) {
		preload_log_once("sendmsg() ancillary data on an accelerated socket (EINVAL)");
		return neg_errno(-EINVAL);
	}
	return send_path(fd, ps, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
			 msg->msg_namelen);
}

/* File -> accelerated socket: pread into a buffer and send, as many chunks as count asks
 * (partial when the socket stops taking, as the kernel's). */
EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	struct psock *ps = fdtab_get(out_fd);
	if (!accelerated(ps))
		return kern.sendfile(out_fd, in_fd, offset, count);
	off_t pos = offset ? *offset : lseek(in_fd, 0, SEEK_CUR);
	if (pos < 0)
		return -1;
	static __thread uint8_t buf[SENDFILE_CHUNK];
	size_t done = 0;
	while (done < count) {
		size_t want = count - done < sizeof buf ? count - done : sizeof buf;
		ssize_t got = pread(in_fd, buf, want, pos + (off_t)done);
		if (got <= 0) {
			if (got < 0 && !done)
				return -1;
			break;
		}
		struct iovec v = {buf, (size_t)got};
		ssize_t sent = send_path(out_fd, ps, &v, 1, 0, NULL, 0);
		if (sent <= 0) {
			if (!done)
				return sent;
			break;
		}
		done += (size_t)sent;
		if (sent < got)
			break;
	}
	if (offset)
		*offset = pos + (off_t)done;
	else
		lseek(in_fd, pos + (off_t)done, SEEK_SET);
	return (ssize_t)done;
}

EXPORT ssize_t sendfile64(int out_fd, int in_fd, off_t *offset, size_t count)
{
	return sendfile(out_fd, in_fd, offset, count);
}

/* As the kernel's: the datagrams one at a time; the count sent, or the first error. */
EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned n, int flags)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps) &&
	    !(n && udp_goes_accel(ps, vec[0].msg_hdr.msg_name, vec[0].msg_hdr.msg_namelen))) {
		kernel_calls_resolve();
		return kern.sendmmsg(fd, vec, n, flags);
	}
	unsigned i = 0;
	for (; i < n && i < UIO_MAXIOV; i++) {
		ssize_t rc = sendmsg(fd, &vec[i].msg_hdr, flags);
		if (rc < 0)
			return i ? (int)i : -1;
		vec[i].msg_len = (unsigned)rc;
	}
	return (int)i;
}

/* The first datagram as flags say (blocking unless MSG_DONTWAIT), the rest only while
 * they are there when MSG_WAITFORONE; the timeout argument is not honoured (one line). */
EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned n, int flags, struct timespec *tmo)
{
	struct psock *ps = fdtab_get(fd);
	if (!accelerated(ps)) {
		kernel_calls_resolve();
		return kern.recvmmsg(fd, vec, n, flags, tmo);
	}
	if (tmo)
		preload_log_once("recvmmsg: the timeout argument is ignored (SO_RCVTIMEO is not)");
	unsigned i = 0;
	for (; i < n && i < UIO_MAXIOV; i++) {
		int f = flags & ~MSG_WAITFORONE;
		if (i && (flags & MSG_WAITFORONE))
			f |= MSG_DONTWAIT;
		ssize_t rc = recvmsg(fd, &vec[i].msg_hdr, f);
		if (rc < 0)
			return i ? (int)i : -1;
		vec[i].msg_len = (unsigned)rc;
	}
	return (int)i;
}
