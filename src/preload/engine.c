/* SPDX-License-Identifier: BSD-3-Clause */
/* The process's one stack: created on the first accelerated socket, driven by whichever
 * thread is inside a call (under one lock), and by a progress thread while none is, so a
 * program blocked in the kernel still answers its peers (timers, ACKs, window updates).
 *
 * Sleeping follows tcp_lite.h's protocol (arm, poll once more, sleep on the stack's fd).
 * Threads that sleep also watch a wake eventfd: whoever polls the stack and finds work
 * while others sleep writes it, so news taken by one thread's poll is not lost to a thread
 * that armed before it. The fd stays readable until the last sleeper leaves. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "myrio/sim.h"
#include "preload.h"

#define EXIT_RESET_ANSWER_MS 500 /* a reset at exit: the peer's challenge ACK answered */
#define OWN_FD_MAX 32		 /* the port's and stack's own fds that close_range spares */
#define OWN_FD_SCAN 1024	 /* they are found among the fds below this */
#define PROGRESS_LOOK_US 10000	 /* the progress thread's look while the program drives */

/* The lock is recursive: the library's own calls (close, poll on its fds) come back
 * through the interposed symbols while the stack is created or polled, and signal
 * handlers call in (sig_lock.c). */
static struct {
	struct sig_lock lock;
	int state; /* 0 not tried, 1 running, -1 failed (sockets go to the kernel) */
	pid_t pid; /* the process that created the stack; another one is a fork's child */
	struct preload_conf conf;
	struct myrio_port *port;
	struct myrio_sim *sim; /* the process's own model NIC, stepped by each poll; or NULL */
	struct myrio_stack *stack;
	int stack_fd, wake_fd;
	unsigned sleepers, inside;
	uint64_t app_polls; /* stack polls by the program's threads (not the progress thread) */
	bool woken;	    /* the wake fd was written since it was last drained */
	/* sleeps in engine_block, and those that ended with nothing for the stack or the set
	 * (a send report's interrupt, an interrupt that came after the arm had read the fd,
	 * a stale wake-up); MYRIO_PRELOAD_COUNTS=1 prints them at exit */
	uint64_t sleeps, empty_wakes;
	uint64_t spins; /* blocking calls that polled before they slept (MYRIO_SPIN_US) */
	bool print_counts;
	uint64_t armed_deadline;
	pthread_t progress_thread;
	bool stopping;
	int own[OWN_FD_MAX]; /* fds the port and stack opened, ascending */
	unsigned nown;
} eng = {.stack_fd = -1, .wake_fd = -1};

/* Set while this thread sleeps in engine_block. The thread's sleep ends once, in whichever
 * comes first: engine_block's return, a call from a signal handler that interrupted the
 * sleep (or left it with longjmp), or the cancellation of the thread. */
static __thread bool sleeping;
static __thread bool progress_thread;

/* Lock held: this thread no longer sleeps; the last sleeper out drains the wake fd. */
static void sleep_end(void)
{
	sleeping = false;
	/* drained only when written: most sleeps end on the stack's fd, and the read would be
	 * a system call per sleep for nothing */
	if (--eng.sleepers == 0 && __atomic_exchange_n(&eng.woken, false, __ATOMIC_ACQ_REL)) {
		uint64_t v;
		(void)!kern.read(eng.wake_fd, &v, sizeof v);
	}
	eng.inside--;
}

/* Once the program cancels threads, the lock is held with cancellation disabled: a
 * cancellation point under it (the kernel's read, write, close, poll, here or in the
 * port's calls) would end the thread holding it, and every other thread would wait for
 * ever. A blocking call's sleep lets go of the lock, so it is where a cancellation acts.
 * Until the first pthread_cancel no thread can be cancelled, and the lock costs nothing
 * more (pthread_setcancelstate twice is about 67 instructions a call). */
static bool cancel_used;
/* the thread's state before it took the lock, -1 when the lock left it as it was */
static __thread int cancel_outside = -1;

