/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-perf: netperf-style throughput, transaction-rate and CPU-cost tests of libmyrio.
 *
 *   myrio-perf -t TCP_STREAM -l 10 --mtu 9000            in-process model, 10 Gb/s link
 *   myrio-perf -t UDP_RR --sim link=unlimited,spin
 *   myrio-perf -t TCP_STREAM --irq                      sleep on the NIC's interrupt
 *   myrio-perf --sweep --svg udp.svg                     UDP_STREAM message-size sweep
 *   myrio-perf -t TCP_STREAM simd:nic0 simd:nic1         the model daemon, or two boards
 *   myrio-perf -t TCP_STREAM -T 2 --conns 4             2 queues, 2 threads, 8 connections
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "perf.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: myrio-perf [options] [DEV_A DEV_B]\n"
		"  -t, --test NAME      TCP_STREAM (default), TCP_SENDFILE, UDP_STREAM, TCP_RR, "
		"UDP_RR\n"
		"  -l, --length SECS    test length (default 10)\n"
		"  -m, --msg-size N     stream message size (default: one full segment)\n"
		"  -r, --rr-size REQ,RESP  RR request and response sizes (default 1,1)\n"
		"  -b, --burst N        RR: N more transactions in flight\n"
		"  -T, --threads N      N queues on each port, N threads, a stack per queue\n"
		"                       (TCP_STREAM, TCP_RR; 1..16)\n"
		"      --conns N        with -T: connections per thread (default: 4 for\n"
		"                       TCP_STREAM, 1 for TCP_RR)\n"
		"      --mtu N          1500 (default) or up to 9000\n"
		"      --sim SPEC       in-process model options (default 'spin': 10 Gb/s link,\n"
		"                       model thread never sleeps); e.g. link=unlimited,spin;\n"
		"                       'stepped': no model thread, this one steps it (callgrind)\n"
		"      --irq            sleep on the NICs' interrupt eventfds when idle\n"
		"      --irq-spin N     idle polls before sleeping (default 16)\n"
		"      --coal US        interrupt coalescing (default: 200 for streams with --irq, "
		"else 0)\n"
		"      --no-timestamps  TCP without RFC 7323 timestamps\n"
		"      --no-tso         one NIC request per TCP segment even where the port\n"
		"                       offers segmentation offload\n"
		"      --file PATH      TCP_SENDFILE source (default: 8 MiB temporary file)\n"
		"      --verify         receiver checks the payload\n"
		"      --copy           TCP_STREAM copies as socket programs do: myrio_tcp_write\n"
		"                       from, myrio_tcp_read into buffers (-m, 64 KiB)\n"
		"      --sweep[=SIZES]  UDP_STREAM over message sizes (comma list)\n"
		"      --svg FILE       the sweep's plot\n"
		"      --json           one JSON object per result\n"
		"      --pcap FILE      capture side A's frames\n"
		"      --relax          a pause instruction after every empty poll\n"
		"      --stats          print both stacks' non-zero counters at the end\n"
		"      --no-pin         do not put the model thread on CPU 0 and this one on "
		"the last\n"
		"  -q, --quiet          no progress line\n"
		"DEV_A DEV_B: two devices joined by a cable (simd:nic0 simd:nic1, PCI addresses);\n"
		"default: sim0 and sim1 of an in-process device model.\n");
}

