/* SPDX-License-Identifier: BSD-3-Clause */
/* The preload layer's internals: the kernel's own functions, the configuration, the one
 * stack per process (the engine) and the table from file descriptors to accelerated
 * sockets. Nothing here is exported: only the interposed socket calls are (preload.map). */
#ifndef MYRIO_PRELOAD_H
#define MYRIO_PRELOAD_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "myrio/myrio.h"

/* ---- The kernel's functions (dlsym RTLD_NEXT), resolved before first use ---- */
struct kernel_calls {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*shutdown)(int, int);
	int (*close)(int);
	int (*dup)(int);
	int (*dup3)(int, int, int);
	int (*dup2)(int, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned, int, struct timespec *);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*fcntl)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*close_range)(unsigned, unsigned, int);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
			    const sigset_t *);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
};
extern struct kernel_calls kern;
void kernel_calls_resolve(void);

/* One line on stderr the first time `what` (a string literal) is refused or ignored. */
void preload_log_once(const char *what);
void preload_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- Configuration: launcher options -> environment -> config file ---- */
/* How long a blocking call polls the stack before it sleeps (as Onload's EF_POLL_USEC,
 * the kernel's busy_poll): an answer that comes within it costs no wake-up; a wait
 * longer than it costs this much CPU on top of the sleep. Only by default on machines
 * with PRELOAD_SPIN_MIN_CPUS or more: with fewer, the spinner takes the core that the
 * peer or the NIC model needs to produce the answer (on 2 cores a 50 us spin made the
 * sockperf median worse, docs/preload.md). MYRIO_SPIN_US sets it either way. */
#define PRELOAD_SPIN_US 50
#define PRELOAD_SPIN_MIN_CPUS 4
/* How long exit waits for a closed connection's data and FIN to be acknowledged before it
 * resets the connection (MYRIO_EXIT_LINGER_MS). The kernel keeps such an orphan
 * retransmitting after the process is gone for about as long (eight orphan retries from a
 * 200 ms RTO take 51 s); a process that exits cannot. linger.c, docs/preload.md. */
#define PRELOAD_EXIT_LINGER_MS 60000
/* Datagrams of several fragments the stack holds at once, reassembled and queued to
 * sockets or in progress: a reassembled datagram keeps its 64 KiB buffer until the program
 * reads it, so the stack's default (4) dropped most of a burst that a program read a moment
 * later (iperf3 -u -l 2000 from the kernel: 43% lost). As many as the kernel's default
 * socket buffer (212992 bytes) holds of 3-fragment datagrams. */
#define PRELOAD_REASS_SLOTS 64
/* The stack's tables, per process (MYRIO_MAX_TCP, MYRIO_MAX_LISTEN, MYRIO_MAX_UDP;
 * docs/preload.md gives what each costs). A TCP connection holds its slot through
 * TIME_WAIT. */
#define PRELOAD_MAX_TCP 1024
#define PRELOAD_MAX_LISTEN 32
#define PRELOAD_MAX_UDP 64
struct preload_conf {
	char device[256];
	uint32_t ip, netmask, gateway; /* host byte order */
	uint32_t mtu;		       /* 0 = the port's default */
	bool spin;		       /* busy-poll in blocking calls instead of sleeping */
	uint32_t spin_us; /* poll this long before sleeping (MYRIO_SPIN_US, PRELOAD_SPIN_US) */
	uint32_t exit_linger_ms; /* MYRIO_EXIT_LINGER_MS, PRELOAD_EXIT_LINGER_MS */
	uint32_t max_tcp, max_listen, max_udp; /* MYRIO_MAX_TCP, ..., PRELOAD_MAX_TCP, ... */
};
/* 0, or -1 with a message when nothing says which device and address to use. */
int preload_conf_load(struct preload_conf *conf);