EXPORT int pthread_cancel(pthread_t t)
{
	static int (*real)(pthread_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_cancel");
	if (!__atomic_load_n(&cancel_used, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&cancel_used, true, __ATOMIC_RELEASE);
		/* a thread that took the lock before it saw the flag lets go of it first */
		engine_lock();
		engine_unlock();
	}
	return real ? real(t) : ESRCH;
}

void engine_lock(void)
{
	sig_lock(&eng.lock);
	if (!eng.lock.nested && __atomic_load_n(&cancel_used, __ATOMIC_ACQUIRE)) {
		int was;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &was);
		cancel_outside = was;
	}
	if (sleeping)
		sleep_end();
}

/* A signal handler's close after the reap, while the lock was still this thread's, nested
 * and left the free to the outermost unlock: the one that just let go of the lock, which
 * frees it now rather than at whichever call comes next (an exit would miss it). The lock
 * is taken back without engine_lock: this thread may be on its way to sleep. Apart, so the
 * unlock's common path saves no registers. */
static __attribute__((noinline, cold)) void reap_late(void)
{
	sig_lock(&eng.lock);
	engine_unlock();
}

void engine_unlock(void)
{
	if (eng.lock.nested) {
		sig_unlock(&eng.lock);
		return;
	}
	if (psock_reap_due())
		psock_reap();
	int cancel = cancel_outside;
	if (cancel >= 0)
		cancel_outside = -1;
	sig_unlock(&eng.lock);
	if (psock_reap_due())
		reap_late();
	if (cancel >= 0)
		pthread_setcancelstate(cancel, NULL);
}

bool engine_nested(void)
{
	return eng.lock.nested > 0;
}

static void wake_sleepers(void)
{
	uint64_t one = 1;
	(void)!kern.write(eng.wake_fd, &one, sizeof one);
	/* after the write: a drain between the two leaves the fd readable and the flag set
	 * (one early wake-up), never the fd readable with no drain to come */
	__atomic_store_n(&eng.woken, true, __ATOMIC_RELEASE);
}

int engine_progress(void)
{
	int work = 0;
	if (!eng.stack)
		return 0; /* a fork's child: its sockets are dead */
	if (!progress_thread)
		eng.app_polls++;
	for (int i = 0; i < 64; i++) {
		if (eng.sim)
			myrio_sim_step(eng.sim, 1);
		int n = myrio_stack_poll(eng.stack);
		if (n > 0)
			work += n;
		/* A poll that handled one frame found no second one behind it: polling again at
		 * once would find nothing, at the cost of a whole poll (a round trip's frames come
		 * one at a time). */
		if (n <= 1)
			break;
	}
	if (linger_count())
		linger_check(engine_now_ms(), eng.conf.exit_linger_ms);
	if (work && eng.sleepers)
		wake_sleepers();
	return work;
}

/* Step 1 and 2 of the sleep protocol; true when the extra poll found work. */
static bool arm(void)
{
	myrio_stack_arm(eng.stack);
	bool work = engine_progress() > 0;
	eng.armed_deadline = myrio_stack_next_deadline(eng.stack);
	return work;
}

void engine_leave(void)
{
	if (!eng.stack)
		return;
	engine_progress();
	if (myrio_stack_next_deadline(eng.stack) < eng.armed_deadline)
		arm();
}

/* A thread cancelled in its sleep: its counts go, and the lock stays free. */
static void block_cancelled(void *arg)
{
	(void)arg;
	engine_lock();
	psock_cancelled();
	engine_unlock();
}

void engine_wake(void)
{
	/* Even with no sleeper counted: a signal handler's close() may have interrupted its
	 * own thread between the check of the socket and the sleep (or ended that sleep's
	 * count), and that thread must not sleep through it. The fd stays readable until the
	 * last sleeper out drains it: at most one early wake-up for others. */
	wake_sleepers();
}

#define SPIN_KERNEL_EVERY 16 /* polls of the stack per look at the kernel's fds */

/* Lock held: polls the stack (and now and then the kernel's fds) for up to budget_ns (or
 * the timeout). >0 extra ready, -2 news from the stack, 0 nothing came. */
