/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-rawbench: raw frame rate between two ports of an in-process device model.
 *
 *   myrio-rawbench rate [-s SIZE] [-t SECONDS] [-l 10g|unlimited] [-q]
 *       model on its own thread (spinning; -q: sleeping when idle), this program on
 *       another core: frames/s received by port B from port A.
 *   myrio-rawbench line [-s SIZE] [-n MICROSECONDS]
 *       stepped model with a 10 Gb/s link, one model step (1 µs of model time, as the
 *       model bus's delay_us counts it) per round of the benchmark: frames per second of
 *       model time, i.e. whether the driver keeps the link busy, independent of how busy
 *       the host's CPUs are.
 *   myrio-rawbench rate -T N [-w spin|yield|sleep] [-s SIZE] [-t SECONDS] [-l LINK]
 *       N queues on each port (the RSS firmware), a thread per queue pair: thread q
 *       sends on A's queue q IPv4/UDP frames whose flow RSS brings to B's queue q, and
 *       receives them there (the threads share the machine's cores with the model's). The
 *       ports run without pause (a full queue drops, counted, instead of pausing the link
 *       for every queue); a thread that moved nothing for 8 rounds sleeps 20 µs (-w sleep,
 *       the default), calls sched_yield (yield) or goes on (spin). Per queue: the rate,
 *       the CPU its thread got, and the queue's counters (ring full, refill failures,
 *       status updates).
 *   myrio-rawbench step [-s SIZE] [-n PACKETS]
 *       stepped model, no thread: for counting instructions of myrio_rx_burst and
 *       myrio_tx_burst with callgrind (bench/raw_rate.sh), the model's work falls
 *       outside them. Also the application's CPU per frame with the NIC never the
 *       bottleneck (every burst full), the model's steps apart.
 *
 * CPU per frame, the figure a DPDK comparison is made on, is the thread CPU clock times
 * the wall-clock share of the polls it is about: in rate, the polls that moved frames
 * (an empty poll waits for the model's thread, which an idle-sleeping program would not
 * have spent); in step, the application's rounds and not the model's steps.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "myrio/myrio.h"

#define BURST 32

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static double thread_cpu(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* The model thread's CPU seconds so far (the NIC's share), 0 where it has none. */
static double model_cpu(struct myrio_sim *sim)
{
	uint64_t ns = 0;
	return myrio_sim_thread_cpu_ns(sim, &ns) == 0 ? ns / 1e9 : 0;
}

struct bench {
	struct myrio_sim *sim;
	struct myrio_port *a, *b;
	struct myrio_pool *pool;
	uint8_t hdr[14];
	uint32_t size;
	uint64_t rx, tx;
	bool stepped;
	uint16_t queues;
	bool lanes; /* -T given: a thread per queue pair, even for one */
	char idle;  /* what a lane does when nothing moved: 's'leep, 'y'ield, 'p' spin */
};

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int setup(struct bench *bn, const char *spec)
{
	/* App on one core, model thread on the other: the model thread inherits the
	 * creator's CPU set, so create it from CPU 0, then move this thread to the last CPU. */
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (!bn->stepped && ncpu > 1 && !bn->lanes)
		pin(0);
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (myrio_sim_conf_parse(&sc, spec) < 0 || myrio_sim_create(&bn->sim, &sc) < 0)
		return -1;
	if (!bn->stepped && ncpu > 1 && !bn->lanes) /* -T: the threads go where they may */
		pin(ncpu - 1);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = bn->sim;
	conf.rx_pool_size = 4096;
	/* Queues of threads that the scheduler may hold up: without 802.3x pause a full queue
	 * drops (counted) instead of holding the link for every queue (docs/driver.md). */
	if (bn->lanes)
		conf.driver_args = "pause=0";
	if (myrio_port_open_queues(&bn->a, "sim:sim0", &conf, bn->queues) < 0 ||
	    myrio_port_open_queues(&bn->b, "sim:sim1", &conf, bn->queues) < 0)
		return -1;
	if (myrio_port_pool_create(bn->a, 8192, MYRIO_PKT_HEADROOM + bn->size, &bn->pool) < 0)
		return -1;
	struct myrio_port_info ia, ib;
	myrio_port_info(bn->a, &ia);
	myrio_port_info(bn->b, &ib);
	memcpy(bn->hdr, ib.mac, 6);
	memcpy(bn->hdr + 6, ia.mac, 6);
	bn->hdr[12] = 0x88;
	bn->hdr[13] = 0xb5;
	/* Fill every buffer once; the loop only rewrites the header. */
	struct myrio_pkt *p[8192];
	unsigned n = 0;
	while (n < 8192 && (p[n] = myrio_pkt_alloc(bn->pool)) != NULL) {
		memset(myrio_pkt_data(p[n]), 0x5a, bn->size);
		n++;
	}
	myrio_pkt_free_bulk(p, n);
	return 0;
}

