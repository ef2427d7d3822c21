/* SPDX-License-Identifier: BSD-3-Clause */
/* The measurement loop and honest CPU accounting for a polling program.
 *
 * A polling loop is always 100% busy, so "CPU used" must mean something else. Two modes:
 *
 *  - spin (default): a side's CPU time is the share of the thread's CPU time
 *    (CLOCK_THREAD_CPUTIME_ID) that its poll iterations which processed something took
 *    (frames received or sent, or the test's own work). Empty polls are what a NIC's
 *    interrupt would have saved, so they are not counted. The iterations are timed with
 *    the wall-clock TSC, which also runs while the thread is descheduled: only their
 *    share of the run is taken from it, never a time, so the figure stays within the
 *    CPU the thread got.
 *  - --irq: when both sides have been idle for irq_spin polls, arm both NICs' interrupts,
 *    poll once more (an arm races with frames that just arrived) and block in poll(2) on
 *    the interrupt eventfds. The CPU figure is then the thread's whole CPU time
 *    (spinning, system calls, wake-ups and all), split between the sides in proportion
 *    to their busy time. This is what netperf measures on a kernel stack, and what the
 *    published tables mean.
 *
 * The device model's own thread is the NIC's silicon and is not counted.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
/* The time-stamp counter: a few ns to read where clock_gettime costs ~20; busy times are
 * converted to seconds with the rate measured over the run. */
static inline uint64_t ticks(void)
{
	return __rdtsc();
}
/* An idle poll yields the core's execution resources for a moment: on a virtual machine
 * the model's thread may well run on this core's other hyperthread. */
static inline void relax(void)
{
	_mm_pause();
}
#else
static inline void relax(void) {}
static inline uint64_t ticks(void)
{
	return perf_now_ns();
}
#endif

#define RUN_GRACE_NS 10000000000ull