static int spin(struct pollfd *extra, nfds_t n, int timeout_ms, uint64_t budget_ns)
{
	if (timeout_ms > 0 && (uint64_t)timeout_ms * 1000000 < budget_ns)
		budget_ns = (uint64_t)timeout_ms * 1000000;
	uint64_t until = engine_now_ns() + budget_ns;
	for (unsigned i = 1;; i++) {
		if (engine_progress() > 0)
			return -2;
		if (n && i % SPIN_KERNEL_EVERY == 0 && kern.poll(extra, n, 0) > 0) {
			int ready = 0;
			for (nfds_t k = 0; k < n; k++)
				ready += extra[k].revents != 0;
			return ready;
		}
		if (engine_now_ns() >= until)
			return 0;
		engine_unlock(); /* other threads of the program get their turn */
		engine_lock();
	}
}

/* The spin adapts to what it catches: one that ends with news gives the next the whole
 * spin_us, one that runs out halves it, down to none below spin_us / SPIN_SHRINK_MIN; then
 * every SPIN_RETRY_EVERY-th sleep tries the whole spin again. A socket whose answers come
 * slowly (a server between requests, a receiver behind a slow sender) soon sleeps at once
 * and stops costing CPU. Lock held. */
#define SPIN_SHRINK_MIN 16
#define SPIN_RETRY_EVERY 64
static uint64_t spin_budget_ns;
static unsigned spin_sleeps_without;

static void spin_learn(bool caught)
{
	uint64_t full = (uint64_t)eng.conf.spin_us * 1000;
	if (caught)
		spin_budget_ns = full;
	else if ((spin_budget_ns /= 2) < full / SPIN_SHRINK_MIN)
		spin_budget_ns = 0;
}

static uint64_t spin_budget(void)
{
	if (!spin_budget_ns && eng.conf.spin_us && ++spin_sleeps_without % SPIN_RETRY_EVERY == 0)
		spin_budget_ns = (uint64_t)eng.conf.spin_us * 1000;
	return spin_budget_ns;
}

int engine_block(struct pollfd *extra, nfds_t n, int timeout_ms, const sigset_t *sigmask)
{
	if (!eng.stack) {
		engine_unlock();
		int rc = kern.poll(extra, n, timeout_ms);
		engine_lock();
		return rc;
	}
	if (eng.conf.spin || eng.stack_fd < 0) {
		engine_unlock();
		int rc = n ? kern.poll(extra, n, 0) : 0;
		engine_lock();
		engine_progress();
		return rc;
	}
	uint64_t budget = timeout_ms != 0 ? spin_budget() : 0;
	if (budget) {
		eng.spins++;
		int rc = spin(extra, n, timeout_ms, budget);
		spin_learn(rc != 0);
		if (rc != 0)
			return rc > 0 ? rc : 0; /* ready, or news from the stack */
	}
	eng.inside++;
	if (arm()) {
		eng.inside--;
		return 0;
	}
	struct pollfd fds[n + 2];
	fds[0] = (struct pollfd){.fd = eng.stack_fd, .events = POLLIN};
	fds[1] = (struct pollfd){.fd = eng.wake_fd, .events = POLLIN};
	if (n)
		memcpy(fds + 2, extra, n * sizeof *extra);
	eng.sleepers++;
	sleeping = true;
	engine_unlock();
	int rc;
	struct timespec ts, *tsp = NULL;
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	pthread_cleanup_push(block_cancelled, NULL); /* ppoll is a cancellation point */
	rc = kern.ppoll(fds, n + 2, tsp, sigmask);
	pthread_cleanup_pop(0);
	int err = errno;
	engine_lock(); /* ends the sleep unless a signal handler's call already did */
	int work = engine_progress();
	eng.sleeps++;
	if (rc < 0) {
		errno = err;
		return -1;
	}
	int ready = 0;
	for (nfds_t i = 0; i < n; i++) {
		extra[i].revents = fds[i + 2].revents;
		ready += extra[i].revents != 0;
	}
	eng.empty_wakes += rc > 0 && work == 0 && ready == 0;
	return ready;
}