/* One round: offer a burst to A, collect a burst from B. */
static bool round_trip(struct bench *bn, struct myrio_pkt **out, unsigned *pending)
{
	struct myrio_pkt *in[BURST];
	while (*pending < BURST) {
		struct myrio_pkt *p = myrio_pkt_alloc(bn->pool);
		if (!p)
			break;
		memcpy(myrio_pkt_data(p), bn->hdr, 14);
		p->len = bn->size;
		out[(*pending)++] = p;
	}
	uint16_t sent = myrio_tx_burst(bn->a, out, (uint16_t)*pending);
	if (sent && sent < *pending)
		memmove(out, out + sent, (*pending - sent) * sizeof(out[0]));
	*pending -= sent;
	bn->tx += sent;
	uint16_t got = myrio_rx_burst(bn->b, in, BURST);
	bn->rx += got;
	myrio_pkt_free_bulk(in, got);
	return sent || got;
}

/* -T N: one thread per queue pair, each with its own pool and frames. */
struct lane {
	struct bench *bn;
	uint16_t q;
	struct myrio_pool *pool;
	uint8_t hdr[42]; /* Ethernet, IPv4, the ports: a flow that lands on B's queue q */
	double seconds;
	uint64_t rx;
	double cpu;	     /* the lane thread's CPU seconds over the measurement */
	uint64_t idle_waits; /* sleeps or yields after quiet rounds */
};

static int lane_setup(struct lane *ln)
{
	struct bench *bn = ln->bn;
	if (myrio_port_pool_create(bn->a, 4096, MYRIO_PKT_HEADROOM + bn->size, &ln->pool) < 0)
		return -1;
	uint8_t *h = ln->hdr;
	memcpy(h, bn->hdr, 12);
	h[12] = 0x08;
	h[13] = 0x00;
	memset(h + 14, 0, 28);
	h[14] = 0x45;
	h[14 + 8] = 64;
	h[14 + 9] = 6; /* TCP ports: RSS spreads by the 4-tuple */
	uint16_t tot = htons((uint16_t)(bn->size - 14));
	memcpy(h + 16, &tot, 2);
	uint32_t src = htonl(0x0a000001), dst = htonl(0x0a000002);
	memcpy(h + 26, &src, 4);
	memcpy(h + 30, &dst, 4);
	for (uint16_t sport = 1024;; sport++) {
		uint16_t sp = htons(sport), dp = htons(9);
		if (myrio_port_rss_flow_queue(bn->b, 6, src, dst, sp, dp, NULL) == ln->q ||
		    sport == 65535) {
			memcpy(h + 34, &sp, 2);
			memcpy(h + 36, &dp, 2);
			break;
		}
	}
	return 0;
}

