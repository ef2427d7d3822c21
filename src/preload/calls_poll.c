/* SPDX-License-Identifier: BSD-3-Clause */
/* poll, ppoll, select and pselect over sets that mix kernel and accelerated fds: the
 * accelerated ones are asked under the lock, the kernel's with a zero-timeout poll, and
 * when none is ready the thread sleeps on the kernel's fds and the stack together. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload.h"

static int ms_left(uint64_t deadline, int timeout_ms)
{
	if (timeout_ms < 0)
		return -1;
	uint64_t now = engine_now_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

/* Lock held. */
static bool is_accel(int fd)
{
	struct psock *ps = fdtab_get(fd);
	return ps && ps->state != PS_PENDING;
}

static int kernel_ppoll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *sigmask)
{
	struct timespec ts, *tsp = NULL;
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	return kern.ppoll(fds, n, tsp, sigmask);
}

int poll_any(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *sigmask)
{
	nfds_t nacc = 0, ours = 0;
	if (fdtab_empty())
		return kernel_ppoll(fds, n, timeout_ms, sigmask);
	if (n > SIZE_MAX / sizeof *fds) /* more than any fd table: the kernel's answer */
		return (int)neg_errno(-EINVAL);
	if (!user_mem_ok(fds, n * sizeof *fds, true)) /* read below, as the kernel's copy */
		return (int)neg_errno(-EFAULT);
	for (nfds_t i = 0; i < n; i++)
		ours += fdtab_get(fds[i].fd) != NULL;
	if (ours) { /* the sockets' states are read under the lock, held from here */
		engine_lock();
		for (nfds_t i = 0; i < n; i++)
			nacc += is_accel(fds[i].fd);
		if (!nacc)
			engine_unlock();
	}
	if (!nacc)
		return kernel_ppoll(fds, n, timeout_ms, sigmask);
	/* the kernel's fds, and where each came from */
	struct pollfd *kfds = n > nacc ? calloc(n - nacc, sizeof *kfds) : NULL;
	nfds_t *from = n > nacc ? calloc(n - nacc, sizeof *from) : NULL;
	nfds_t nk = 0;
	if (n > nacc && (!kfds || !from)) {
		engine_unlock();
		free(kfds);
		free(from);
		return (int)neg_errno(-ENOMEM);
	}
	for (nfds_t i = 0; i < n; i++)
		if (!is_accel(fds[i].fd)) {
			kfds[nk] = fds[i];
			from[nk++] = i;
		}
	uint64_t deadline = timeout_ms >= 0 ? engine_now_ms() + (uint64_t)timeout_ms : 0;
	int ready, rc = 0;
	engine_progress();
	for (;;) {
		ready = 0;
		for (nfds_t i = 0; i < n; i++) {
			struct psock *ps = fdtab_get(fds[i].fd);
			if (!ps || ps->state == PS_PENDING)
				continue;
			fds[i].revents = psock_revents(ps, fds[i].events);
			ready += fds[i].revents != 0;
		}
		if (nk) {
			int k = kern.poll(kfds, nk, 0);
			ready += k > 0 ? k : 0;
		}
		int left = ms_left(deadline, timeout_ms);
		if (ready || left == 0)
			break;
		rc = engine_block(kfds, nk, left, sigmask);
		if (rc < 0)
			break;
	}
	engine_unlock();
	for (nfds_t k = 0; k < nk; k++)
		fds[from[k]].revents = kfds[k].revents;
	free(kfds);
	free(from);
	return rc < 0 ? -1 : ready;
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	kernel_calls_resolve();
	return poll_any(fds, n, timeout_ms, NULL);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen)
{
	if (fdslen / sizeof *fds < n)
		__builtin_trap();
	return poll(fds, n, timeout_ms);
}

int timespec_ms(const struct timespec *ts)
{
	if (!ts)
		return -1;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000) {
		errno = EINVAL;
		return -2;
	}
	int64_t ms = (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *sigmask)
{
	kernel_calls_resolve();
	int ms = timespec_ms(ts);
	if (ms == -2)
		return -1;
	return poll_any(fds, n, ms, sigmask);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		       const sigset_t *sigmask, size_t fdslen)
{
	if (fdslen / sizeof *fds < n)
		__builtin_trap();
	return ppoll(fds, n, ts, sigmask);
}

/* An fd set as the kernel reads it: nfds bits, which may be more than FD_SETSIZE when the
 * program allocated larger sets (FD_ISSET would trap past FD_SETSIZE). */
#define SET_BITS (8 * sizeof(unsigned long))
static bool set_has(const fd_set *set, int fd)
{
	return set && (((const unsigned long *)set)[fd / SET_BITS] >> (fd % SET_BITS) & 1);
}

