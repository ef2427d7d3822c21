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

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
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
	/* Every counter by name: the generic ones, then the driver's own (xstats). */
	int n = myrio_port_xstats_names(port, NULL, 0);
	struct myrio_xstat_name *names = calloc(n > 0 ? (size_t)n : 1, sizeof(*names));
	uint64_t *prev = calloc(n > 0 ? (size_t)n : 1, sizeof(*prev));
	uint64_t *cur = calloc(n > 0 ? (size_t)n : 1, sizeof(*cur));
	if (n < 0 || !names || !prev || !cur ||
	    myrio_port_xstats_names(port, names, (unsigned)n) != n ||
	    myrio_port_xstats(port, prev, (unsigned)n) != n) {
		fprintf(stderr, "myrio-stats: cannot read the counters of %s\n", argv[optind]);
		myrio_port_close(port);
		return 1;
	}
	double t_prev = now_s();
	for (long i = 0; !stop && (count < 0 || i < count); i++) {
		/* Meanwhile take what arrives, so the driver counts it and the rings never
		 * fill (the first report has no rate yet). */
		for (double end = now_s() + (i ? interval : 0); !stop && now_s() < end;) {
			struct myrio_pkt *pkts[64];
			uint16_t got = myrio_rx_burst(port, pkts, 64);
			myrio_pkt_free_bulk(pkts, got);
			if (!got) {
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
			}
		}
		if (myrio_port_xstats(port, cur, (unsigned)n) != n)
			break;
		double t = now_s(), dt = t - t_prev;
		int link = myrio_port_link(port);
		printf("%s%s (%s, %s, %02x:%02x:%02x:%02x:%02x:%02x) link %s\n", i ? "\n" : "",
		       info.device, info.bus, info.driver, info.mac[0], info.mac[1], info.mac[2],
		       info.mac[3], info.mac[4], info.mac[5],
		       link == MYRIO_LINK_UP	 ? "up"
		       : link == MYRIO_LINK_DOWN ? "down"
						 : "unknown");
		printf("  %-32s %20s %14s\n", "counter", "value", "per second");
		for (int k = 0; k < n; k++) {
			uint64_t v = cur[k], d = v - prev[k];
			if (!v && !all)
				continue;
			if (v < prev[k] && prev[k] <= UINT32_MAX)
				d = (uint32_t)d; /* a NIC counter of 32 bits wrapped */
			if (i && dt > 0)
				printf("  %-32s %20llu %14.0f\n", names[k].name,
				       (unsigned long long)v, d / dt);
			else
				printf("  %-32s %20llu %14s\n", names[k].name,
				       (unsigned long long)v, "-");
		}
		fflush(stdout);
		memcpy(prev, cur, (size_t)n * sizeof(*cur));
		t_prev = t;
	}
	free(names);
	free(prev);
	free(cur);
	myrio_port_close(port);
	return 0;
}