static void *lane_run(void *arg)
{
	struct lane *ln = arg;
	struct bench *bn = ln->bn;
	struct myrio_pkt *out[BURST], *in[BURST];
	unsigned pending = 0;
	double warm = now() + 0.2, t_start = 0, t;
	uint64_t rx = 0, rx0 = 0;
	unsigned quiet = 0;
	while ((t = now()) < warm + ln->seconds) {
		for (int i = 0; i < 64; i++) {
			while (pending < BURST) {
				struct myrio_pkt *p = myrio_pkt_alloc(ln->pool);
				if (!p)
					break;
				memcpy(myrio_pkt_data(p), ln->hdr, sizeof(ln->hdr));
				p->len = bn->size;
				out[pending++] = p;
			}
			uint16_t sent = myrio_tx_burst_queue(bn->a, ln->q, out, (uint16_t)pending);
			if (sent && sent < pending)
				memmove(out, out + sent, (pending - sent) * sizeof(out[0]));
			pending -= sent;
			uint16_t got = myrio_rx_burst_queue(bn->b, ln->q, in, BURST);
			rx += got;
			myrio_pkt_free_bulk(in, got);
			/* Nothing moved: the NIC (the model's thread) has work to do first. With
			 * more busy threads than cores, spinning keeps it off the core; and
			 * sched_yield does not give the core back for long under EEVDF (Linux
			 * 6.6 on): each call only pushes the thread's own deadline out, so a
			 * lane that yields often loses its turns to every other thread on a
			 * loaded machine. A short sleep after a few quiet rounds does. */
			quiet = got || sent ? 0 : quiet + 1;
			if (quiet >= 8 && bn->idle != 'p') {
				if (bn->idle == 'y') {
					sched_yield();
				} else {
					struct timespec ts = {0, 20000};
					nanosleep(&ts, NULL);
				}
				quiet = 0;
				ln->idle_waits++;
			}
		}
		if (t_start == 0 && t >= warm) {
			t_start = t;
			rx0 = rx;
			ln->cpu = thread_cpu();
		}
	}
	ln->cpu = thread_cpu() - ln->cpu;
	ln->rx = rx - rx0;
	ln->seconds = t - t_start;
	myrio_pkt_free_bulk(out, pending);
	for (int i = 0; i < 50000 && myrio_pool_free_count(ln->pool) < ln->pool->count; i++) {
		myrio_tx_burst_queue(bn->a, ln->q, NULL, 0);
		myrio_pkt_free_bulk(in, myrio_rx_burst_queue(bn->b, ln->q, in, BURST));
		usleep(100);
	}
	return NULL;
}

static int run_lanes(struct bench *bn, unsigned nq, double seconds, const char *link)
{
	struct lane ln[16];
	pthread_t th[16];
	for (unsigned q = 0; q < nq; q++) {
		ln[q] = (struct lane){.bn = bn, .q = (uint16_t)q, .seconds = seconds};
		if (lane_setup(&ln[q]) < 0)
			return 1;
	}
	double proc0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), model0 = model_cpu(bn->sim);
	double t0 = now();
	for (unsigned q = 0; q < nq; q++)
		pthread_create(&th[q], NULL, lane_run, &ln[q]);
	double fps = 0;
	for (unsigned q = 0; q < nq; q++) {
		pthread_join(th[q], NULL);
		fps += ln[q].rx / ln[q].seconds;
		if (myrio_pool_free_count(ln[q].pool) == ln[q].pool->count)
			myrio_pool_destroy(ln[q].pool);
	}
	double dt = now() - t0;
	double proc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - proc0,
	       model = model_cpu(bn->sim) - model0;
	printf("rate: %u-byte frames, link %s, %u queues: %.0f frames/s (%.3f Mpps, %.0f per "
	       "queue)\n",
	       bn->size, link, nq, fps, fps / 1e6, fps / nq);
	/* where the time went: a queue's thread that got little CPU explains a small share */
	for (unsigned q = 0; q < nq; q++) {
		struct myrio_queue_stats sa, sb;
		myrio_port_queue_stats(bn->a, (uint16_t)q, &sa);
		myrio_port_queue_stats(bn->b, (uint16_t)q, &sb);
		printf("queue %u: %.0f frames/s, thread CPU %.3f s over %.2f s, %llu idle waits; "
		       "sent %llu (ring full %llu), received %llu (refill failed %llu), status "
		       "updates %llu + %llu\n",
		       q, ln[q].rx / ln[q].seconds, ln[q].cpu, ln[q].seconds,
		       (unsigned long long)ln[q].idle_waits, (unsigned long long)sa.tx_packets,
		       (unsigned long long)sa.tx_ring_full, (unsigned long long)sb.rx_packets,
		       (unsigned long long)sb.rx_refill_failed, (unsigned long long)sa.irq_updates,
		       (unsigned long long)sb.irq_updates);
	}
	struct myrio_port_stats sb;
	myrio_port_stats(bn->b, &sb);
	printf("cpu: process %.3f s (model thread %.3f s) over %.2f s; receiver NIC drops (no "
	       "buffer, overrun) %llu\n",
	       proc, model, dt, (unsigned long long)sb.rx_missed);
	return 0;
}