static void set_clear(fd_set *set, int fd)
{
	((unsigned long *)set)[fd / SET_BITS] &= ~(1ul << (fd % SET_BITS));
}

/* The kernel reads no bit past its fd table, whose size is within RLIMIT_NOFILE. */
static int select_nfds(int nfds)
{
	if (nfds <= FD_SETSIZE)
		return nfds;
	long max = sysconf(_SC_OPEN_MAX);
	return max > 0 && nfds > max ? (int)max : nfds;
}

/* select and pselect through poll_any, when a set holds an accelerated fd. */
static int select_any(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, int timeout_ms,
		      const sigset_t *sigmask)
{
	nfds_t n = 0;
	for (int fd = 0; fd < nfds; fd++)
		n += set_has(rd, fd) || set_has(wr, fd) || set_has(ex, fd);
	struct pollfd *p = calloc(n ? n : 1, sizeof *p);
	if (!p)
		return (int)neg_errno(-ENOMEM);
	n = 0;
	for (int fd = 0; fd < nfds; fd++) {
		short ev =
		    (short)((set_has(rd, fd) ? POLLIN : 0) | (set_has(wr, fd) ? POLLOUT : 0) |
			    (set_has(ex, fd) ? POLLPRI : 0));
		if (ev)
			p[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	int rc = poll_any(p, n, timeout_ms, sigmask);
	for (nfds_t i = 0; rc >= 0 && i < n; i++)
		if (p[i].revents & POLLNVAL)
			rc = (int)neg_errno(-EBADF);
	if (rc < 0) {
		free(p);
		return rc;
	}
	int count = 0;
	for (nfds_t i = 0; i < n; i++) {
		int fd = p[i].fd;
		short r = p[i].revents;
		bool in = (r & (POLLIN | POLLHUP | POLLERR)) && (p[i].events & POLLIN);
		bool out = (r & (POLLOUT | POLLERR)) && (p[i].events & POLLOUT);
		bool pri = (r & POLLPRI) && (p[i].events & POLLPRI);
		if (rd && (p[i].events & POLLIN) && !in)
			set_clear(rd, fd);
		if (wr && (p[i].events & POLLOUT) && !out)
			set_clear(wr, fd);
		if (ex && (p[i].events & POLLPRI) && !pri)
			set_clear(ex, fd);
		count += in + out + pri;
	}
	free(p);
	return count;
}

/* The sets as far as the kernel reads and writes them (nfds bits in whole longs). */
static bool sets_ok(int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	size_t bytes = ((size_t)nfds + SET_BITS - 1) / SET_BITS * sizeof(unsigned long);
	return (!rd || user_mem_ok(rd, bytes, true)) && (!wr || user_mem_ok(wr, bytes, true)) &&
	       (!ex || user_mem_ok(ex, bytes, true));
}

static bool any_accel(int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	for (int fd = 0; fd < nfds; fd++)
		if ((set_has(rd, fd) || set_has(wr, fd) || set_has(ex, fd)) && is_accel(fd))
			return true;
	return false;
}

EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	kernel_calls_resolve();
	if (nfds < 0 || fdtab_empty() || !sets_ok(select_nfds(nfds), rd, wr, ex) ||
	    !any_accel(select_nfds(nfds), rd, wr, ex))
		return kern.select(nfds, rd, wr, ex, tv); /* its EFAULT for a bad set */
	nfds = select_nfds(nfds);
	int ms = -1;
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0)
			return (int)neg_errno(-EINVAL);
		int64_t m = (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
		ms = m > INT32_MAX ? INT32_MAX : (int)m;
	}
	uint64_t start = engine_now_ms();
	int rc = select_any(nfds, rd, wr, ex, ms, NULL);
	if (tv) { /* Linux reports the time left */
		uint64_t spent = engine_now_ms() - start;
		int64_t left = ms - (int64_t)spent;
		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000;
		tv->tv_usec = (left % 1000) * 1000;
	}
	return rc;
}

EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts,
		   const sigset_t *sigmask)
{
	kernel_calls_resolve();
	if (nfds < 0 || fdtab_empty() || !sets_ok(select_nfds(nfds), rd, wr, ex) ||
	    !any_accel(select_nfds(nfds), rd, wr, ex))
		return kern.pselect(nfds, rd, wr, ex, ts, sigmask);
	nfds = select_nfds(nfds);
	int ms = timespec_ms(ts);
	if (ms == -2)
		return -1;
	return select_any(nfds, rd, wr, ex, ms, sigmask);
}