/* ---- Accelerated sockets ---- */
enum psock_state {
	PS_PENDING = 0, /* AF_INET socket not yet bound or connected: the kernel holds it */
	PS_TCP_CONN,	/* connecting or connected */
	PS_TCP_LISTEN,
	PS_UDP,
	PS_DEAD, /* inherited across fork: every call but close is EBADF */
};

struct psock {
	/* Changed by one atomic operation each (psock_ref, psock_enter...): a signal handler's
	 * dup, close or call lands between the load and the store of a plain increment of
	 * the thread it interrupted, and one of the two counts would be lost. */
	int refs;    /* file descriptors naming it (dup) */
	int users;   /* calls working on it (psock_enter) */
	bool closed; /* its last fd was closed while a call worked on it */
	/* closed while the lock was held more than once (a signal handler's close): freed at
	 * the outermost unlock, on the list from here */
	struct psock *deferred_next;
	bool deferred;
	int type; /* SOCK_STREAM or SOCK_DGRAM */
	enum psock_state state;
	bool nonblock;
	uint32_t bound_ip; /* host order; 0 = any */
	uint16_t bound_port;
	struct myrio_tcp_conn *c;
	struct myrio_tcp_listener *l;
	struct myrio_udp_sock *u;
	/* listener: connections the stack accepted, waiting for accept() */
	struct myrio_tcp_conn **aq;
	unsigned aq_head, aq_len, aq_cap;
	/* TCP: the connection's end was reported once (as the kernel's sk_err) */
	bool error_reported;
	bool shut_rd, shut_wr; /* shutdown() (UDP too: the kernel's sk_shutdown) */
	bool connect_pending;  /* connecting: no connect() reported it established yet */
	bool keepalive, reuseaddr;
	/* TCP: bound_port is held in the port table (tcp_port_claim); exclusively when the
	 * socket had no SO_REUSEADDR or listens */
	bool port_claimed, port_excl;
	bool port_ephemeral; /* bound_port was picked here (bind to port 0, or listen) */
	int linger_onoff, linger_s;
	uint32_t keep_idle_s, keep_intvl_s, keep_cnt;
	int64_t rcvtimeo_ms, sndtimeo_ms; /* 0 = none */
	/* UDP: a datagram taken from the stack to see readiness, not yet read */
	struct myrio_pkt *held;
	uint32_t held_ip;
	uint16_t held_port;
	uint32_t peer_ip; /* connected UDP peer; 0 = none */
	uint16_t peer_port;
	int udp_error; /* pending (negative errno) */
	bool udp_sent; /* a datagram was taken: its close waits for the NIC (udp_tx_wait) */
	/* TCP disconnected by connect(AF_UNSPEC) (pending again): ECONNRESET for the next
	 * read, write or SO_ERROR, as the kernel's sk_err */
	int reset_err;
	/* and the local port the connection had, which getsockname still reports (the
	 * kernel's inet_sport stays) */
	uint16_t unspec_port;
};

#define FDTAB_SIZE 65536 /* fds past it stay the kernel's */

/* The table fd -> psock. A lookup needs no lock, but the socket it returns may be closed
 * and freed by another thread (or a signal handler) at any time: only its address may be
 * compared without the lock. */
struct psock *fdtab_get(int fd);
/* No socket was ever this layer's: every call goes straight to the kernel. */
bool fdtab_empty(void);
/* The socket fd names, with the engine lock held (its fields may be read); NULL, the lock
 * not held, when fd is not one of this layer's. */
struct psock *psock_lock(int fd);
/* fd names a socket this layer holds (not pending), at the time of asking. */
bool psock_accelerated(int fd);
int fdtab_set(int fd, struct psock *ps); /* -1 EMFILE when fd is past the table */
void fdtab_clear(int fd);
/* The socket fd named, and fd names none from now on: one atomic exchange, so that of a
 * close and a signal handler's close of the same fd only one releases the socket. */
