/* SPDX-License-Identifier: BSD-3-Clause */
/* epoll sets that mix kernel and accelerated fds. The user's epoll fd stays a kernel one
 * and holds the kernel fds; accelerated (and pending) sockets are kept here, in a shadow
 * list, and epoll_wait asks them under the lock, then the kernel's set with a zero
 * timeout, and sleeps on the kernel's set and the stack together. Edge-triggered entries
 * report what became ready since their last report; EPOLLONESHOT disables the entry. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "preload.h"

struct ep_entry {
	int epfd, fd;
	struct psock *ps;
	struct epoll_event ev;
	uint32_t last; /* readiness at the last report (edge-triggered) */
	bool disabled; /* EPOLLONESHOT after its report */
	struct ep_entry *next;
};

static struct ep_entry *entries; /* engine lock */
static unsigned nentries;	 /* read without the lock to skip the list */

static struct ep_entry **find(int epfd, int fd)
{
	struct ep_entry **e = &entries;
	while (*e && ((*e)->epfd != epfd || (*e)->fd != fd))
		e = &(*e)->next;
	return e;
}

void epoll_forget(struct psock *ps, int epfd)
{
	if (!__atomic_load_n(&nentries, __ATOMIC_RELAXED))
		return;
	for (struct ep_entry **e = &entries; *e;) {
		if ((ps && (*e)->ps == ps) || (epfd >= 0 && (*e)->epfd == epfd)) {
			struct ep_entry *dead = *e;
			*e = dead->next;
			free(dead);
			__atomic_fetch_sub(&nentries, 1, __ATOMIC_RELAXED);
		} else {
			e = &(*e)->next;
		}
	}
}

void epoll_to_kernel(struct psock *ps)
{
	if (!__atomic_load_n(&nentries, __ATOMIC_RELAXED))
		return;
	for (struct ep_entry **e = &entries; *e;) {
		if ((*e)->ps != ps) {
			e = &(*e)->next;
			continue;
		}
		struct ep_entry *moved = *e;
		struct epoll_event ev = moved->ev;
		if (moved->disabled) /* a reported EPOLLONESHOT entry: nothing but errors */
			ev.events &= EPOLLONESHOT | EPOLLET;
		if (kern.epoll_ctl(moved->epfd, EPOLL_CTL_ADD, moved->fd, &ev) < 0)
			preload_log("epoll: a socket that went to the kernel could not follow "
				    "into epoll fd %d",
				    moved->epfd);
		*e = moved->next;
		free(moved);
		__atomic_fetch_sub(&nentries, 1, __ATOMIC_RELAXED);
	}
}

void epoll_drained(struct psock *ps, uint32_t events)
{
	if (!__atomic_load_n(&nentries, __ATOMIC_RELAXED))
		return;
	for (struct ep_entry *e = entries; e; e = e->next)
		if (e->ps == ps)
			e->last &= ~events;
}

EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	kernel_calls_resolve();
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return kern.epoll_ctl(epfd, op, fd, ev);
	int rc = 0;
	if (ps->state == PS_DEAD)
		rc = psock_dead(fd);
	else if (op != EPOLL_CTL_DEL && !user_mem_ok(ev, sizeof *ev, false))
		rc = -EFAULT;
	if (rc) {
		engine_unlock();
		return (int)neg_errno(rc);
	}
	struct ep_entry **e = find(epfd, fd);
	switch (op) {
	case EPOLL_CTL_ADD:
		if (*e) {
			rc = -EEXIST;
		} else if (!(*e = calloc(1, sizeof **e))) {
			rc = -ENOMEM;
		} else {
			**e = (struct ep_entry){.epfd = epfd, .fd = fd, .ps = ps, .ev = *ev};
			__atomic_fetch_add(&nentries, 1, __ATOMIC_RELAXED);
		}
		break;
	case EPOLL_CTL_MOD:
		if (!*e) {
			rc = -ENOENT;
		} else {
			(*e)->ev = *ev;
			(*e)->last = 0;
			(*e)->disabled = false;
		}
		break;
	case EPOLL_CTL_DEL:
		if (!*e) {
			rc = -ENOENT;
		} else {
			struct ep_entry *dead = *e;
			*e = dead->next;
			free(dead);
			__atomic_fetch_sub(&nentries, 1, __ATOMIC_RELAXED);
		}
		break;
	default:
		rc = -EINVAL;
	}
	engine_unlock();
	return (int)neg_errno(rc);
}

