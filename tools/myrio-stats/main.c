/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-stats: counters of a port, or of a running program, with per-second rates.
 *
 *   myrio-stats simd:nic0                    open a free port: every second until Ctrl-C
 *   myrio-stats --name stream_recv           a running program's ports and stacks
 *   myrio-stats --pid 1234 --json -n 1       once, as JSON
 *   myrio-stats --pid 1234 --prometheus      once, in the Prometheus text format
 *
 * A running program publishes its counters in /dev/shm/myrio.PID (docs/observability.md);
 * reading them does not disturb it.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

volatile sig_atomic_t stats_stop;

static void on_signal(int sig)
{
	stats_stop = 1;
}

double stats_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void stats_sleep_until(double t)
{
	while (!stats_stop && stats_now() < t) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: myrio-stats [options] DEVICE          open a free port\n"
		   "       myrio-stats [options] --pid PID       a running program's counters\n"
		   "       myrio-stats [options] --name PROGRAM  the same, found by name\n"
		   "options:\n"
		   "  -i, --interval SECONDS  between reports (default 1)\n"
		   "  -n, --count N           reports, then exit (default: until Ctrl-C; 1 for\n"
		   "                          --json and --prometheus)\n"
		   "  -a, --all               show zero counters too (text)\n"
		   "      --json              one JSON object per report, one per line\n"
		   "      --prometheus        the Prometheus text exposition format\n"
		   "  -h, --help              this text\n"
		   "DEVICE: sim:NAME, simd:NAME[@SOCKET], a PCI address (0000:03:00.0).\n"
		   "A running program publishes its ports' and stacks' counters in\n"
		   "/dev/shm/myrio.PID (MYRIO_PUBLISH=0 turns that off).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"interval", required_argument, 0, 'i'},
					     {"count", required_argument, 0, 'n'},
					     {"all", no_argument, 0, 'a'},
					     {"pid", required_argument, 0, 'p'},
					     {"name", required_argument, 0, 'N'},
					     {"json", no_argument, 0, 'j'},
					     {"prometheus", no_argument, 0, 'P'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	struct stats_opts o = {.interval = 1, .count = -1, .format = FORMAT_TEXT};
	int pid = 0;
	const char *name = NULL;
	bool count_given = false;
	for (int c; (c = getopt_long(argc, argv, "i:n:ah", opts, NULL)) != -1;) {
		switch (c) {
		case 'i':
			o.interval = strtod(optarg, NULL);
			break;
		case 'n':
			o.count = strtol(optarg, NULL, 0);
			count_given = true;
			break;
		case 'a':
			o.all = true;
			break;
		case 'p':
			pid = atoi(optarg);
			break;
		case 'N':
			name = optarg;
			break;
		case 'j':
			o.format = FORMAT_JSON;
			break;
		case 'P':
			o.format = FORMAT_PROMETHEUS;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	bool attach = pid > 0 || name;
	if (!(o.interval > 0) || (attach ? optind != argc : optind + 1 != argc) ||
	    (pid > 0 && name)) {
		usage(stderr);
		return 2;
	}
	if (o.format != FORMAT_TEXT && !count_given)
		o.count = 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!attach) {
		if (o.format != FORMAT_TEXT) {
			fprintf(stderr, "myrio-stats: --json and --prometheus read a running "
					"program (--pid, --name)\n");
			return 2;
		}
		return stats_device(argv[optind], &o);
	}
	if (name) {
		int pids[8];
		int n = myrio_published_find(name, pids, 8);
		if (n <= 0) {
			fprintf(stderr,
				"myrio-stats: no running program named %s publishes counters\n",
				name);
			return 1;
		}
		if (n > 1) {
			fprintf(stderr, "myrio-stats: %d programs named %s: choose with --pid:", n,
				name);
			for (int i = 0; i < n; i++)
				fprintf(stderr, " %d", pids[i]);
			fputc('\n', stderr);
			return 1;
		}
		pid = pids[0];
	}
	return stats_attach(pid, &o);
}
