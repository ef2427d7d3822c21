/* SPDX-License-Identifier: BSD-3-Clause */
/* The stack's waitable fd: an epoll fd holding the port's interrupt eventfd and a timerfd
 * set to the stack's next deadline, so that one fd in the application's event loop wakes
 * it for a frame or a due timer. */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "tcp_lite/stack.h"
#include "util/log.h"

static int watch(int ep, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

int myrio_stack_fd(struct myrio_stack *s)
{
	if (s->wait_fd >= 0)
		return s->wait_fd;
	int irq = myrio_port_irq_fd_queue(s->port, s->queue);
	if (irq < 0) {
		log_err("tcp_lite: the port gives no interrupt eventfd to sleep on (%d): open it "
			"with myrio_port_conf.irq set",
			irq);
		return irq;
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int rc = tfd < 0 || ep < 0 ? -errno : 0;
	if (rc == 0)
		rc = watch(ep, irq);
	if (rc == 0)
		rc = watch(ep, tfd);
	if (rc == 0) { /* datagrams a sibling stack hands over (share.c) wake it too */
		int ifd = share_inbox_fd(s);
		rc = ifd < 0 ? -errno : watch(ep, ifd);
	}
	if (rc < 0) {
		log_err("tcp_lite: cannot make the stack's waitable fd (%d)", rc);
		if (tfd >= 0)
			close(tfd);
		if (ep >= 0)
			close(ep);
		return rc;
	}
	s->irq_fd = irq;
	s->timer_fd = tfd;
	s->timer_deadline = UINT64_MAX; /* disarmed */
	s->wait_fd = ep;
	return ep;
}

/* The timerfd at the next deadline (relative: conf.clock need not be CLOCK_MONOTONIC). */
static int set_timer(struct myrio_stack *s, uint64_t deadline)
{
	struct itimerspec its = {{0, 0}, {0, 0}};
	if (deadline != UINT64_MAX) {
		uint64_t now = myrio_stack_clock_ns(s);
		uint64_t d = deadline > now ? deadline - now : 1; /* 0 would disarm it */
		its.it_value.tv_sec = (time_t)(d / 1000000000u);
		its.it_value.tv_nsec = (long)(d % 1000000000u);
	}
	s->timer_deadline = deadline;
	return timerfd_settime(s->timer_fd, 0, &its, NULL) == 0 ? 0 : -errno;
}

int myrio_stack_arm(struct myrio_stack *s)
{
	if (s->wait_fd < 0)
		return -EBADF;
	uint64_t v;
	(void)!read(s->irq_fd, &v, sizeof(v)); /* what woke us is being handled */
	bool fired = read(s->timer_fd, &v, sizeof(v)) == sizeof(v);
	int rc = myrio_port_irq_arm_queue(s->port, s->queue);
	if (rc < 0)
		return rc;
	s->poll_tail |= POLL_TAIL_ARMED;
	/* A sleep that ends before the timer is due (a frame) leaves it pending for the same
	 * deadline, most often a far one: setting it again is a system call per sleep. */
	uint64_t deadline = myrio_stack_next_deadline(s);
	if (!fired && deadline == s->timer_deadline)
		return 0;
	return set_timer(s, deadline);
}

void stack_fd_rearm(struct myrio_stack *s)
{
	uint64_t deadline = myrio_stack_next_deadline(s);
	if (deadline < s->timer_deadline)
		set_timer(s, deadline);
}

void stack_fd_close(struct myrio_stack *s)
{
	if (s->wait_fd < 0)
		return;
	close(s->timer_fd);
	close(s->wait_fd);
	s->wait_fd = -1;
}
