/* SPDX-License-Identifier: BSD-3-Clause */
/* The interposed calls that make, name, join and end sockets. An AF_INET TCP or UDP socket
 * starts pending: the kernel holds it until bind() or connect() shows whether its address
 * is the accelerated interface's; then it moves to tcp_lite, or leaves the table and stays
 * the kernel's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "preload.h"

static bool sin_of(const struct sockaddr *addr, socklen_t len, uint32_t *ip, uint16_t *port)
{
	struct sockaddr_in sin;
	if (!addr || len < sizeof sin || addr->sa_family != AF_INET)
		return false;
	memcpy(&sin, addr, sizeof sin);
	*ip = ntohl(sin.sin_addr.s_addr);
	*port = ntohs(sin.sin_port);
	return true;
}

static void fill_sin(struct sockaddr *addr, socklen_t *len, uint32_t ip, uint16_t port)
{
	struct sockaddr_in sin = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(ip)};
	memcpy(addr, &sin, *len < sizeof sin ? *len : sizeof sin);
	*len = sizeof sin;
}

/* The pending socket stays the kernel's for good, under every fd that names it (dup), and
 * in the epoll sets it was added to. */
static void to_kernel(int fd, struct psock *ps)
{
	engine_lock();
	tcp_port_release(ps);
	if (ps->refs > 1)
		fdtab_clear_psock(ps);
	else
		fdtab_clear(fd);
	epoll_to_kernel(ps);
	engine_unlock();
	free(ps);
}

EXPORT int socket(int domain, int type, int protocol)
{
	kernel_calls_resolve();
	int fd = kern.socket(domain, type, protocol);
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0 || domain != AF_INET || (base != SOCK_STREAM && base != SOCK_DGRAM))
		return fd;
	if (protocol && protocol != (base == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP))
		return fd;
	if (!engine_available())
		return fd;
	struct psock *ps = psock_new(base);
	if (!ps)
		return fd;
	ps->nonblock = (type & SOCK_NONBLOCK) != 0;
	if (fdtab_set(fd, ps) < 0) {
		preload_log_once("a socket's fd is past the table: it stays the kernel's");
		free(ps);
	}
	return fd;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct psock *ps = fdtab_get(fd);
	uint32_t ip;
	uint16_t port;
	if (!ps)
		return kern.bind(fd, addr, len);
	if (ps->state != PS_PENDING || ps->bound_port)
		return (int)neg_errno(ps->state == PS_DEAD ? -EBADF : -EINVAL);
	if (!sin_of(addr, len, &ip, &port) || !engine_is_accel_local(ip) || !engine_available()) {
		to_kernel(fd, ps);
		return kern.bind(fd, addr, len);
	}
	ps->bound_ip = ip;
	ps->bound_port = port;
	if (ps->type != SOCK_DGRAM && !port)
		return 0; /* the port comes at listen() */
	engine_lock();
	int rc = ps->type == SOCK_DGRAM ? udp_bind(ps) : tcp_port_claim(ps);
	engine_unlock();
	if (rc < 0) /* unbound, as the kernel leaves a socket whose bind failed */
		ps->bound_ip = ps->bound_port = 0;
	return rc;
}

EXPORT int listen(int fd, int backlog)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->type != SOCK_STREAM)
		return kern.listen(fd, backlog);
	engine_lock();
	int rc = tcp_listen(ps, backlog);
	engine_unlock();
	return rc;
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state == PS_PENDING)
		return kern.accept4(fd, addr, len, flags);
	engine_lock();
	if (fdtab_get(fd) != ps) { /* closed since the look-up (a signal handler's close) */
		engine_unlock();
		return (int)neg_errno(-EBADF);
	}
	struct psock *outer = psock_enter(ps);
	int rc = tcp_accept(ps, addr, len, flags);
	psock_exit(ps, outer);
	engine_unlock();
	return rc;
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}

/* connect(AF_UNSPEC): a UDP socket forgets its peer (its port stays bound), a socket not
 * yet connected has nothing to dissolve, as with the kernel. */