static double rusage_cpu(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* This thread's CPU time: the scheduler's account, not the time that passed. */
static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One iteration: each side's stack and work, timed; returns the total work done. A stepped
 * model (instruction counts under callgrind) runs one round of its NICs first, untimed. */
static inline int step(struct perf *pf, bool count)
{
	if (pf->stepped)
		myrio_sim_step(pf->sim, 1);
	uint64_t t0 = ticks();
	int wa = myrio_stack_poll(pf->a.stack) + (pf->work_a ? pf->work_a(pf) : 0);
	uint64_t t1 = ticks();
	int wb = myrio_stack_poll(pf->b.stack) + (pf->work_b ? pf->work_b(pf) : 0);
	if (count) {
		uint64_t t2 = ticks();
		if (wa)
			pf->a.busy_ticks += t1 - t0;
		if (wb)
			pf->b.busy_ticks += t2 - t1;
	}
	return wa + wb;
}

/* Arms both interrupts, checks once more, then sleeps until one fires (or 1 ms passes:
 * timers such as delayed ACKs must run). */
static void irq_sleep(struct perf *pf)
{
	myrio_port_irq_arm(pf->a.port);
	myrio_port_irq_arm(pf->b.port);
	if (step(pf, true))
		return;
	struct pollfd fds[2] = {{.fd = pf->a.irq_fd, .events = POLLIN},
				{.fd = pf->b.irq_fd, .events = POLLIN}};
	pf->r.sleeps++;
	if (poll(fds, 2, 1) > 0) {
		pf->r.wakeups++;
		uint64_t v;
		for (int i = 0; i < 2; i++)
			if (fds[i].revents & POLLIN)
				(void)!read(fds[i].fd, &v, sizeof(v));
	}
}

static void progress(struct perf *pf, const char *label, double t, double total)
{
	if (pf->o.quiet || !label)
		return;
	double gbps = t > 0 ? (pf->r.bytes_recv * 8 / t / 1e9) : 0;
	if (pf->r.trans)
		fprintf(stderr, "\r%s %5.1f/%.0f s  %.0f trans/s   ", label, t, total,
			pf->r.trans / t);
	else
		fprintf(stderr, "\r%s %5.1f/%.0f s  %.3f Gb/s   ", label, t, total, gbps);
}

/* Frames a side lost inside the host: send ring full, receive pool empty, NIC without a
 * receive buffer or overrun. On a lossless model link any of these explains retransmits. */
static uint64_t port_drops(struct perf_side *side)
{
	struct myrio_port_stats st;
	if (myrio_port_stats(side->port, &st) < 0)
		return 0;
	return st.tx_ring_full + st.rx_refill_failed + st.rx_missed;
}

int perf_run(struct perf *pf, double seconds, bool (*done)(struct perf *), const char *label)
{
	uint64_t drops_a = port_drops(&pf->a), drops_b = port_drops(&pf->b);
	pf->a.busy_ticks = pf->b.busy_ticks = 0;
	bool show = label && !pf->o.quiet && seconds >= 3 && isatty(STDERR_FILENO);
	double cpu0 = thread_cpu(), proc0 = rusage_cpu(RUSAGE_SELF);
	uint64_t model0 = 0;
	bool model = pf->sim && myrio_sim_thread_cpu_ns(pf->sim, &model0) == 0;
	uint64_t start = perf_now_ns(), end = start + (uint64_t)(seconds * 1e9), now = start;
	/* A run that measured nothing (a loaded host gave the model or this thread no time)
	 * goes on until a first unit arrives, for RUN_GRACE_NS at most: the figure is per
	 * elapsed second either way. */
	uint64_t grace_end = end + RUN_GRACE_NS;
	uint64_t trans0 = pf->r.trans, bytes0 = pf->r.bytes_recv, msgs0 = pf->r.msgs_recv;
	uint64_t tick0 = ticks();
	uint64_t next_show = start + 1000000000ull;
	uint32_t idle = 0;
	while ((now < end || (now < grace_end && pf->r.trans == trans0 &&
			      pf->r.bytes_recv == bytes0 && pf->r.msgs_recv == msgs0)) &&
	       !(done && done(pf))) {
		for (int i = 0; i < 64; i++) { /* amortize the clock read below */
			if (step(pf, true)) {
				idle = 0;
				continue;
			}
			if (pf->o.relax)
				relax();
			if (pf->o.irq && ++idle >= pf->o.irq_spin) {
				irq_sleep(pf);
				idle = 0;
				break; /* may have slept: look at the clock */
			}
		}
		now = perf_now_ns();
		if (show && now >= next_show) {
			progress(pf, label, (now - start) / 1e9, seconds);
			next_show += 1000000000ull;
		}
	}
	if (show)
		fprintf(stderr, "\r%*s\r", 60, "");
	pf->r.elapsed = (now - start) / 1e9;
	pf->r.cpu_process = rusage_cpu(RUSAGE_SELF) - proc0;
	uint64_t model1 = 0;
	pf->r.cpu_model = model && myrio_sim_thread_cpu_ns(pf->sim, &model1) == 0
			      ? (double)(model1 - model0) / 1e9
			      : -1;
	double all_ticks = (double)(ticks() - tick0 + 1);
	pf->r.drops_a = port_drops(&pf->a) - drops_a;
	pf->r.drops_b = port_drops(&pf->b) - drops_b;
	double cpu = thread_cpu() - cpu0;
	double busy_a = pf->a.busy_ticks / all_ticks, busy_b = pf->b.busy_ticks / all_ticks;
	if (pf->o.irq) {
		double busy = busy_a + busy_b;
		pf->r.cpu_local = busy > 0 ? cpu * busy_a / busy : cpu / 2;
		pf->r.cpu_remote = cpu - pf->r.cpu_local;
		pf->r.cpu_method = "thread CPU clock, interrupt sleep";
	} else {
		pf->r.cpu_local = cpu * busy_a;
		pf->r.cpu_remote = cpu * busy_b;
		pf->r.cpu_method = "thread CPU clock x share of busy polls";
	}
	return 0;
}

bool perf_settle(struct perf *pf, bool (*cond)(struct perf *), double timeout)
{
	uint64_t end = perf_now_ns() + (uint64_t)(timeout * 1e9);
	while (!(cond && cond(pf))) {
		if (perf_now_ns() > end)
			return false;
		step(pf, false);
	}
	return true;
}
