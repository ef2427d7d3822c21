/* SPDX-License-Identifier: BSD-3-Clause */
/* The interposed calls that make, name, join and end sockets. An AF_INET TCP or UDP socket
 * starts pending: the kernel holds it until bind() or connect() shows whether its address
 * is the accelerated interface's; then it moves to tcp_lite, or leaves the table and stays
 * the kernel's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <pthread.h>
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
	if (psock_refs(ps) > 1)
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
	engine_lock(); /* a close of the fd's last holder may still be forgetting it (close) */
	int rc = fdtab_set(fd, ps);
	engine_unlock();
	if (rc < 0) {
		preload_log_once("a socket's fd is past the table: it stays the kernel's");
		free(ps);
	}
	return fd;
}

/* Lock held: unlocks and returns the errno of rc. */
static int unlock_with(long rc)
{
	engine_unlock();
	return (int)neg_errno(rc);
}

/* Lock held on a socket that is not pending: NULL, the lock let go, for a pending one (the
 * kernel's call then). */
static struct psock *not_pending(struct psock *ps)
{
	if (ps && ps->state == PS_PENDING) {
		engine_unlock();
		return NULL;
	}
	return ps;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	uint32_t ip;
	uint16_t port;
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return kern.bind(fd, addr, len);
	int bad_mem = user_addr_in(addr, len);
	if (bad_mem)
		return unlock_with(bad_mem);
	if (ps->state != PS_PENDING || ps->bound_port)
		return unlock_with(ps->state == PS_DEAD ? psock_dead(fd) : -EINVAL);
	if (!sin_of(addr, len, &ip, &port) || !engine_is_accel_local(ip) || !engine_available()) {
		to_kernel(fd, ps);
		engine_unlock();
		return kern.bind(fd, addr, len);
	}
	ps->bound_ip = ip;
	ps->bound_port = port;
	int rc = ps->type == SOCK_DGRAM ? udp_bind(ps)
		 : port			? tcp_port_claim(ps)
					: tcp_port_pick(ps);
	if (rc < 0) /* unbound, as the kernel leaves a socket whose bind failed */
		ps->bound_ip = ps->bound_port = 0;
	engine_unlock();
	return rc;
}

EXPORT int listen(int fd, int backlog)
{
	struct psock *ps = psock_lock(fd);
	if (ps && ps->type != SOCK_STREAM) {
		engine_unlock();
		ps = NULL;
	}
	if (!ps)
		return kern.listen(fd, backlog);
	int rc = tcp_listen(ps, backlog);
	engine_unlock();
	return rc;
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct psock *ps = not_pending(psock_lock(fd));
	if (!ps)
		return kern.accept4(fd, addr, len, flags);
	/* As the kernel's: the connection is taken (or the call waits, or says EAGAIN) before
	 * the address is written; where it cannot be, the connection is closed, EFAULT. */
	int bad_mem = addr ? user_addr_out(addr, len) : 0;
	struct psock *outer = psock_enter(ps);
	int rc = tcp_accept(ps, bad_mem ? NULL : addr, bad_mem ? NULL : len, flags);
	psock_exit(ps, outer);
	engine_unlock();
	if (rc >= 0 && bad_mem) {
		close(rc);
		return (int)neg_errno(bad_mem);
	}
	return rc;
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}

/* connect(AF_UNSPEC): a UDP socket forgets its peer (its port stays bound), a socket not
 * yet connected has nothing to dissolve, as with the kernel. */
/* connect(AF_UNSPEC), lock held: a UDP socket forgets its peer (its port stays bound), a
 * TCP socket is disconnected as the kernel's tcp_disconnect does (tcp_unspec), a socket not
 * yet connected has nothing to dissolve. */