static int parse_test(const char *s, enum perf_test *t)
{
	static const char *const names[] = {"TCP_STREAM", "TCP_SENDFILE", "UDP_STREAM", "TCP_RR",
					    "UDP_RR"};
	for (unsigned i = 0; i < 5; i++)
		if (!strcasecmp(s, names[i])) {
			*t = (enum perf_test)i;
			return 0;
		}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct perf_opts o = {.test = TCP_STREAM,
			      .seconds = 10,
			      .mtu = 1500,
			      .sim_spec = "spin",
			      .irq_spin = 16,
			      .coal_us = PERF_COAL_DEFAULT,
			      .timestamps = true,
			      .tso = true,
			      .pin = true};
	const char *sweep = NULL, *svg = NULL;
	unsigned threads = 0, conns = 0;
	enum {
		O_MTU = 256,
		O_SIM,
		O_IRQ,
		O_IRQ_SPIN,
		O_COAL,
		O_NOTS,
		O_NOTSO,
		O_FILE,
		O_VERIFY,
		O_SWEEP,
		O_SVG,
		O_JSON,
		O_PCAP,
		O_NOPIN,
		O_STATS,
		O_RELAX,
		O_COPY,
		O_CONNS
	};
	static const struct option opts[] = {{"test", 1, 0, 't'},
					     {"length", 1, 0, 'l'},
					     {"msg-size", 1, 0, 'm'},
					     {"rr-size", 1, 0, 'r'},
					     {"burst", 1, 0, 'b'},
					     {"threads", 1, 0, 'T'},
					     {"conns", 1, 0, O_CONNS},
					     {"quiet", 0, 0, 'q'},
					     {"mtu", 1, 0, O_MTU},
					     {"sim", 1, 0, O_SIM},
					     {"irq", 0, 0, O_IRQ},
					     {"irq-spin", 1, 0, O_IRQ_SPIN},
					     {"coal", 1, 0, O_COAL},
					     {"no-timestamps", 0, 0, O_NOTS},
					     {"no-tso", 0, 0, O_NOTSO},
					     {"file", 1, 0, O_FILE},
					     {"verify", 0, 0, O_VERIFY},
					     {"sweep", 2, 0, O_SWEEP},
					     {"svg", 1, 0, O_SVG},
					     {"json", 0, 0, O_JSON},
					     {"pcap", 1, 0, O_PCAP},
					     {"no-pin", 0, 0, O_NOPIN},
					     {"stats", 0, 0, O_STATS},
					     {"relax", 0, 0, O_RELAX},
					     {"copy", 0, 0, O_COPY},
					     {"help", 0, 0, 'h'},
					     {0, 0, 0, 0}};
	for (int c; (c = getopt_long(argc, argv, "t:l:m:r:b:T:qh", opts, NULL)) != -1;) {
		switch (c) {
		case 't':
			if (parse_test(optarg, &o.test) < 0) {
				fprintf(stderr, "myrio-perf: unknown test '%s'\n", optarg);
				return 2;
			}
			break;
		case 'l':
			o.seconds = strtod(optarg, NULL);
			break;
		case 'm':
			o.msg_size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r': {
			char *end;
			o.req_size = (uint32_t)strtoul(optarg, &end, 0);
			o.resp_size =
			    *end == ',' ? (uint32_t)strtoul(end + 1, NULL, 0) : o.req_size;
			break;
		}
		case 'b':
			o.burst = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'T':
			threads = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case O_CONNS:
			conns = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'q':
			o.quiet = true;
			break;
		case O_MTU:
			o.mtu = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_SIM:
			o.sim_spec = optarg;
			break;
		case O_IRQ:
			o.irq = true;
			break;
		case O_IRQ_SPIN:
			o.irq_spin = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_COAL:
			o.coal_us = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_NOTS:
			o.timestamps = false;
			break;
		case O_NOTSO:
			o.tso = false;
			break;
		case O_FILE:
			o.file = optarg;
			break;
		case O_VERIFY:
			o.verify = true;
			break;
		case O_SWEEP:
			sweep = optarg ? optarg
				       : "64,128,256,512,768,1024,1280,1472,2048,"
					 "3000,4000,6000,8972";
			break;
		case O_SVG:
			svg = optarg;
			break;
		case O_JSON:
			o.json = true;
			break;
		case O_PCAP:
			o.pcap = optarg;
			break;
		case O_NOPIN:
			o.pin = false;
			break;
		case O_RELAX:
			o.relax = true;
			break;
		case O_COPY:
			o.copy = true;
			break;
		case O_STATS:
			o.stats = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 2 == argc) {
		o.dev_a = argv[optind];
		o.dev_b = argv[optind + 1];
	} else if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (o.mtu < 576 || o.mtu > 9000 || !(o.seconds > 0)) {
		fprintf(stderr, "myrio-perf: MTU must be 576..9000 and the length positive\n");
		return 2;
	}
	if (o.copy && (o.test != TCP_STREAM || o.msg_size > COPY_MAX)) {
		fprintf(stderr, "myrio-perf: --copy is for TCP_STREAM, messages up to %u bytes\n",
			COPY_MAX);
		return 2;
	}
	if (o.test == TCP_RR || o.test == UDP_RR) {
		o.req_size = o.req_size ? o.req_size : 1;
		o.resp_size = o.resp_size ? o.resp_size : 1;
	}
	if (sweep)
		return perf_sweep(&o, sweep, svg) < 0;
	if (threads > 16 || conns > 64 || (conns && !threads)) {
		fprintf(stderr, "myrio-perf: -T takes 1..16 threads, --conns 1..64 (with -T)\n");
		return 2;
	}

	static struct perf pf;
	pf.o = o;
	pf.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (threads) {
		int rc = perf_threads(&pf, threads, conns ? conns : o.test == TCP_RR ? 1 : 4);
		if (rc < 0)
			fprintf(stderr, "myrio-perf: %s -T %u failed: %s\n", perf_test_name(o.test),
				threads, strerror(-rc));
		return rc < 0;
	}
	int rc = perf_open(&pf);
	if (rc == 0)
		rc = o.test == TCP_RR || o.test == UDP_RR ? perf_rr(&pf) : perf_stream(&pf);
	if (rc == 0 || pf.r.elapsed > 0) {
		if (o.json)
			perf_print_json(&pf, stdout);
		else
			perf_print(&pf, stdout);
	}
	fflush(stdout);
	if (o.stats && pf.a.stack)
		perf_print_stacks(&pf, stderr);
	if (rc < 0)
		fprintf(stderr, "myrio-perf: %s failed: %s\n", perf_test_name(o.test),
			strerror(-rc));
	perf_close(&pf);
	return rc < 0;
}
