/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats DEVICE: opens the port and reports its counters with per-second rates.
 *
 * The device must be free: a NIC of the model daemon or a board is owned by one process at a
 * time (a running program's counters are read with --pid/--name instead, attach.c).
 * Counters of the status block are the NIC's, cumulative since its last reset (§6.1); the
 * driver's count from the open. Frames that arrive meanwhile are received and dropped (and
 * counted), as by a sink.
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
#include "stats.h"

int stats_device(const char *device, const struct stats_opts *o)
{
	double interval = o->interval;
	long count = o->count;
	bool all = o->all;
	struct myrio_port *port;
	int rc = myrio_port_open(&port, device, NULL);
	if (rc < 0) {
		fprintf(stderr, "myrio-stats: cannot open %s: %s%s\n", device, strerror(-rc),
			rc == -EBUSY ? " (another process owns it: myrio-stats --name PROGRAM or "
				       "--pid PID reads that program's counters)"
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
		fprintf(stderr, "myrio-stats: cannot read the counters of %s\n", device);
		myrio_port_close(port);
		return 1;
	}
	const char **nm = calloc(n > 0 ? (size_t)n : 1, sizeof(*nm));
	for (int k = 0; nm && k < n; k++)
		nm[k] = names[k].name;
	double t_prev = stats_now();
	for (long i = 0; !stats_stop && (count < 0 || i < count); i++) {
		/* Meanwhile take what arrives, so the driver counts it and the rings never
		 * fill (the first report has no rate yet). */
		for (double end = stats_now() + (i ? interval : 0);
		     !stats_stop && stats_now() < end;) {
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
		double t = stats_now(), dt = t - t_prev;
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
			unsigned q;
			char col[40];
			if ((!v && !all) ||
			    stats_queue_counter(names[k].name, &q, col, sizeof(col)))
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
		if (nm)
			stats_print_queues(stdout, (unsigned)n, nm, cur, i ? prev : NULL, dt);
		fflush(stdout);
		memcpy(prev, cur, (size_t)n * sizeof(*cur));
		t_prev = t;
	}
	free(nm);
	free(names);
	free(prev);
	free(cur);
	myrio_port_close(port);
	return 0;
}