/* Keeps the stack answering while no application thread is inside the library. */
static void *progress_main(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	progress_thread = true;
	uint64_t seen = 0;
	engine_lock();
	while (!eng.stopping) {
		/* A thread of the program sleeps on the stack, or polled it since the last look
		 * (a program streaming through its calls): it does the work. Waking on the same
		 * interrupts would only take the lock from it, a wake-up and a futex each. */
		if ((eng.inside || eng.app_polls != seen) && !eng.conf.spin) {
			seen = eng.app_polls;
			engine_unlock();
			usleep(PROGRESS_LOOK_US);
			engine_lock();
			continue;
		}
		if (eng.conf.spin || eng.stack_fd < 0) {
			engine_progress();
			engine_unlock();
			usleep(eng.conf.spin && eng.inside ? 10000 : 1000);
			engine_lock();
			continue;
		}
		if (arm())
			continue;
		engine_unlock();
		struct pollfd p = {.fd = eng.stack_fd, .events = POLLIN};
		kern.poll(&p, 1, 100);
		engine_lock();
		engine_progress();
	}
	engine_unlock();
	return NULL;
}

static void on_fork_prepare(void)
{
	engine_lock();
}

static void on_fork_parent(void)
{
	engine_unlock();
}

/* The child shares the parent's DMA memory and daemon attachment: it must not touch the
 * stack. Its accelerated fds become dead; new sockets go to the kernel. */
static void on_fork_child(void)
{
	sig_lock_forked(&eng.lock);
	if (cancel_outside >= 0) { /* as on_fork_parent's unlock does */
		pthread_setcancelstate(cancel_outside, NULL);
		cancel_outside = -1;
	}
	if (eng.state == 1) {
		eng.state = -1;
		eng.stack = NULL;
		fdtab_forked();
	}
}

static void engine_exit(void)
{
	if (eng.state != 1 || getpid() != eng.pid)
		return;
	if (eng.print_counts)
		preload_log("sleeps %" PRIu64 ", woken with nothing %" PRIu64 ", spins %" PRIu64,
			    eng.sleeps, eng.empty_wakes, eng.spins);
	engine_lock();
	eng.stopping = true;
	fdtab_close_all(); /* connections still open end as the kernel ends them */
	linger_exit_begin(engine_now_ms());
	uint64_t answered = 0; /* until then, after the last reset */
	for (engine_progress();; engine_progress()) {
		uint64_t now = engine_now_ms();
		if (!linger_count()) {
			if (!answered)
				answered = now + (linger_exit_reset() ? EXIT_RESET_ANSWER_MS : 0);
			if (now >= answered)
				break;
		}
		engine_unlock();
		if (eng.stack_fd >= 0) {
			struct pollfd p = {.fd = eng.stack_fd, .events = POLLIN};
			kern.poll(&p, 1, 1);
		}
		engine_lock();
	}
	/* the datagrams the NIC has not reported sent would leave with the process */
	udp_tx_wait(engine_now_ms() + UDP_TX_WAIT_MS, true);
	engine_unlock();
	pthread_join(eng.progress_thread, NULL);
	/* The stack and port are left to the process's end: other threads may still be in
	 * calls, and the daemon or the kernel reclaims the device. */
}

/* The fds below OWN_FD_SCAN that are open, as a bit set. */
static void open_fds(uint64_t set[OWN_FD_SCAN / 64])
{
	memset(set, 0, OWN_FD_SCAN / 8);
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		long fd = strtol(e->d_name, NULL, 10);
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd < OWN_FD_SCAN &&
		    fd != dirfd(d))
			set[fd / 64] |= 1ull << (fd % 64);
	}
	closedir(d);
}

/* The fds the port and stack opened (device, daemon, memory, interrupts): a program's
 * close_range() passes over them. */