static void teardown(struct bench *bn, struct myrio_pkt **out, unsigned pending)
{
	myrio_pkt_free_bulk(out, pending);
	/* The pool must outlive the NIC's reads of it: wait for the last completions. */
	/* b keeps receiving: a full receive ring would hold a with pause frames. */
	struct myrio_pkt *in[BURST];
	for (int i = 0; i < 50000 && myrio_pool_free_count(bn->pool) < bn->pool->count; i++) {
		myrio_tx_burst(bn->a, out, 0);
		myrio_pkt_free_bulk(in, myrio_rx_burst(bn->b, in, BURST));
		if (bn->stepped)
			myrio_sim_step(bn->sim, 16);
		else
			usleep(100);
	}
	if (myrio_pool_free_count(bn->pool) == bn->pool->count)
		myrio_pool_destroy(bn->pool);
	else
		fprintf(stderr, "myrio-rawbench: send completions missing; pool left in place\n");
	myrio_port_close(bn->a);
	myrio_port_close(bn->b);
	myrio_sim_destroy(bn->sim);
}

int main(int argc, char **argv)
{
	if (argc < 2 ||
	    (strcmp(argv[1], "rate") && strcmp(argv[1], "step") && strcmp(argv[1], "line"))) {
		fprintf(stderr,
			"usage: myrio-rawbench rate [-T QUEUES [-w spin|yield|sleep]] [-s SIZE] "
			"[-t SECONDS] [-l LINK] [-q] "
			"[-m TIMING]\n"
			"       myrio-rawbench line [-s SIZE] [-n MICROSECONDS] [-m TIMING]\n"
			"       myrio-rawbench step [-s SIZE] [-n PACKETS] [-m TIMING]\n"
			"TIMING: the model NICs' own timing, none (default) or myri10ge\n");
		return 2;
	}
	bool line = strcmp(argv[1], "line") == 0;
	bool stepped = line || strcmp(argv[1], "step") == 0;
	struct bench bn = {.size = 60, .stepped = stepped, .queues = 1, .idle = 's'};
	double seconds = 2;
	uint64_t packets = 100000;
	const char *link = "unlimited", *timing = "none";
	bool spin = true;
	int c;
	optind = 2;
	while ((c = getopt(argc, argv, "s:t:l:n:qT:m:w:")) != -1) {
		switch (c) {
		case 'w':
			bn.idle = !strcmp(optarg, "spin") ? 'p' : optarg[0];
			if (strcmp(optarg, "spin") && strcmp(optarg, "yield") &&
			    strcmp(optarg, "sleep")) {
				fprintf(stderr, "myrio-rawbench: -w spin, yield or sleep\n");
				return 2;
			}
			break;
		case 'T':
			bn.queues = (uint16_t)strtoul(optarg, NULL, 0);
			bn.lanes = true;
			break;
		case 'q':
			spin = false;
			break;
		case 's':
			bn.size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'l':
			link = optarg;
			break;
		case 'n':
			packets = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			timing = optarg;
			break;
		default:
			return 2;
		}
	}
	if (bn.size < 60 || bn.size > 1514) {
		fprintf(stderr, "myrio-rawbench: size must be 60..1514\n");
		return 2;
	}
	if (bn.queues < 1 || bn.queues > 16 || (bn.lanes && stepped)) {
		fprintf(stderr, "myrio-rawbench: -T takes 1..16 queues, with rate only\n");
		return 2;
	}
	char spec[160];
	if (stepped)
		snprintf(spec, sizeof(spec), "stepped,link=%s,timing=%s",
			 line ? "10g" : "unlimited", timing);
	else
		snprintf(spec, sizeof(spec), "%slink=%s,timing=%s%s", spin ? "spin," : "", link,
			 timing, bn.queues > 1 ? ",eeprom_fw=rss" : "");
	if (setup(&bn, spec) < 0) {
		fprintf(stderr, "myrio-rawbench: set-up failed\n");
		return 1;
	}
	printf("model timing: %s\n", timing);
	struct myrio_pkt *out[BURST];
	unsigned pending = 0;
	if (bn.lanes) {
		int rc = run_lanes(&bn, bn.queues, seconds, link);
		teardown(&bn, out, 0);
		return rc;
	}
	if (line) {
		uint64_t us = packets == 100000 ? 200000 : packets;
		for (uint64_t t = 0; t < us; t++) {
			round_trip(&bn, out, &pending);
			myrio_sim_step(bn.sim, 1);
		}
		/* 10 GbE line rate: frame + FCS + preamble/SFD + inter-frame gap */
		double fps = bn.rx / (us * 1e-6), max = 10e9 / ((bn.size + 4 + 8 + 12) * 8.0);
		printf("line: %u-byte frames, 10 Gb/s link, %llu us of model time: %.0f frames/s, "
		       "%.2f%% of line rate (%.0f)\n",
		       bn.size, (unsigned long long)us, fps, 100 * fps / max, max);
		teardown(&bn, out, pending);
		return 0;
	}
	if (stepped) {
		/* A burst out, the model moves it (outside the measured calls), a burst in. The
		 * clock reads split the thread's CPU between the two (two per burst, about 1 ns
		 * a frame); callgrind counts the burst calls without them. */
		double app = 0, model = 0, t0 = now(), t1, cpu0 = thread_cpu();
		while (bn.rx < packets) {
			round_trip(&bn, out, &pending);
			t1 = now();
			app += t1 - t0;
			myrio_sim_step(bn.sim, 64);
			t0 = now();
			model += t0 - t1;
		}
		double cpu = thread_cpu() - cpu0, wall = app + model > 0 ? app + model : 1;
		double app_cpu = cpu * app / wall;
		printf("step: %llu frames of %u bytes sent, %llu received\n",
		       (unsigned long long)bn.tx, bn.size, (unsigned long long)bn.rx);
		printf("step cpu: thread %.3f s, application %.1f ns per frame, model %.1f ns per "
		       "frame (thread CPU clock x wall-clock share): %.0f frames per application "
		       "CPU-second, %.0f with the model\n",
		       cpu, app_cpu * 1e9 / (double)bn.rx, (cpu - app_cpu) * 1e9 / (double)bn.rx,
		       app_cpu > 0 ? bn.rx / app_cpu : 0, cpu > 0 ? bn.rx / cpu : 0);
		teardown(&bn, out, pending);
		return 0;
	}
	double t0 = now(), warm = t0 + 0.2, t_start = 0, t = t0, proc0 = 0, model0 = 0, app0 = 0;
	double busy = 0; /* wall time of the polls that moved frames, from t_start */
	uint64_t rx0 = 0;
	while (t < warm + seconds) {
		for (int i = 0; i < 64; i++) {
			bool moved = round_trip(&bn, out, &pending);
			double t1 = now();
			if (moved)
				busy += t1 - t;
			t = t1;
		}
		if (t_start == 0 && t >= warm) {
			t_start = t;
			rx0 = bn.rx;
			busy = 0;
			proc0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
			model0 = model_cpu(bn.sim);
			app0 = thread_cpu();
		}
	}
	double dt = t - t_start;
	double proc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - proc0, model = model_cpu(bn.sim) - model0;
	double app = thread_cpu() - app0, app_busy = dt > 0 ? app * busy / dt : 0;
	uint64_t rx = bn.rx - rx0;
	struct myrio_port_stats sb;
	myrio_port_stats(bn.b, &sb);
	printf("rate: %u-byte frames, link %s: %.0f frames/s (%.3f Mpps, %.3f Gb/s of frames) "
	       "over %.2f s; receiver NIC drops (no buffer, overrun) %llu\n",
	       bn.size, link, rx / dt, rx / dt / 1e6, rx * bn.size * 8.0 / dt / 1e9, dt,
	       (unsigned long long)sb.rx_missed);
	/* frames per CPU-second: what a DPDK comparison is made on */
	printf("cpu: process %.3f s (model thread %.3f s) over the %.2f s: %.0f frames per "
	       "CPU-second\n",
	       proc, model, dt, proc > 0 ? rx / proc : 0);
	printf("application thread: %.3f s, polls that moved frames %.1f%% of the run: %.3f s, "
	       "%.0f frames per busy CPU-second\n",
	       app, dt > 0 ? 100 * busy / dt : 0, app_busy, app_busy > 0 ? rx / app_busy : 0);
	teardown(&bn, out, pending);
	return 0;
}
