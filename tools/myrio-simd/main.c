/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-simd: the device model as a daemon. It hosts several model NICs and the cables
 * between them (to another NIC, to a TAP device, to an existing interface), and
 * applications in other processes attach to its NICs with the device string
 * "simd:NIC[@SOCKET]" as they would to a PCI function. See docs/model-daemon.md.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "util/log.h"

/* A daemon's log: time-stamped, on stderr (journald or a redirect keeps it). */
static void daemon_sink(enum myrio_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	struct timespec ts;
	struct tm tm;
	char when[32];
	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ld myrio-simd: %s: %s\n", when, ts.tv_nsec / 1000000, names[level],
		msg);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: myrio-simd [options]           run the daemon (foreground)\n"
		"       myrio-simd status [--socket P]  report on a running daemon\n"
		"\n"
		"options (each also a 'key value' line of a --config file):\n"
		"  --socket PATH      UNIX socket (default $%s or %s)\n"
		"  --mode OCTAL       socket file permissions (default 0660)\n"
		"  --group GROUP      the socket's group, admitted (default 'myrio' if it exists)\n"
		"  --idle SECONDS     close unattached connections idle this long (default 10)\n"
		"  --config FILE      read settings from FILE\n"
		"  --nic SPEC         a NIC: NAME[,mac=XX:XX:XX:XX:XX:XX]\n"
		"                     [,cable=NIC|tap:IFNAME|packet:IFNAME][,link=RATE]\n"
		"                     [,timing=none|myri10ge]\n"
		"                     [,loss=P][,reorder=P][,dup=P][,corrupt=P][,flap=MS/MS]\n"
		"                     (default: --nic nic0,cable=nic1 --nic nic1)\n"
		"  --link RATE        10g (default), 1g, unlimited or bits per second\n"
		"  --seed N           seed of the fault generators\n"
		"  --spin             the model thread never sleeps (benchmarks)\n"
		"  --model SPEC       other model settings (see myrio_sim_conf_parse)\n"
		"  -v, --verbose      debug log\n",
		SIMD_SOCKET_ENV, SIMD_DEFAULT_SOCKET);
}

static int status_main(int argc, char **argv)
{
	const char *sock = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
			sock = argv[++i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	return simd_status_client(sock) == 0 ? 0 : 1;
}

static int parse_args(struct simd_config *c, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"config", required_argument, NULL, 'c'},
	    {"mode", required_argument, NULL, 'M'},
	    {"group", required_argument, NULL, 'g'},
	    {"idle", required_argument, NULL, 'i'},
	    {"nic", required_argument, NULL, 'n'},
	    {"link", required_argument, NULL, 'l'},
	    {"seed", required_argument, NULL, 'S'},
	    {"spin", no_argument, NULL, 'p'},
	    {"model", required_argument, NULL, 'm'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt, rc = 0;
	while (rc == 0 && (opt = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			rc = simd_config_set(c, "socket", optarg);
			break;
		case 'c':
			rc = simd_config_load(c, optarg);
			break;
		case 'M':
			rc = simd_config_set(c, "mode", optarg);
			break;
		case 'g':
			rc = simd_config_set(c, "group", optarg);
			break;
		case 'i':
			rc = simd_config_set(c, "idle", optarg);
			break;
		case 'n':
			rc = simd_config_set(c, "nic", optarg);
			break;
		case 'l':
			rc = simd_config_set(c, "link", optarg);
			break;
		case 'S':
			rc = simd_config_set(c, "seed", optarg);
			break;
		case 'p':
			rc = simd_config_set(c, "spin", NULL);
			break;
		case 'm':
			rc = simd_config_set(c, "model", optarg);
			break;
		case 'v':
			myrio_log_set(daemon_sink, NULL, MYRIO_LOG_DEBUG);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (rc == 0 && optind < argc) {
		log_err("unexpected argument '%s'", argv[optind]);
		rc = -EINVAL;
	}
	return rc < 0 ? rc : simd_config_finish(c);
}

/* SIGINT/SIGTERM/SIGHUP arrive on a signalfd the control loop polls; blocked before the
 * model thread starts so that it inherits the mask and never takes them. */
static int signals_to_fd(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -EINVAL;
	signal(SIGPIPE, SIG_IGN);
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "status") == 0)
		return status_main(argc - 1, argv + 1);
	static struct simd_daemon d;
	const char *env = getenv("MYRIO_LOG");
	myrio_log_set(daemon_sink, NULL, env ? (enum myrio_log_level)atoi(env) : MYRIO_LOG_INFO);
	simd_config_init(&d.conf);
	if (parse_args(&d.conf, argc, argv) < 0)
		return 2;
	d.signal_fd = signals_to_fd();
	if (d.signal_fd < 0) {
		log_err("cannot set up signal handling: %s", strerror(-d.signal_fd));
		return 1;
	}
	/* Before the model thread exists: it is the one that would take the SIGBUS. */
	int rc = simd_guard_install(&d.guard);
	if (rc < 0) {
		log_err("cannot install the SIGBUS guard over client memory: %s", strerror(-rc));
		return 1;
	}
	rc = simd_world_build(&d);
	if (rc == 0)
		rc = simd_serve(&d);
	simd_world_destroy(&d);
	simd_guard_uninstall(&d.guard);
	close(d.signal_fd);
	return rc < 0 ? 1 : 0;
}