static void own_fds_record(const uint64_t before[OWN_FD_SCAN / 64])
{
	uint64_t after[OWN_FD_SCAN / 64];
	open_fds(after);
	for (int fd = 0; fd < OWN_FD_SCAN && eng.nown < OWN_FD_MAX; fd++)
		if ((after[fd / 64] & ~before[fd / 64]) >> (fd % 64) & 1)
			eng.own[eng.nown++] = fd;
}

bool engine_owns_fd(int fd)
{
	if (eng.state != 1 || getpid() != eng.pid)
		return false;
	for (unsigned i = 0; i < eng.nown; i++)
		if (eng.own[i] == fd)
			return true;
	return false;
}

static int engine_start(void)
{
	if (preload_conf_load(&eng.conf) < 0)
		return -1;
	uint64_t before[OWN_FD_SCAN / 64];
	open_fds(before);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.mtu = eng.conf.mtu;
	pc.irq = !eng.conf.spin;
	int rc = own_model_wanted(eng.conf.device)
		     ? own_model_open(&eng.conf, &pc, &eng.sim, &eng.port)
		     : myrio_port_open(&eng.port, eng.conf.device, &pc);
	if (rc < 0) {
		preload_log("cannot open %s: %s; sockets go to the kernel", eng.conf.device,
			    strerror(-rc));
		return -1;
	}
	struct myrio_stack_conf sc;
	myrio_stack_conf_init(&sc);
	sc.ip = eng.conf.ip;
	sc.netmask = eng.conf.netmask;
	sc.gateway = eng.conf.gateway;
	sc.max_tcp_conns = eng.conf.max_tcp;
	sc.max_listeners = eng.conf.max_listen;
	sc.max_udp_socks = eng.conf.max_udp;
	sc.reass_slots = PRELOAD_REASS_SLOTS;
	sc.tcp_event = tcp_on_event;
	rc = myrio_stack_create(&eng.stack, eng.port, &sc);
	if (rc < 0) {
		preload_log("cannot create the stack: %s", strerror(-rc));
		myrio_port_close(eng.port);
		return -1;
	}
	eng.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!eng.conf.spin) {
		eng.stack_fd = myrio_stack_fd(eng.stack);
		if (eng.stack_fd < 0) {
			preload_log_once("the port has no interrupts: blocking calls poll busily");
			eng.stack_fd = -1;
		}
	}
	own_fds_record(before);
	spin_budget_ns = (uint64_t)eng.conf.spin_us * 1000;
	eng.print_counts = getenv("MYRIO_PRELOAD_COUNTS") != NULL;
	eng.armed_deadline = 0;
	eng.pid = getpid();
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
	if (pthread_create(&eng.progress_thread, NULL, progress_main, NULL) != 0) {
		preload_log("cannot start the progress thread");
		return -1;
	}
	atexit(engine_exit);
	return 0;
}

/* Lock held. */
struct myrio_stack *engine_stack(void)
{
	if (eng.state == 0)
		eng.state = engine_start() == 0 ? 1 : -1;
	if (eng.state != 1) {
		errno = ENETDOWN;
		return NULL;
	}
	return eng.stack;
}

bool engine_available(void)
{
	engine_lock();
	bool ok = engine_stack() != NULL;
	engine_unlock();
	return ok;
}

bool engine_is_accel_local(uint32_t ip)
{
	return ip == 0 || ip == eng.conf.ip;
}

bool engine_is_accel_remote(uint32_t ip)
{
	if ((ip >> 24) == 127 || ip == 0 || ip >= 0xe0000000u)
		return false; /* loopback, any, multicast and broadcast: the kernel's */
	if (ip == eng.conf.ip) {
		preload_log_once("the interface's own address is not reachable through it "
				 "(tcp_lite has no loopback)");
		return false;
	}
	return (ip & eng.conf.netmask) == (eng.conf.ip & eng.conf.netmask) || eng.conf.gateway;
}

uint32_t engine_local_ip(void)
{
	return eng.conf.ip;
}

uint64_t engine_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

uint64_t engine_now_ms(void)
{
	return engine_now_ns() / 1000000;
}