static bool has_entries(int epfd)
{
	if (!__atomic_load_n(&nentries, __ATOMIC_RELAXED))
		return false;
	engine_lock();
	struct ep_entry *e = entries;
	while (e && e->epfd != epfd)
		e = e->next;
	engine_unlock();
	return e != NULL;
}

/* Lock held: the shadow entries of epfd that are ready, up to max. */
static int collect(int epfd, struct epoll_event *out, int max)
{
	int n = 0;
	for (struct ep_entry *e = entries; e && n < max; e = e->next) {
		if (e->epfd != epfd || e->disabled)
			continue;
		uint32_t want = e->ev.events | EPOLLERR | EPOLLHUP;
		uint32_t r;
		if (e->ps->state == PS_PENDING) {
			struct pollfd p = {.fd = e->fd, .events = (short)(e->ev.events & 0xffff)};
			r = kern.poll(&p, 1, 0) > 0 ? (uint16_t)p.revents : 0;
		} else {
			r = (uint16_t)psock_revents(e->ps, (short)(e->ev.events & 0xffff));
		}
		r &= want; /* poll and epoll share the bit values */
		uint32_t report = r;
		if (e->ev.events & EPOLLET) {
			report = r & ~e->last;
			e->last = r;
		}
		if (!report)
			continue;
		out[n].events = report;
		out[n].data = e->ev.data;
		n++;
		if (e->ev.events & EPOLLONESHOT)
			e->disabled = true;
	}
	return n;
}

/* epoll_pwait over a set with accelerated entries. */
static int epoll_wait_any(int epfd, struct epoll_event *events, int max, int timeout_ms,
			  const sigset_t *sigmask)
{
	if (max <= 0 || (size_t)max > INT_MAX / sizeof *events) /* the kernel's EP_MAX_EVENTS */
		return (int)neg_errno(-EINVAL);
	if (!user_mem_ok(events, (size_t)max * sizeof *events, true))
		return (int)neg_errno(-EFAULT);
	uint64_t deadline = timeout_ms >= 0 ? engine_now_ms() + (uint64_t)timeout_ms : 0;
	int n, rc = 0;
	engine_lock();
	engine_progress();
	for (;;) {
		n = collect(epfd, events, max);
		if (n < max) {
			int k = kern.epoll_pwait(epfd, events + n, max - n, 0, NULL);
			if (k < 0) {
				rc = -1;
				break;
			}
			n += k;
		}
		int left = -1;
		if (timeout_ms >= 0) {
			uint64_t now = engine_now_ms();
			left = now >= deadline ? 0 : (int)(deadline - now);
		}
		if (n || left == 0)
			break;
		struct pollfd p = {.fd = epfd, .events = POLLIN};
		rc = engine_block(&p, 1, left, sigmask);
		if (rc < 0)
			break;
	}
	engine_unlock();
	return rc < 0 ? -1 : n;
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int max, int timeout_ms,
		       const sigset_t *sigmask)
{
	kernel_calls_resolve();
	if (!has_entries(epfd))
		return kern.epoll_pwait(epfd, events, max, timeout_ms, sigmask);
	return epoll_wait_any(epfd, events, max, timeout_ms, sigmask);
}

/* The accelerated entries' wait is timed in milliseconds (rounded up). */
EXPORT int epoll_pwait2(int epfd, struct epoll_event *events, int max,
			const struct timespec *timeout, const sigset_t *sigmask)
{
	kernel_calls_resolve();
	if (!has_entries(epfd)) {
		if (!kern.epoll_pwait2)
			return (int)neg_errno(-ENOSYS);
		return kern.epoll_pwait2(epfd, events, max, timeout, sigmask);
	}
	int ms = timespec_ms(timeout);
	if (ms == -2)
		return -1;
	return epoll_wait_any(epfd, events, max, ms, sigmask);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout_ms)
{
	return epoll_pwait(epfd, events, max, timeout_ms, NULL);
}