static int connect_unspec(struct psock *ps)
{
	if (ps->state == PS_PENDING)
		return 0;
	if (ps->state != PS_UDP) {
		preload_log_once("connect(AF_UNSPEC) does not dissolve an accelerated TCP "
				 "connection (EOPNOTSUPP)");
		return (int)neg_errno(-EOPNOTSUPP);
	}
	engine_lock();
	myrio_udp_connect(ps->u, 0, 0);
	ps->peer_ip = 0;
	ps->peer_port = 0;
	ps->udp_error = 0;
	engine_unlock();
	return 0;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct psock *ps = fdtab_get(fd);
	uint32_t ip;
	uint16_t port;
	if (!ps)
		return kern.connect(fd, addr, len);
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	if (addr && len >= sizeof addr->sa_family && addr->sa_family == AF_UNSPEC)
		return connect_unspec(ps);
	/* a fork's child has no stack: its pending sockets stay the kernel's */
	bool accel =
	    sin_of(addr, len, &ip, &port) && engine_is_accel_remote(ip) && engine_available();
	if (ps->state == PS_PENDING && !accel && !ps->bound_port) {
		to_kernel(fd, ps);
		return kern.connect(fd, addr, len);
	}
	if (!accel) {
		preload_log_once("connect() of an accelerated socket to an address the "
				 "interface does not reach (ENETUNREACH)");
		return (int)neg_errno(-ENETUNREACH);
	}
	engine_lock();
	if (fdtab_get(fd) != ps) { /* closed since the look-up (a signal handler's close) */
		engine_unlock();
		return (int)neg_errno(-EBADF);
	}
	struct psock *outer = psock_enter(ps);
	int rc =
	    ps->type == SOCK_STREAM ? tcp_connect(fd, ps, ip, port) : udp_connect(ps, ip, port);
	psock_exit(ps, outer);
	engine_unlock();
	return rc;
}

EXPORT int shutdown(int fd, int how)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state == PS_PENDING)
		return kern.shutdown(fd, how);
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	if (ps->state == PS_UDP)
		return (int)neg_errno(ps->peer_ip ? 0 : -ENOTCONN);
	engine_lock();
	int rc = tcp_shutdown(ps, how);
	engine_unlock();
	return rc;
}

/* Lock held: fd is closed (or about to be): the table and the epoll shadow follow. */
static void forget_fd(int fd)
{
	struct psock *ps = fdtab_get(fd);
	if (ps) {
		fdtab_clear(fd);
		if (ps->refs == 1)
			epoll_forget(ps, -1);
		psock_release(ps);
	} else {
		epoll_forget(NULL, fd);
	}
}

EXPORT int close(int fd)
{
	kernel_calls_resolve();
	engine_lock();
	forget_fd(fd);
	engine_unlock();
	return kern.close(fd);
}

/* The kernel closes the range but for the fds the port and stack hold; the table drops
 * the range's sockets. */
EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	kernel_calls_resolve();
	if (first > last || (flags & CLOSE_RANGE_CLOEXEC))
		return kern.close_range(first, last, flags);
	int rc = 0;
	unsigned from = first;
	for (unsigned fd = first; fd <= last && fd < FDTAB_SIZE; fd++) {
		if (!engine_owns_fd((int)fd))
			continue;
		if (fd > from && kern.close_range(from, fd - 1, flags) < 0)
			rc = -1;
		from = fd + 1;
	}
	if (from <= last && from >= first && kern.close_range(from, last, flags) < 0)
		rc = -1;
	engine_lock();
	for (unsigned fd = first; fd <= last && fd < FDTAB_SIZE; fd++)
		if (!engine_owns_fd((int)fd))
			forget_fd((int)fd);
	engine_unlock();
	return rc;
}

EXPORT void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : (unsigned)lowfd, ~0u, 0);
}

/* A vfork child shares the parent's memory: its close() or dup2() before exec would change
 * the parent's table and stack. It runs as a fork's child instead (its own copy). */
EXPORT pid_t vfork(void)
{
	return fork();
}

/* After the kernel made newfd a copy of oldfd's file: the table follows. */
static int dup_follow(int oldfd, int newfd, struct psock *old_target)
{
	if (newfd < 0)
		return newfd;
	struct psock *ps = fdtab_get(oldfd);
	engine_lock();
	if (old_target) {
		fdtab_clear(newfd);
		if (old_target->refs == 1)
			epoll_forget(old_target, -1);
		psock_release(old_target);
	}
	if (ps) {
		ps->refs++;
		fdtab_set(newfd, ps);
	}
	engine_unlock();
	if (ps && ps->state != PS_PENDING && ps->state != PS_DEAD)
		stdio_follow(newfd);
	return newfd;
}

EXPORT int dup(int fd)
{
	kernel_calls_resolve();
	return dup_follow(fd, kern.dup(fd), NULL);
}

EXPORT int dup2(int oldfd, int newfd)
{
	kernel_calls_resolve();
	if (oldfd == newfd)
		return kern.dup2(oldfd, newfd);
	struct psock *target = fdtab_get(newfd);
	return dup_follow(oldfd, kern.dup2(oldfd, newfd), target);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	kernel_calls_resolve();
	struct psock *target = oldfd == newfd ? NULL : fdtab_get(newfd);
	return dup_follow(oldfd, kern.dup3(oldfd, newfd, flags), target);
}

