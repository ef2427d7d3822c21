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

/* A pending UDP socket given a destination the interface reaches is accelerated here. */
static bool udp_goes_accel(struct psock *ps, const struct sockaddr *to, socklen_t tolen)
{
	struct sockaddr_in sin;
	if (ps->type != SOCK_DGRAM || !to || tolen < sizeof sin || to->sa_family != AF_INET)
		return false;
	memcpy(&sin, to, sizeof sin);
	return engine_is_accel_remote(ntohl(sin.sin_addr.s_addr)) && engine_available();
}

/* Takes the lock and enters a call on the accelerated socket fd names. NULL when fd is not
 * one (the kernel's call then), with the lock released; a pending socket qualifies when it
 * is to send to a destination the interface reaches (to). A fork's dead socket, and one
 * connect(AF_UNSPEC) reset, give -1 with *rc set: EBADF, ECONNRESET once. */
static struct psock *enter(int fd, const struct sockaddr *to, socklen_t tolen, struct psock **outer,
			   ssize_t *rc)
{
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return NULL;
	if (ps->state == PS_PENDING && ps->reset_err) {
		*rc = neg_errno(-ps->reset_err);
		ps->reset_err = 0;
		engine_unlock();
		return NULL;
	}
	if (ps->state == PS_DEAD) {
		engine_unlock();
		*rc = neg_errno(psock_dead(fd));
		return NULL;
	}
	if (ps->state == PS_PENDING && !udp_goes_accel(ps, to, tolen)) {
		engine_unlock();
		return NULL;
	}
	*outer = psock_enter(ps);
	return ps;
}

/* Whether calls on fd (sending to `to`) are this layer's, at the time of asking. */
static bool is_ours(int fd, const struct sockaddr *to, socklen_t tolen)
{
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return false;
	bool ours = ps->state != PS_PENDING || ps->reset_err || udp_goes_accel(ps, to, tolen);
	engine_unlock();
	return ours;
}

/* The flags this layer has no answer for, refused as the kernel refuses them where it
 * has none (one line each): 0, or a negative errno. The others are honoured (MSG_DONTWAIT,
 * MSG_NOSIGNAL, MSG_PEEK, MSG_TRUNC, MSG_WAITALL) or change nothing a program can see here:
 * MSG_MORE and MSG_EOR only shape segments, MSG_CONFIRM only spares an ARP probe,
 * MSG_ZEROCOPY is a copy without SO_ZEROCOPY (which is refused), MSG_CMSG_CLOEXEC has no
 * descriptors to pass on TCP or UDP. */
static int send_flags_refused(int type, int flags)
{
	if (flags & MSG_OOB) { /* as the kernel's UDP */
		preload_log_once("send(MSG_OOB): no urgent data on accelerated sockets "
				 "(EOPNOTSUPP)");
		return -EOPNOTSUPP;
	}
	if ((flags & MSG_FASTOPEN) && type == SOCK_STREAM) { /* as with client TFO off */
		preload_log_once("send(MSG_FASTOPEN): no TCP Fast Open on accelerated sockets "
				 "(EOPNOTSUPP)");
		return -EOPNOTSUPP;
	}
	if (flags & MSG_DONTROUTE)
		preload_log_once("send(MSG_DONTROUTE) is ignored: sent as routed");
	return 0;
}

static int recv_flags_refused(int type, int flags)
{
	if (flags & MSG_ERRQUEUE) { /* as the kernel's, with an empty error queue */
		preload_log_once("recv(MSG_ERRQUEUE): accelerated sockets queue no errors "
				 "(EAGAIN)");
		return -EAGAIN;
	}
	if ((flags & MSG_OOB) && type == SOCK_STREAM) { /* as the kernel's, no urgent data */
		preload_log_once("recv(MSG_OOB): no urgent data on accelerated sockets (EINVAL)");
		return -EINVAL;
	}
	return 0;
}

/* A call that succeeds leaves errno as the program left it, as the kernel's do: the waits
 * inside (a full ring, an empty queue) see EAGAIN or EINTR on their way, and programs test
 * errno after a loop of successful calls (nuttcp checks it once its timer ends the loop). */
static ssize_t errno_kept(ssize_t rc, int errno_in)
{
	if (rc >= 0)
		errno = errno_in;
	return rc;
}

/* The kernel's call, unless enter() answered (*rc) or took fd (send/recv_path). */
#define NOT_OURS 0x7ffffffffff0 /* a result no call gives */