struct psock *fdtab_take(int fd);
/* At exit: every fd closed, as the kernel closes them (lock held) */
void fdtab_close_all(void);
/* Marks every socket dead (the child of a fork) */
void fdtab_forked(void);
/* Every fd naming ps leaves the table (the socket went to the kernel). */
void fdtab_clear_psock(struct psock *ps);
/* Drops one fd's reference: frees the socket with the last (engine lock held), or, while
 * a call works on it, marks it closed and leaves the free to that call's psock_exit. */
void psock_release(struct psock *ps);
/* Lock held, around a call that may sleep: the socket outlives a close() from another
 * thread until the call returns. psock_enter returns the outer call's socket (a signal
 * handler's call inside another), which psock_exit restores. */
struct psock *psock_enter(struct psock *ps);
void psock_exit(struct psock *ps, struct psock *outer);
/* The thread was cancelled in a call: its socket's use ends (lock held). */
void psock_cancelled(void);
/* Lock held once (the outermost unlock is next): frees the sockets whose release was
 * deferred and that no call works on. */
void psock_reap(void);
/* A deferred socket may be freed now (read at every outermost unlock, and after it let go
 * of the lock, without it). */
static inline bool psock_reap_due(void)
{
	extern bool psock_reap_due_flag;
	return __atomic_load_n(&psock_reap_due_flag, __ATOMIC_RELAXED);
}
struct psock *psock_new(int type);
/* One more fd names ps (dup); its count, read atomically. */
static inline void psock_ref(struct psock *ps)
{
	__atomic_add_fetch(&ps->refs, 1, __ATOMIC_RELAXED);
}
static inline int psock_refs(const struct psock *ps)
{
	return __atomic_load_n(&ps->refs, __ATOMIC_RELAXED);
}

/* ---- A recursive lock a signal handler may take on the thread it interrupted ---- */
struct sig_lock {
	uint32_t word;	 /* the owner's thread id, 0 when free; | waiters */
	unsigned nested; /* the owner's takes beyond the first */
};
void sig_lock(struct sig_lock *l);
void sig_unlock(struct sig_lock *l);
/* In a fork's child (the lock was held across the fork by the forking thread): free. */
void sig_lock_forked(struct sig_lock *l);

/* ---- A model NIC of the process's own (own_model.c, MYRIO_DEVICE=sim+HOST) ---- */
struct myrio_sim;
bool own_model_wanted(const char *device);
/* The stepped model cabled to HOST and its port (pc->sim set); refused without spin. */
int own_model_open(const struct preload_conf *conf, struct myrio_port_conf *pc,
		   struct myrio_sim **sim, struct myrio_port **port);

/* ---- The engine: one stack, its lock, progress and sleeping ---- */
struct myrio_stack *engine_stack(void); /* creates it on first use; NULL + errno */
bool engine_available(void);		/* configured and not a fork's child */
void engine_lock(void);
void engine_unlock(void);
/* Lock held: this thread holds it more than once (a nested call, or a signal handler's
 * call inside one): a socket released now may still be in use below. */
bool engine_nested(void);
/* Polls the stack until idle (lock held); returns the work done. */
int engine_progress(void);
/* Lock held, after the caller found nothing to do: sleeps until the stack may have news,
 * one of extra becomes ready (revents set), or timeout_ms passes (-1: none). Returns with
 * the lock held: >0 extra ready, 0 news or timeout, -1 with errno (EINTR). */
int engine_block(struct pollfd *extra, nfds_t n, int timeout_ms, const sigset_t *sigmask);
/* Lock held, leaving a call that changed the stack outside a poll: flushes, and re-arms
 * the sleep when a timer came due earlier than the one slept on. */
void engine_leave(void);
/* Lock held: the threads sleeping in engine_block, and one about to, wake and look again
 * (async-signal-safe: a write to an eventfd). */
void engine_wake(void);
/* ---- Closed connections still delivering (linger.c; lock held) ---- */
/* A closed connection with data or its FIN still to deliver: kept until the peer has it
 * all (FIN after the data when shutdown). */
