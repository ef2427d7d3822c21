/* myrio-stats: a port's counters, live, with per-second rates (like `ethtool -S`).
 *
 *   myrio-stats simd:nic0            every second until Ctrl-C
 *   myrio-stats -n 1 0000:03:00.0    once
 *
 * It opens the port, so the device must be free: a NIC of the model daemon or a board is
 * owned by one process at a time. While another program uses a daemon NIC, use
 * `myrio-simd status` for what the daemon knows about it. Counters of the status block are
 * the NIC's, cumulative since its last reset (§6.1); the driver's count from the open.
 * Frames that arrive meanwhile are received and dropped (and counted), as by a sink.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "myrio/myrio.h"

#define U64(f)                                                                                     \
	{                                                                                          \
#f, offsetof(struct myrio_port_stats, f), 8                                        \
	}
#define U32(f)                                                                                     \
	{                                                                                          \
#f, offsetof(struct myrio_port_stats, f), 4                                        \
	}

static const struct counter {
	const char *name;
	size_t off;
	int size;
} counters[] = {
    U64(rx_packets),
    U64(rx_bytes),
    U64(tx_packets),
    U64(tx_bytes),
    U64(rx_bad_completion),
    U64(rx_refill_failed),
    U64(tx_ring_full),
    U64(tx_dropped_bad),
    U64(tx_tso_chains),
    U64(link_changes),
    U32(dropped_pause),
    U32(dropped_unicast_filtered),
    U32(dropped_bad_crc32),
    U32(dropped_bad_phy),
    U32(dropped_multicast_filtered),
    U32(dropped_link_overflow),
    U32(dropped_link_error_or_filtered),
    U32(dropped_runt),
    U32(dropped_overrun),
    U32(dropped_no_small_buffer),
    U32(dropped_no_big_buffer),
    U32(rdma_tags_available),
    U32(link_up),
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static uint64_t get(const struct myrio_port_stats *s, const struct counter *c)
{
	const char *p = (const char *)s + c->off;
	if (c->size == 8)
		return *(const uint64_t *)p;
	return *(const uint32_t *)p;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double interval = 1;
	long count = -1;
	bool all = false;
	for (int o; (o = getopt(argc, argv, "i:n:ah")) != -1;) {
		switch (o) {
		case 'i':
			interval = strtod(optarg, NULL);
			break;
		case 'n':
			count = strtol(optarg, NULL, 0);
			break;
		case 'a':
			all = true;
			break;
		default:
			fprintf(stderr, "usage: myrio-stats [-i SECONDS] [-n COUNT] [-a] DEVICE\n"
					"  -a  show zero counters too\n"
					"Opens the port: the device must not be in use by another "
					"process.\n");
			return 2;
		}
	}
	if (optind + 1 != argc || !(interval > 0)) {
		fprintf(stderr, "myrio-stats: give one DEVICE (simd:nic0, 0000:03:00.0)\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	struct myrio_port *port;
	int rc = myrio_port_open(&port, argv[optind], NULL);
	if (rc < 0) {
		fprintf(stderr, "myrio-stats: cannot open %s: %s%s\n", argv[optind], strerror(-rc),
			rc == -EBUSY ? " (another process owns it; for a daemon NIC, "
				       "`myrio-simd status` shows it)"
				     : "");
		return 1;
	}
	struct myrio_port_info info;
	myrio_port_info(port, &info);
	struct myrio_port_stats prev, cur;
	myrio_port_stats(port, &prev);
	double t_prev = now_s();
	for (long i = 0; !stop && (count < 0 || i < count); i++) {
		/* Meanwhile take what arrives, so the driver counts it and the rings never
		 * fill (the first report has no rate yet). */
		for (double end = now_s() + (i ? interval : 0); !stop && now_s() < end;) {
			struct myrio_pkt *pkts[64];
			uint16_t n = myrio_rx_burst(port, pkts, 64);
			myrio_pkt_free_bulk(pkts, n);
			if (!n) {
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
			}
		}
		if (myrio_port_stats(port, &cur) < 0)
			break;
		double t = now_s(), dt = t - t_prev;
		int link = myrio_port_link(port);
		printf("%s%s (%s, %02x:%02x:%02x:%02x:%02x:%02x) link %s\n", i ? "\n" : "",
		       info.device, info.bus, info.mac[0], info.mac[1], info.mac[2], info.mac[3],
		       info.mac[4], info.mac[5],
		       link == MYRIO_LINK_UP	 ? "up"
		       : link == MYRIO_LINK_DOWN ? "down"
						 : "unknown");
		printf("  %-32s %20s %14s\n", "counter", "value", "per second");
		for (size_t k = 0; k < sizeof(counters) / sizeof(counters[0]); k++) {
			const struct counter *c = &counters[k];
			uint64_t v = get(&cur, c), d = v - get(&prev, c);
			if (!v && !all)
				continue;
			if (c->size == 4) /* NIC counters are 32 bits and wrap */
				d = (uint32_t)d;
			if (i && dt > 0)
				printf("  %-32s %20llu %14.0f\n", c->name, (unsigned long long)v,
				       d / dt);
			else
				printf("  %-32s %20llu %14s\n", c->name, (unsigned long long)v,
				       "-");
		}
		fflush(stdout);
		prev = cur;
		t_prev = t;
	}
	myrio_port_close(port);
	return 0;
}