static int fcntl_common(int fd, int cmd, long arg)
{
	kernel_calls_resolve();
	struct psock *ps = fdtab_get(fd);
	if (ps && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		return dup_follow(fd, kern.fcntl(fd, cmd, arg), NULL);
	if (ps && ps->state != PS_PENDING && ps->state != PS_DEAD) {
		if (cmd == F_GETFL) {
			int fl = kern.fcntl(fd, F_GETFL);
			return fl < 0 ? fl : (fl & ~O_NONBLOCK) | (ps->nonblock ? O_NONBLOCK : 0);
		}
		if (cmd == F_SETFL)
			ps->nonblock = (arg & O_NONBLOCK) != 0;
	} else if (ps && cmd == F_SETFL) {
		ps->nonblock = (arg & O_NONBLOCK) != 0; /* pending: the kernel's flag too */
	}
	return kern.fcntl(fd, cmd, arg);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	kernel_calls_resolve();
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state == PS_PENDING) {
		if (ps && req == FIONBIO && arg)
			ps->nonblock = *(int *)arg != 0;
		return kern.ioctl(fd, req, arg);
	}
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	if (req == FIONBIO) {
		if (!arg)
			return (int)neg_errno(-EFAULT);
		ps->nonblock = *(int *)arg != 0;
		return 0;
	}
	if (req == FIONREAD) {
		if (!arg)
			return (int)neg_errno(-EFAULT);
		engine_lock();
		engine_progress();
		int n = 0;
		if (ps->state == PS_TCP_CONN)
			n = (int)myrio_tcp_rx_queued(ps->c);
		else if (ps->state == PS_UDP && (psock_revents(ps, POLLIN) & POLLIN) && ps->held)
			n = (int)ps->held->len;
		engine_unlock();
		*(int *)arg = n;
		return 0;
	}
	preload_log_once("ioctl: a request this layer does not have on an accelerated socket "
			 "(ENOTTY)");
	return (int)neg_errno(-ENOTTY);
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state == PS_PENDING)
		return kern.getsockname(fd, addr, len);
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	if (!addr || !len)
		return (int)neg_errno(-EFAULT);
	uint32_t ip = ps->bound_ip, rip;
	uint16_t port = ps->bound_port, rport;
	engine_lock();
	if (ps->state == PS_TCP_CONN)
		myrio_tcp_addr(ps->c, &ip, &port, &rip, &rport);
	else if (ps->state == PS_UDP && ps->peer_ip)
		ip = engine_local_ip();
	engine_unlock();
	fill_sin(addr, len, ip, port);
	return 0;
}

EXPORT int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state == PS_PENDING)
		return kern.getpeername(fd, addr, len);
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	if (!addr || !len)
		return (int)neg_errno(-EFAULT);
	uint32_t ip = ps->peer_ip, lip;
	uint16_t port = ps->peer_port, lport;
	engine_lock();
	bool conn = ps->state == PS_UDP ? ps->peer_ip != 0
					: ps->state == PS_TCP_CONN &&
					      myrio_tcp_state(ps->c) >= MYRIO_TCP_ESTABLISHED;
	if (conn && ps->state == PS_TCP_CONN)
		myrio_tcp_addr(ps->c, &lip, &lport, &ip, &port);
	engine_unlock();
	if (!conn)
		return (int)neg_errno(-ENOTCONN);
	fill_sin(addr, len, ip, port);
	return 0;
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state == PS_PENDING)
		return kern.getsockopt(fd, level, name, val, len);
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	engine_lock();
	int rc = psock_getsockopt(ps, level, name, val, len);
	engine_unlock();
	return rc;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps)
		return kern.setsockopt(fd, level, name, val, len);
	if (ps->state == PS_DEAD)
		return (int)neg_errno(-EBADF);
	if (ps->state == PS_PENDING) {
		/* the kernel's socket takes it too, in case it stays the kernel's */
		int rc = kern.setsockopt(fd, level, name, val, len);
		if (rc < 0)
			return rc;
		if (level == IPPROTO_IP && name == IP_ADD_MEMBERSHIP) {
			preload_log_once("IP_ADD_MEMBERSHIP before bind(): the socket stays the "
					 "kernel's (join after bind to accelerate it)");
			to_kernel(fd, ps);
			return 0;
		}
		engine_lock();
		int saved = errno;
		if (psock_setsockopt(fd, ps, level, name, val, len) < 0)
			errno = saved; /* an option only the kernel has: refused if it moves */
		engine_unlock();
		return 0;
	}
	engine_lock();
	int rc = psock_setsockopt(fd, ps, level, name, val, len);
	engine_unlock();
	return rc;
}