void linger_add(struct myrio_tcp_conn *c, bool shutdown);
/* Lets go of the connections delivered, and at exit resets those past their bound; true
 * while some remain. */
bool linger_check(uint64_t now_ms, uint32_t exit_linger_ms);
/* The process exits: from now on, linger_check follows the exit's bounds. */
void linger_exit_begin(uint64_t now_ms);
/* A connection was reset at exit (past its bound). */
bool linger_exit_reset(void);
unsigned linger_count(void);
bool engine_is_accel_local(uint32_t ip);  /* bind: ours or any */
bool engine_is_accel_remote(uint32_t ip); /* connect/sendto: reached through our port */
uint32_t engine_local_ip(void);
/* fd is one the port or stack of this process opened (a program must not close it). */
bool engine_owns_fd(int fd);
uint64_t engine_now_ms(void);
uint64_t engine_now_ns(void);

/* A timeout as milliseconds, rounded up: -1 for none (NULL), -2 with EINVAL when bad. */
int timespec_ms(const struct timespec *ts);
/* poll(2) over any mix of kernel and accelerated fds (ppoll's arguments). */
int poll_any(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *sigmask);
/* Forgets the epoll registrations of a socket closed for good, or of a closed epoll fd. */
void epoll_forget(struct psock *ps, int epfd);
/* A pending socket went to the kernel: its registrations move to the kernel's epoll sets. */
void epoll_to_kernel(struct psock *ps);
/* A call found ps not ready for events (EAGAIN): edge-triggered entries report the next
 * time it is, as the kernel's do for data that arrives after a drain. */
void epoll_drained(struct psock *ps, uint32_t events);

/* ---- Socket operations (lock held by the caller unless said) ---- */
/* bind() of a TCP socket to ps->bound_port: -1 EADDRINUSE when another socket of the
 * process holds it (bound or listening), as the kernel reports at bind. */
int tcp_port_claim(struct psock *ps);
void tcp_port_release(struct psock *ps);
/* bind() to port 0 and listen() without bind(): an ephemeral port, claimed; -1 EADDRINUSE. */
int tcp_port_pick(struct psock *ps);
int tcp_connect(int fd, struct psock *ps, uint32_t ip, uint16_t port);
int tcp_listen(struct psock *ps, int backlog);
int tcp_accept(struct psock *ps, struct sockaddr *addr, socklen_t *len, int flags);
ssize_t tcp_sendv(struct psock *ps, const struct iovec *iov, int n, int flags);
ssize_t tcp_recvv(struct psock *ps, const struct iovec *iov, int n, int flags);
int tcp_shutdown(struct psock *ps, int how);
int tcp_disconnect(struct psock *ps);
void tcp_close(struct psock *ps);
void tcp_on_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev);
int udp_bind(struct psock *ps);
int udp_connect(struct psock *ps, uint32_t ip, uint16_t port);
ssize_t udp_sendv(struct psock *ps, const struct iovec *iov, int n, int flags, uint32_t ip,
		  uint16_t port);
ssize_t udp_recvv(struct psock *ps, const struct iovec *iov, int n, int flags, uint32_t *ip,
		  uint16_t *port, int *msg_flags);
int udp_shutdown(struct psock *ps, int how);
void udp_close(struct psock *ps);
short tcp_revents(struct psock *ps);
short udp_revents(struct psock *ps);
/* ---- Datagrams the stack took, until the NIC reported them sent (udp_tx.c) ---- */
/* How long a close of a UDP socket that sent, and the exit, wait for the NIC to report the
 * datagrams sent (a process gone takes its queued datagrams with it; the kernel's would
 * leave). docs/preload.md. */
#define UDP_TX_WAIT_MS 1000
/* myrio_udp_sendto_copy's answers, the stack's send ring kept track of. */
int udp_tx_send(struct myrio_udp_sock *u, const void *buf, size_t len, uint32_t ip,
		uint16_t port);
