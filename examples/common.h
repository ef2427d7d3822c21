/* SPDX-License-Identifier: BSD-3-Clause */
/* What the example programs share: command-line options, a clock, stopping on Ctrl-C,
 * opening a port with the common --mtu and --pcap options, starting a stack on it with
 * adaptive polling, and the payload pattern of the two stream programs. Header-only: every example
 * is one program built from one .c file. */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "myrio/myrio.h"

/* One command-line option: --name (unless NULL) and -key (unless 0). Exactly one of flag,
 * num and str is set: the option sets *flag, or stores its argument as a number in *num,
 * or as a string in *str. */
struct cli_opt {
	const char *name;
	char key;
	bool *flag;
	unsigned *num;
	const char **str;
};

/* The value getopt_long reports for opts[i]. */
static inline int cli_opt_val(const struct cli_opt *opts, unsigned i)
{
	return opts[i].key ? opts[i].key : 256 + (int)i;
}

/* Parses the options in argv (opts ends with an entry of all zeros); -h, --help and
 * anything unknown print usage. Returns the index of the first argument after the
 * options, or -1 after usage. */
static inline int cli_parse(int argc, char **argv, const struct cli_opt *opts, const char *usage)
{
	unsigned n = 0;
	while (opts[n].flag || opts[n].num || opts[n].str)
		n++;
	struct option lo[n + 2];
	char shorts[2 * n + 2];
	unsigned nl = 0, ns = 0;
	for (unsigned i = 0; i < n; i++) {
		if (opts[i].name)
			lo[nl++] = (struct option){opts[i].name, !opts[i].flag, NULL,
						   cli_opt_val(opts, i)};
		if (opts[i].key) {
			shorts[ns++] = opts[i].key;
			if (!opts[i].flag)
				shorts[ns++] = ':';
		}
	}
	lo[nl++] = (struct option){"help", 0, NULL, 'h'};
	lo[nl] = (struct option){NULL, 0, NULL, 0};
	shorts[ns++] = 'h';
	shorts[ns] = '\0';
	for (int o; (o = getopt_long(argc, argv, shorts, lo, NULL)) != -1;) {
		unsigned i = 0;
		while (i < n && cli_opt_val(opts, i) != o)
			i++;
		if (i == n) {
			fputs(usage, stderr);
			return -1;
		}
		if (opts[i].flag)
			*opts[i].flag = true;
		else if (opts[i].num)
			*opts[i].num = (unsigned)strtoul(optarg, NULL, 0);
		else
			*opts[i].str = optarg;
	}
	return optind;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Set by SIGINT and SIGTERM once stop_on_signals() ran: the main loop ends cleanly. */
static volatile sig_atomic_t stop;

static inline void on_signal(int sig)
{
	stop = 1;
}

static inline void stop_on_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

/* Opens the port on dev (sim:NAME, simd:NAME, a PCI address) with the given MTU, queues
 * (the RSS firmware's slices, one per thread) and interrupts (to sleep when idle; see
 * idle_wait) coalesced for coal_us (§6.6: a wake-up then finds a batch) and, if pcap is not
 * NULL, records every frame it sends and receives into that pcap file. */
/* The stream programs' interrupt coalescing unless --coal says otherwise: Linux myri10ge's
 * default. A stream loses nothing by it (its window covers far more), and a wake-up moves
 * a batch of frames instead of one. */
#define STREAM_COAL_US 75u

static inline int open_port_queues(struct myrio_port **port, const char *dev, unsigned mtu,
				   const char *pcap, unsigned queues, unsigned coal_us)
{
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.mtu = mtu;
	pc.irq = true;
	pc.intr_coal_us = coal_us;
	int rc = myrio_port_open_queues(port, dev, &pc, (uint16_t)queues);
	if (rc < 0 || !pcap)
		return rc;
	return myrio_port_capture_start(*port, pcap);
}

static inline int open_port(struct myrio_port **port, const char *dev, unsigned mtu,
			    const char *pcap)
{
	return open_port_queues(port, dev, mtu, pcap, 1, 0);
}

/* What a stack program does first: stops on signals, opens the port on dev (MTU 1500, no
 * capture) and fills sc for the address ip (host order) on a /24. */
static inline int open_port_for_stack(struct myrio_port **port, const char *dev, uint32_t ip,
				      struct myrio_stack_conf *sc)
{
	stop_on_signals();
	int rc = open_port(port, dev, 1500, NULL);
	myrio_stack_conf_init(sc);
	sc->ip = ip;
	sc->netmask = 0xffffff00u;
	return rc;
}

/* Adaptive polling: keep polling while there is work, and after `spin` idle polls in a row
 * sleep until the stack has work again, with the sleep protocol of tcp_lite.h (arm, poll
 * once more, sleep on the stack's fd). The fd sits in an epoll set of the program's own,
 * where its other fds would go too. spin 0 (--spin) never sleeps: busy polling, as on a
 * port without interrupts. */
struct idle_wait {
	int epfd; /* -1: busy polling */
	unsigned idle, spin;
	uint64_t sleeps;
};

static inline int idle_wait_init(struct idle_wait *w, struct myrio_stack *s,
				 struct myrio_port *port, bool busy)
{
	w->idle = 0;
	w->spin = 64; /* about 10 us of empty polls: steady traffic never sleeps */
	w->sleeps = 0;
	w->epfd = -1;
	struct myrio_port_info info;
	if (!busy && myrio_port_info(port, &info) == 0 &&
	    (!(info.caps & MYRIO_CAP_IRQ) ||
	     myrio_port_irq_fd_queue(port, myrio_stack_queue(s)) < 0)) {
		fprintf(stderr, "%s: no interrupts on queue %u: polling busily\n", info.device,
			myrio_stack_queue(s));
		busy = true;
	}
	if (busy)
		return 0;
	int fd = myrio_stack_fd(s);
	if (fd < 0)
		return fd;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -1;
	return 0;
}

/* Call after each round of the loop with the work it did (poll result plus the program's
 * own progress); sleeps at most timeout_ms (-1: until the stack has work). */
static inline void idle_wait(struct idle_wait *w, struct myrio_stack *s, int work, int timeout_ms)
{
	if (work > 0 || w->epfd < 0 || ++w->idle < w->spin) {
		if (work > 0)
			w->idle = 0;
		return;
	}
	w->idle = 0;
	if (myrio_stack_arm(s) < 0 || myrio_stack_poll(s) > 0)
		return;
	struct epoll_event ev;
	w->sleeps++;
	epoll_wait(w->epfd, &ev, 1, timeout_ms);
}

static inline void idle_wait_fini(struct idle_wait *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
}

/* What a stack example runs on: its port, a stack on it, and the adaptive polling. */
struct stack_app {
	struct myrio_port *port;
	struct myrio_stack *s;
	struct idle_wait iw;
};

/* The start the stack examples share: stops on signals, opens the port on dev (open_port,
 * MTU 1500), creates a stack on it at ip (host order, a /24) with conf's other settings,
 * and the adaptive polling (busy with spin). Says what failed, as who. */
static inline int stack_app_start(struct stack_app *a, const char *who, const char *dev,
				  const char *pcap, uint32_t ip, struct myrio_stack_conf *conf,
				  bool spin)
{
	stop_on_signals();
	if (open_port(&a->port, dev, 1500, pcap) < 0)
		return -1;
	conf->ip = ip;
	conf->netmask = 0xffffff00u;
	if (myrio_stack_create(&a->s, a->port, conf) < 0 ||
	    idle_wait_init(&a->iw, a->s, a->port, spin) < 0) {
		fprintf(stderr, "%s: cannot start on %s\n", who, dev);
		return -1;
	}
	return 0;
}

static inline void stack_app_stop(struct stack_app *a)
{
	idle_wait_fini(&a->iw);
	myrio_stack_destroy(a->s);
	myrio_port_close(a->port);
}

/* Seconds of CPU this process used (user + system). */
static inline double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* stream_send and stream_recv: byte i of a TCP stream is pattern[i % PATTERN_LEN]; a UDP
 * datagram holds a sequence number, then the pattern from offset 8. PATTERN_LEN is a prime,
 * so the pattern does not line up with segment sizes; PATTERN_MAX leaves room to copy a
 * whole jumbo frame from any offset. */
#define PATTERN_LEN 251
#define PATTERN_MAX (PATTERN_LEN + 9216)

static inline void pattern_fill(uint8_t pattern[PATTERN_MAX])
{
	for (unsigned i = 0; i < PATTERN_MAX; i++)
		pattern[i] = (uint8_t)(i % PATTERN_LEN);
}

/* Whether data[0, len) continues the pattern from stream offset off. A payload may be
 * longer than the pattern buffer (a datagram reassembled from IP fragments), so it is
 * compared piece by piece. */
static inline bool pattern_matches(const uint8_t pattern[PATTERN_MAX], const uint8_t *data,
				   uint32_t len, uint64_t off)
{
	for (uint32_t done = 0; done < len;) {
		uint32_t n = len - done;
		if (n > PATTERN_MAX - PATTERN_LEN)
			n = PATTERN_MAX - PATTERN_LEN;
		if (memcmp(data + done, pattern + (off + done) % PATTERN_LEN, n) != 0)
			return false;
		done += n;
	}
	return true;
}

#endif