static ssize_t send_path(int fd, const struct iovec *iov, int n, int flags,
			 const struct sockaddr *to, socklen_t tolen)
{
	uint32_t ip = 0;
	uint16_t port = 0;
	struct sockaddr_in sin;
	int errno_in = errno;
	int bad_mem = to ? user_addr_in(to, tolen) : 0;
	if (bad_mem)
		return neg_errno(bad_mem);
	bool bad_to = to && (tolen < sizeof sin || to->sa_family != AF_INET);
	if (to && !bad_to)
		memcpy(&sin, to, sizeof sin);
	struct psock *outer;
	ssize_t rc = NOT_OURS;
	struct psock *ps = enter(fd, to, tolen, &outer, &rc);
	if (!ps)
		return rc;
	int refused = send_flags_refused(ps->type, flags);
	if (refused) {
		rc = neg_errno(refused);
	} else if (ps->type == SOCK_STREAM) {
		rc = tcp_sendv(ps, iov, n, flags);
	} else if (bad_to || (to && !sin.sin_port)) { /* as the kernel's: port 0 is EINVAL */
		rc = neg_errno(-EINVAL);
	} else {
		if (to) {
			ip = ntohl(sin.sin_addr.s_addr);
			port = ntohs(sin.sin_port);
		}
		if (ps->shut_wr && (to || ps->peer_ip)) {
			rc = neg_errno(-EPIPE); /* as the kernel's UDP: no SIGPIPE */
		} else if (to && !engine_is_accel_remote(ip) && !IN_MULTICAST(ip)) {
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
	return errno_kept(rc, errno_in);
}

static ssize_t recv_path(int fd, const struct iovec *iov, int n, int flags, struct sockaddr *from,
			 socklen_t *fromlen, int *msg_flags, bool *stream)
{
	struct psock *outer;
	ssize_t rc = NOT_OURS;
	int errno_in = errno;
	struct psock *ps = enter(fd, NULL, 0, &outer, &rc);
	if (!ps)
		return rc;
	if (stream)
		*stream = ps->type == SOCK_STREAM;
	int refused = recv_flags_refused(ps->type, flags);
	if (!refused && from) /* checked before a datagram is taken: none is lost to it */
		refused = user_addr_out(from, fromlen);
	if (refused) {
		rc = neg_errno(refused);
	} else if (ps->type == SOCK_STREAM) {
		rc = tcp_recvv(ps, iov, n, flags);
		if (rc >= 0 && from)
			*fromlen = 0; /* a stream names no sender, as the kernel's */
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
	return errno_kept(rc, errno_in);
}

EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	kernel_calls_resolve();
	struct iovec v = {buf, len};
	ssize_t rc = fdtab_get(fd) ? recv_path(fd, &v, 1, 0, NULL, NULL, NULL, NULL) : NOT_OURS;
	return rc != NOT_OURS ? rc : kern.read(fd, buf, len);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__builtin_trap();
	return read(fd, buf, len);
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	kernel_calls_resolve();
	struct iovec v = {(void *)buf, len};
	ssize_t rc = fdtab_get(fd) ? send_path(fd, &v, 1, 0, NULL, 0) : NOT_OURS;
	return rc != NOT_OURS ? rc : kern.write(fd, buf, len);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	ssize_t rc = NOT_OURS;
	if (fdtab_get(fd))
		rc = n < 0 || n > IOV_MAX ? neg_errno(-EINVAL)
		     : !user_mem_ok(iov, (size_t)n * sizeof *iov, false)
			 ? neg_errno(-EFAULT)
			 : recv_path(fd, iov, n, 0, NULL, NULL, NULL, NULL);
	return rc != NOT_OURS ? rc : kern.readv(fd, iov, n);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	ssize_t rc = NOT_OURS;
	if (fdtab_get(fd))
		rc = n < 0 || n > IOV_MAX ? neg_errno(-EINVAL)
		     : !user_mem_ok(iov, (size_t)n * sizeof *iov, false)
			 ? neg_errno(-EFAULT)
			 : send_path(fd, iov, n, 0, NULL, 0);
	return rc != NOT_OURS ? rc : kern.writev(fd, iov, n);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen)
{
	struct iovec v = {buf, len};
	ssize_t rc =
	    fdtab_get(fd) ? recv_path(fd, &v, 1, flags, from, fromlen, NULL, NULL) : NOT_OURS;
	return rc != NOT_OURS ? rc : kern.recvfrom(fd, buf, len, flags, from, fromlen);
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
	struct iovec v = {(void *)buf, len};
	ssize_t rc = fdtab_get(fd) ? send_path(fd, &v, 1, flags, to, tolen) : NOT_OURS;
	return rc != NOT_OURS ? rc : kern.sendto(fd, buf, len, flags, to, tolen);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	return sendto(fd, buf, len, flags, NULL, 0);
}

/* The message header, and its iovec array as far as IOV_MAX, may be read (and the header
 * written, for recvmsg's lengths and flags). */
static bool msg_ok(const struct msghdr *msg, bool writable)
{
	if (!user_mem_ok(msg, sizeof *msg, writable))
		return false;
	size_t n = msg->msg_iovlen < IOV_MAX ? msg->msg_iovlen : IOV_MAX;
	return user_mem_ok(msg->msg_iov, n * sizeof *msg->msg_iov, false);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (!fdtab_get(fd))
		return kern.recvmsg(fd, msg, flags);
	if (!msg_ok(msg, true))
		return neg_errno(-EFAULT);
	if (msg->msg_iovlen > IOV_MAX)
		return neg_errno(-EMSGSIZE);
	if ((int)msg->msg_namelen < 0)
		return neg_errno(-EINVAL);
	int msg_flags = 0;
	bool stream = false;
	ssize_t rc = recv_path(fd, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
			       msg->msg_name ? &msg->msg_namelen : NULL, &msg_flags, &stream);
	if (rc == NOT_OURS)
		return kern.recvmsg(fd, msg, flags);
	msg->msg_flags = msg_flags;
	if (rc >= 0) {
		if (stream)
			msg->msg_namelen = 0;
		msg->msg_controllen = 0; /* no ancillary data from tcp_lite */
	}
	return rc;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (!fdtab_get(fd))
		return kern.sendmsg(fd, msg, flags);
	if (!msg_ok(msg, false))
		return neg_errno(-EFAULT);
	if (msg->msg_iovlen > IOV_MAX)
		return neg_errno(-EMSGSIZE);
	/* as the kernel's copy_msghdr_from_user: a name longer than any is cut to the longest */
	if ((int)msg->msg_namelen < 0)
		return neg_errno(-EINVAL);
	socklen_t namelen = msg->msg_namelen < sizeof(struct sockaddr_storage)
				? msg->msg_namelen
				: sizeof(struct sockaddr_storage);
	const struct sockaddr *name = namelen ? msg->msg_name : NULL;
	if (name && user_addr_in(name, namelen))
		return neg_errno(-EFAULT);
	if (msg->msg_controllen && is_ours(fd, name, namelen)) {
		preload_log_once("sendmsg() ancillary data on an accelerated socket (EINVAL)");
		return neg_errno(-EINVAL);
	}
	ssize_t rc = send_path(fd, msg->msg_iov, (int)msg->msg_iovlen, flags, name, namelen);
	return rc != NOT_OURS ? rc : kern.sendmsg(fd, msg, flags);
}

/* File -> accelerated socket: pread into a buffer and send, as many chunks as count asks
 * (partial when the socket stops taking, as the kernel's). */
EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	if (!is_ours(out_fd, NULL, 0))
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
		ssize_t sent = send_path(out_fd, &v, 1, 0, NULL, 0);
		if (sent == NOT_OURS) /* it went to the kernel meanwhile (another thread) */
			sent = neg_errno(-EBADF);
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

/* An entry of a program's mmsghdr array may be read and its msg_len written: else the call
 * ends there, EFAULT for the first, as the kernel's. */
static bool mmsg_ok(struct mmsghdr *vec, unsigned i)
{
	return user_mem_ok(&vec[i], sizeof vec[i], true);
}

/* As the kernel's: the datagrams one at a time; the count sent, or the first error. */
EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned n, int flags)
{
	kernel_calls_resolve();
	if (!fdtab_get(fd))
		return kern.sendmmsg(fd, vec, n, flags);
	if (n && !mmsg_ok(vec, 0))
		return (int)neg_errno(-EFAULT);
	const struct msghdr *first = n ? &vec[0].msg_hdr : NULL;
	if (first && first->msg_namelen && user_addr_in(first->msg_name, first->msg_namelen))
		return (int)neg_errno(-EFAULT);
	if (!is_ours(fd, first ? first->msg_name : NULL, first ? first->msg_namelen : 0))
		return kern.sendmmsg(fd, vec, n, flags);
	unsigned i = 0;
	for (; i < n && i < UIO_MAXIOV; i++) {
		if (!mmsg_ok(vec, i))
			return i ? (int)i : (int)neg_errno(-EFAULT);
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
	if (!is_ours(fd, NULL, 0)) {
		kernel_calls_resolve();
		return kern.recvmmsg(fd, vec, n, flags, tmo);
	}
	if (tmo)
		preload_log_once("recvmmsg: the timeout argument is ignored (SO_RCVTIMEO is not)");
	unsigned i = 0;
	for (; i < n && i < UIO_MAXIOV; i++) {
		if (!mmsg_ok(vec, i))
			return i ? (int)i : (int)neg_errno(-EFAULT);
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