static int connect_unspec(struct psock *ps)
{
	if (ps->state == PS_PENDING)
		return 0;
	if (ps->state != PS_UDP)
		return tcp_disconnect(ps);
	myrio_udp_connect(ps->u, 0, 0);
	ps->peer_ip = 0;
	ps->peer_port = 0;
	ps->udp_error = 0;
	return 0;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	uint32_t ip;
	uint16_t port;
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return kern.connect(fd, addr, len);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	int bad_mem = user_addr_in(addr, len);
	if (bad_mem)
		return unlock_with(bad_mem);
	if (addr && len >= sizeof addr->sa_family && addr->sa_family == AF_UNSPEC)
		return unlock_with(connect_unspec(ps));
	/* a fork's child has no stack: its pending sockets stay the kernel's */
	bool accel =
	    sin_of(addr, len, &ip, &port) && engine_is_accel_remote(ip) && engine_available();
	if (ps->state == PS_PENDING && !accel && !ps->bound_port) {
		to_kernel(fd, ps);
		engine_unlock();
		return kern.connect(fd, addr, len);
	}
	if (!accel) {
		preload_log_once("connect() of an accelerated socket to an address the "
				 "interface does not reach (ENETUNREACH)");
		return unlock_with(-ENETUNREACH);
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
	struct psock *ps = not_pending(psock_lock(fd));
	if (!ps)
		return kern.shutdown(fd, how);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	int rc = ps->state == PS_UDP ? udp_shutdown(ps, how) : tcp_shutdown(ps, how);
	engine_unlock();
	return rc;
}

/* Lock held: fd is closed (or about to be): the table and the epoll shadow follow. */
static void forget_fd(int fd)
{
	struct psock *ps = fdtab_take(fd);
	if (ps) {
		if (psock_refs(ps) == 1)
			epoll_forget(ps, -1);
		psock_release(ps);
	} else {
		epoll_forget(NULL, fd);
	}
}

/* Lock held: the last close of a UDP socket that sent waits (bounded) for the NIC to report
 * its datagrams sent, so that a program that closes and then ends at once (_exit) does not
 * lose them. A signal handler's close does not wait inside the call it interrupted. */
static void udp_close_flush(int fd)
{
	struct psock *ps = fdtab_get(fd);
	if (!ps || ps->state != PS_UDP || !ps->udp_sent || psock_refs(ps) != 1 || engine_nested())
		return;
	struct psock *outer = psock_enter(ps);
	udp_tx_wait(engine_now_ms() + UDP_TX_WAIT_MS, false);
	psock_exit(ps, outer);
}

/* A socket's fd is closed in the kernel first, then in the table, the lock held throughout:
 * a signal handler's dup of it meanwhile either finds it in both (and keeps the socket) or
 * in neither (EBADF), as with the kernel's own close; a socket() of another thread that
 * gets the number back waits for the lock to enter it. Other fds are closed after the
 * lock is let go (a kernel socket's close may linger). close is a cancellation point: one
 * that came while the lock was held (and cancellation off, engine_lock) acts once it is
 * let go. */
EXPORT int close(int fd)
{
	kernel_calls_resolve();
	engine_lock();
	if (fdtab_get(fd)) {
		udp_close_flush(fd);
		int rc = kern.close(fd);
		int err = errno;
		forget_fd(fd);
		engine_unlock();
		pthread_testcancel();
		errno = err;
		return rc;
	}
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

/* A dup of oldfd's socket: the reference is taken, and the lock held, from before the
 * kernel's dup until the table follows it, so that a signal handler's close of oldfd in
 * between leaves the socket to newfd (it was named twice), as the kernel's close would.
 * A dup of another fd runs without the lock (a dup2 over a kernel socket may linger). */
static struct psock *dup_begin(int oldfd)
{
	kernel_calls_resolve();
	engine_lock();
	struct psock *ps = fdtab_get(oldfd);
	if (ps)
		psock_ref(ps);
	else
		engine_unlock();
	return ps;
}

/* After the kernel made newfd a copy of oldfd's file (or failed, newfd < 0): the table
 * follows (the socket that newfd named before, dup2 over it, is released). */
static int dup_end(struct psock *ps, int oldfd, int newfd)
{
	int err = errno;
	if (!ps)
		engine_lock();
	if (newfd >= 0 && newfd != oldfd) {
		struct psock *old_target = fdtab_take(newfd);
		if (old_target) {
			if (psock_refs(old_target) == 1)
				epoll_forget(old_target, -1);
			psock_release(old_target);
		}
		if (ps)
			fdtab_set(newfd, ps);
	} else if (ps) {
		psock_release(ps); /* no new fd names it */
		ps = NULL;
	}
	bool follow = ps && ps->state != PS_PENDING && ps->state != PS_DEAD;
	engine_unlock();
	if (follow)
		stdio_follow(newfd);
	errno = err;
	return newfd;
}

EXPORT int dup(int fd)
{
	struct psock *ps = dup_begin(fd);
	return dup_end(ps, fd, kern.dup(fd));
}

EXPORT int dup2(int oldfd, int newfd)
{
	struct psock *ps = dup_begin(oldfd);
	return dup_end(ps, oldfd, kern.dup2(oldfd, newfd));
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	struct psock *ps = dup_begin(oldfd);
	return dup_end(ps, oldfd, kern.dup3(oldfd, newfd, flags));
}

static int fcntl_common(int fd, int cmd, long arg)
{
	kernel_calls_resolve();
	if (fdtab_get(fd) && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) {
		struct psock *ps = dup_begin(fd);
		return dup_end(ps, fd, kern.fcntl(fd, cmd, arg));
	}
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return kern.fcntl(fd, cmd, arg);
	int nonblock = ps->nonblock;
	bool accel = ps->state != PS_PENDING && ps->state != PS_DEAD;
	if (cmd == F_SETFL) /* a pending socket's: the kernel's flag too */
		ps->nonblock = (arg & O_NONBLOCK) != 0;
	engine_unlock();
	if (accel && cmd == F_GETFL) {
		int fl = kern.fcntl(fd, F_GETFL);
		return fl < 0 ? fl : (fl & ~O_NONBLOCK) | (nonblock ? O_NONBLOCK : 0);
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

/* The kernel takes an ioctl's int at any alignment (Python's fcntl.ioctl passes one in a
 * byte buffer), so it is read by bytes. */
static int ioctl_int(const void *arg)
{
	int v;
	memcpy(&v, arg, sizeof v);
	return v;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	kernel_calls_resolve();
	struct psock *ps = psock_lock(fd);
	if (ps && (req == FIONBIO || req == FIONREAD) &&
	    !user_mem_ok(arg, sizeof(int), req == FIONREAD))
		return unlock_with(-EFAULT);
	if (ps && ps->state == PS_PENDING) {
		if (req == FIONBIO)
			ps->nonblock = ioctl_int(arg) != 0;
		engine_unlock();
		ps = NULL;
	}
	if (!ps)
		return kern.ioctl(fd, req, arg);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	if (req == FIONBIO) {
		ps->nonblock = ioctl_int(arg) != 0;
		return unlock_with(0);
	}
	if (req == FIONREAD) {
		engine_progress();
		int n = 0;
		if (ps->state == PS_TCP_CONN)
			n = (int)myrio_tcp_rx_queued(ps->c);
		else if (ps->state == PS_UDP && (psock_revents(ps, POLLIN) & POLLIN) && ps->held)
			n = (int)ps->held->len;
		memcpy(arg, &n, sizeof n);
		return unlock_with(0);
	}
	preload_log_once("ioctl: a request this layer does not have on an accelerated socket "
			 "(ENOTTY)");
	return unlock_with(-ENOTTY);
}

/* A pending TCP socket whose name is this layer's: bound (its kernel socket is not), or
 * disconnected by connect(AF_UNSPEC). */
static bool named_pending(const struct psock *ps)
{
	return ps->state == PS_PENDING && (ps->bound_ip || ps->bound_port || ps->unspec_port);
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct psock *ps = psock_lock(fd);
	if (ps && !named_pending(ps))
		ps = not_pending(ps);
	if (!ps)
		return kern.getsockname(fd, addr, len);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	int bad_mem = user_addr_out(addr, len);
	if (bad_mem)
		return unlock_with(bad_mem);
	uint32_t ip = ps->bound_ip, rip;
	uint16_t port = ps->bound_port ? ps->bound_port : ps->unspec_port, rport;
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
	struct psock *ps = not_pending(psock_lock(fd));
	if (!ps)
		return kern.getpeername(fd, addr, len);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	int bad_mem = user_addr_out(addr, len);
	if (bad_mem)
		return unlock_with(bad_mem);
	uint32_t ip = ps->peer_ip, lip;
	uint16_t port = ps->peer_port, lport;
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
	struct psock *ps = psock_lock(fd);
	if (ps && !user_mem_ok(len, sizeof *len, true))
		return unlock_with(-EFAULT); /* as the kernel's get_user of optlen */
	if (ps && ps->state == PS_PENDING && ps->reset_err && level == SOL_SOCKET &&
	    name == SO_ERROR) {
		if (*len < sizeof(int) || !user_mem_ok(val, sizeof(int), true))
			return unlock_with(*len < sizeof(int) ? -EINVAL : -EFAULT);
		int err = ps->reset_err; /* connect(AF_UNSPEC) reset the connection */
		ps->reset_err = 0;
		engine_unlock();
		memcpy(val, &err, sizeof err);
		*len = sizeof err;
		return 0;
	}
	if (!(ps = not_pending(ps)))
		return kern.getsockopt(fd, level, name, val, len);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	int rc = psock_getsockopt(fd, ps, level, name, val, len);
	engine_unlock();
	return rc;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return kern.setsockopt(fd, level, name, val, len);
	if (ps->state == PS_DEAD)
		return unlock_with(psock_dead(fd));
	if (ps->state == PS_PENDING) {
		/* the kernel's socket takes it too, in case it stays the kernel's */
		int rc = kern.setsockopt(fd, level, name, val, len);
		if (rc < 0) {
			int err = errno;
			return unlock_with(-err);
		}
		if (level == IPPROTO_IP && name == IP_ADD_MEMBERSHIP) {
			preload_log_once("IP_ADD_MEMBERSHIP before bind(): the socket stays the "
					 "kernel's (join after bind to accelerate it)");
			to_kernel(fd, ps);
			return unlock_with(0);
		}
		int saved = errno;
		if (psock_setsockopt(fd, ps, level, name, val, len) < 0)
			errno = saved; /* an option only the kernel has: refused if it moves */
		return unlock_with(0);
	}
	int rc = psock_setsockopt(fd, ps, level, name, val, len);
	engine_unlock();
	return rc;
}