/* A send would be taken now (no refusal since the NIC last made room): POLLOUT. */
bool udp_tx_room(void);
/* Polls and sleeps until the NIC reported the datagrams taken so far sent (whole: every
 * frame, those of datagrams in fragments too), at most until deadline_ms; false when it
 * ran out (one line says so, and later waits return at once). */
bool udp_tx_wait(uint64_t deadline_ms, bool whole);
/* Set by a send that failed with EPIPE without MSG_NOSIGNAL: the interposed call raises
 * SIGPIPE once it has left the lock. */
extern __thread bool preload_raise_sigpipe;
/* poll(2) bits the socket is ready for now */
short psock_revents(struct psock *ps, short events);
/* Waits (lock held) until psock_revents(ps, events) or the timeout; 0 ready, -1 errno
 * (EAGAIN for a timeout or a non-blocking socket, EINTR). */
int psock_wait(struct psock *ps, short events, int64_t timeout_ms, bool nonblock);
/* -EBADF for a fork's child's call on its parent's socket fd; the first such call in the
 * process logs one line that says why. */
int psock_dead(int fd);
/* After a wait ended with errno EINTR: whether the call goes on, as Linux restarts a socket
 * call whose handler has SA_RESTART, unless the socket has a timeout (SO_RCVTIMEO or
 * SO_SNDTIMEO; timeout_ms >= 0) (sig_restart.c says how the handler is found). */
bool sig_restart(int64_t timeout_ms);

int psock_getsockopt(int fd, struct psock *ps, int level, int name, void *val, socklen_t *len);
int psock_setsockopt(int fd, struct psock *ps, int level, int name, const void *val, socklen_t len);

/* A program's buffer may be read (or written) without a fault: false where the kernel's
 * copy would give EFAULT (user_mem.c, user_mem_ok below); user_iov_ok checks the buffers an iovec array names
 * (the array itself with user_mem_ok, where the program gave it). */
bool user_mem_check(const void *buf, size_t len, bool writable);
/* A range found good (whole pages), the generation of the mappings it was found in, and
 * the one a call found last, compared inline: most calls pass the buffers, lengths and
 * addresses of the last one. */
struct user_range {
	uintptr_t lo, hi;
	uint64_t generation;
	bool writable;
};
extern uint64_t user_mem_generation; /* moved by munmap, mprotect, mremap */
extern __thread struct user_range user_mem_recent;
static inline bool user_mem_ok(const void *buf, size_t len, bool writable)
{
	uintptr_t lo = (uintptr_t)buf;
	const struct user_range *r = &user_mem_recent;
	if (lo >= r->lo && lo <= r->hi && len <= r->hi - lo && (r->writable || !writable) &&
	    r->generation == __atomic_load_n(&user_mem_generation, __ATOMIC_ACQUIRE))
		return true;
	return user_mem_check(buf, len, writable);
}
bool user_iov_ok(const struct iovec *iov, int n, bool writable);
/* An address the program passes in (bind, connect, sendto, msg_name): 0, -EINVAL when
 * longer than any address (as the kernel's move_addr_to_kernel), -EFAULT when unreadable. */
int user_addr_in(const void *addr, socklen_t len);
/* Where a call returns an address (recvfrom, accept, getsockname...): the length readable
 * and writable and not negative (-EINVAL), and as much of addr as an IPv4 address fills
 * writable; else -EFAULT, as the kernel's move_addr_to_user. */
int user_addr_out(void *addr, socklen_t *len);

/* A socket became fd 0, 1 or 2: the standard stream follows it (calls_stdio.c). */
void stdio_follow(int fd);

/* Sets errno from a negative errno and returns -1; returns v otherwise. */
static inline long neg_errno(long v)
{
	if (v < 0) {
		extern int *__errno_location(void);
		*__errno_location() = (int)-v;
		return -1;
	}
	return v;
}

#define EXPORT __attribute__((visibility("default")))

#endif
