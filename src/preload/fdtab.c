/* SPDX-License-Identifier: BSD-3-Clause */
/* File descriptor -> accelerated socket. Every accelerated socket keeps a kernel socket
 * under its number, so the kernel never hands that number out again and a call this
 * layer does not know about fails cleanly there instead of reaching another file. */
#include <errno.h>
#include <stdlib.h>

#include "preload.h"

static struct psock **tab;

struct psock *fdtab_get(int fd)
{
	struct psock **t = __atomic_load_n(&tab, __ATOMIC_ACQUIRE);
	if (!t) {
		/* no socket yet: a call may come before this library's constructor ran
		 * (another library's); every caller goes to the kernel next */
		kernel_calls_resolve();
		return NULL;
	}
	if (fd < 0 || fd >= FDTAB_SIZE)
		return NULL;
	return __atomic_load_n(&t[fd], __ATOMIC_ACQUIRE);
}

bool fdtab_empty(void)
{
	return !__atomic_load_n(&tab, __ATOMIC_ACQUIRE);
}

struct psock *psock_lock(int fd)
{
	if (!fdtab_get(fd))
		return NULL; /* a kernel fd: no lock */
	engine_lock();
	struct psock *ps = fdtab_get(fd);
	if (!ps)
		engine_unlock();
	return ps;
}

bool psock_accelerated(int fd)
{
	struct psock *ps = psock_lock(fd);
	if (!ps)
		return false;
	bool accel = ps->state != PS_PENDING;
	engine_unlock();
	return accel;
}

int fdtab_set(int fd, struct psock *ps)
{
	if (fd < 0 || fd >= FDTAB_SIZE) {
		errno = EMFILE;
		return -1;
	}
	if (!tab) {
		struct psock **t = calloc(FDTAB_SIZE, sizeof *t);
		if (!t) {
			errno = ENOMEM;
			return -1;
		}
		struct psock **none = NULL;
		if (!__atomic_compare_exchange_n(&tab, &none, t, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			free(t);
	}
	__atomic_store_n(&tab[fd], ps, __ATOMIC_RELEASE);
	return 0;
}

void fdtab_clear(int fd)
{
	if (tab && fd >= 0 && fd < FDTAB_SIZE)
		__atomic_store_n(&tab[fd], NULL, __ATOMIC_RELEASE);
}

struct psock *fdtab_take(int fd)
{
	if (!tab || fd < 0 || fd >= FDTAB_SIZE)
		return NULL;
	return __atomic_exchange_n(&tab[fd], NULL, __ATOMIC_ACQ_REL);
}

void fdtab_forked(void)
{
	if (!tab)
		return;
	for (int fd = 0; fd < FDTAB_SIZE; fd++)
		if (tab[fd] && tab[fd]->state != PS_PENDING)
			tab[fd]->state = PS_DEAD;
}

void fdtab_close_all(void)
{
	if (!tab)
		return;
	for (int fd = 0; fd < FDTAB_SIZE; fd++) {
		struct psock *ps = fdtab_take(fd);
		if (ps)
			psock_release(ps);
	}
}

struct psock *psock_new(int type)
{
	struct psock *ps = calloc(1, sizeof *ps);
	if (!ps) {
		errno = ENOMEM;
		return NULL;
	}
	ps->refs = 1;
	ps->type = type;
	ps->keep_idle_s = 7200;
	ps->keep_intvl_s = 75;
	ps->keep_cnt = 9;
	return ps;
}

void fdtab_clear_psock(struct psock *ps)
{
	if (!tab)
		return;
	for (int fd = 0; fd < FDTAB_SIZE; fd++)
		if (tab[fd] == ps)
			fdtab_clear(fd);
}

static __thread struct psock *in_use; /* the socket this thread's call works on */

struct psock *psock_enter(struct psock *ps)
{
	struct psock *outer = in_use;
	__atomic_add_fetch(&ps->users, 1, __ATOMIC_RELAXED);
	in_use = ps;
	return outer;
}

static void psock_destroy(struct psock *ps);

/* Sockets released while the lock was nested (a signal handler's close), freed at the
 * outermost unlock. The handler may run while its thread walks the list, so a push and the
 * take of the whole list are each one atomic operation. psock_reap_due: one of them may be
 * freed now (set by whoever makes it so; the unlock reaps only then, and looks once more
 * after letting go of the lock, engine_unlock). */
static struct psock *deferred;
bool psock_reap_due_flag;

static void deferred_push(struct psock *ps)
{
	struct psock *head = __atomic_load_n(&deferred, __ATOMIC_RELAXED);
	do
		ps->deferred_next = head;
	while (!__atomic_compare_exchange_n(&deferred, &head, ps, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED));
}

void psock_exit(struct psock *ps, struct psock *outer)
{
	in_use = outer;
	if (__atomic_sub_fetch(&ps->users, 1, __ATOMIC_RELAXED) || psock_refs(ps))
		return;
	if (ps->deferred)
		__atomic_store_n(&psock_reap_due_flag, true, __ATOMIC_RELAXED);
	else
		psock_destroy(ps);
}

void psock_reap(void)
{
	__atomic_store_n(&psock_reap_due_flag, false, __ATOMIC_RELAXED);
	struct psock *kept = NULL, *ps, *next;
	while ((ps = __atomic_exchange_n(&deferred, NULL, __ATOMIC_RELAXED)))
		for (; ps; ps = next) {
			next = ps->deferred_next;
			if (__atomic_load_n(&ps->users, __ATOMIC_RELAXED)) {
				/* its call frees it (psock_exit, then this) */
				ps->deferred_next = kept;
				kept = ps;
			} else {
				psock_destroy(ps);
			}
		}
	for (; kept; kept = next) {
		next = kept->deferred_next;
		deferred_push(kept);
	}
}

void psock_cancelled(void)
{
	if (in_use)
		psock_exit(in_use, NULL);
}

void psock_release(struct psock *ps)
{
	if (__atomic_sub_fetch(&ps->refs, 1, __ATOMIC_RELAXED) > 0)
		return;
	if (__atomic_load_n(&ps->users, __ATOMIC_RELAXED) || engine_nested()) {
		/* a call still works on it, or may (a signal handler's close() interrupted this
		 * thread between its look-up of the socket and psock_enter): it ends with EBADF,
		 * and the last one out, or the outermost unlock, frees */
		ps->closed = true;
		if (engine_nested() && !ps->deferred) {
			ps->deferred = true;
			deferred_push(ps);
			__atomic_store_n(&psock_reap_due_flag, true, __ATOMIC_RELAXED);
		}
		engine_wake();
		return;
	}
	psock_destroy(ps);
}

static void psock_destroy(struct psock *ps)
{
	tcp_port_release(ps);
	switch (ps->state) {
	case PS_TCP_CONN:
	case PS_TCP_LISTEN:
		tcp_close(ps);
		break;
	case PS_UDP:
		udp_close(ps);
		break;
	default:
		break;
	}
	free(ps->aq);
	free(ps);
}
