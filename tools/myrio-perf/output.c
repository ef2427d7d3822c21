/* SPDX-License-Identifier: BSD-3-Clause */
/* Results in netperf's columns, and as JSON.
 *
 * Utilization is a percentage of all the machine's CPUs, as netperf reports it; service
 * demand is CPU microseconds per KB (2^10 bytes) of payload, or per transaction for RR.
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const char *const names[] = {"TCP_STREAM", "TCP_SENDFILE", "UDP_STREAM", "TCP_RR", "UDP_RR"};

const char *perf_test_name(enum perf_test t)
{
	return names[t];
}

static double util(const struct perf *pf, double cpu)
{
	return pf->r.elapsed > 0 ? 100.0 * cpu / (pf->r.elapsed * pf->ncpus) : 0;
}

/* CPU microseconds per KB of payload. */
static double sdemand(double cpu, uint64_t bytes)
{
	return bytes ? cpu * 1e6 / (bytes / 1024.0) : 0;
}

static double mbps(const struct perf *pf, uint64_t bytes)
{
	return pf->r.elapsed > 0 ? bytes * 8 / pf->r.elapsed / 1e6 : 0;
}

static void header(const struct perf *pf, FILE *f)
{
	const struct perf_opts *o = &pf->o;
	fprintf(f, "MYRIO-PERF %s %s %s -> %s, MTU %u%s, CPU: %s, %d CPUs", perf_test_name(o->test),
		o->dev_a ? "" : "in-process model", o->dev_a ? o->dev_a : "sim0",
		o->dev_b ? o->dev_b : "sim1", o->mtu,
		o->test == UDP_STREAM || o->test == UDP_RR ? ""
		: o->timestamps				   ? ", timestamps on"
							   : ", timestamps off",
		pf->r.cpu_method, pf->ncpus);
	/* service demand depends on it: Linux myri10ge's default is 75 us */
	if (o->irq)
		fprintf(f, ", interrupt coalescing %u us", pf->coal_us);
	fputc('\n', f);
}

void perf_print(const struct perf *pf, FILE *f)
{
	const struct perf_result *r = &pf->r;
	header(pf, f);
	switch (pf->o.test) {
	case TCP_STREAM:
	case TCP_SENDFILE:
		fprintf(f, "Recv   Send    Send                          Utilization       "
			   "Service Demand\n"
			   "Socket Socket  Message  Elapsed              Send     Recv     Send"
			   "    Recv\n"
			   "Size   Size    Size     Time     Throughput  local    remote   local"
			   "   remote\n"
			   "bytes  bytes   bytes    secs.    10^6bits/s  %% S      %% S      "
			   "us/KB   us/KB\n\n");
		fprintf(f, "%6u %6u %6llu   %7.2f %11.2f  %6.2f   %6.2f   %6.3f  %6.3f\n",
			r->rcv_sock, r->snd_sock,
			(unsigned long long)(r->msgs_sent ? r->bytes_sent / r->msgs_sent : 0),
			r->elapsed, mbps(pf, r->bytes_recv), util(pf, r->cpu_local),
			util(pf, r->cpu_remote), sdemand(r->cpu_local, r->bytes_recv),
			sdemand(r->cpu_remote, r->bytes_recv));
		break;
	case UDP_STREAM:
		fprintf(f, "Socket  Message  Elapsed      Messages                   CPU      "
			   "Service\n"
			   "Size    Size     Time         Okay Errors   Throughput   Util     "
			   "Demand\n"
			   "bytes   bytes    secs            #      #   10^6bits/sec %% SS     "
			   "us/KB\n\n");
		uint64_t size = r->msgs_sent ? r->bytes_sent / r->msgs_sent : 0;
		fprintf(f, "%6u  %6llu   %6.2f  %10llu %6llu   %10.2f   %6.2f   %6.3f\n",
			r->snd_sock, (unsigned long long)size, r->elapsed,
			(unsigned long long)r->msgs_sent, (unsigned long long)r->send_errors,
			mbps(pf, r->bytes_sent), util(pf, r->cpu_local),
			sdemand(r->cpu_local, r->bytes_sent));
		fprintf(f, "%6u           %6.2f  %10llu          %10.2f   %6.2f   %6.3f\n",
			r->rcv_sock, r->elapsed, (unsigned long long)r->msgs_recv,
			mbps(pf, r->bytes_recv), util(pf, r->cpu_remote),
			sdemand(r->cpu_remote, r->bytes_recv));
		break;
	case TCP_RR:
	case UDP_RR: {
		double tps = r->elapsed > 0 ? r->trans / r->elapsed : 0;
		double per = r->trans ? 1e6 / (double)r->trans : 0;
		fprintf(f, "Local /Remote\n"
			   "Socket Size   Request Resp.  Elapsed Trans.    CPU    CPU    S.dem   "
			   "S.dem\n"
			   "Send   Recv   Size    Size   Time    Rate      local  remote local   "
			   "remote\n"
			   "bytes  bytes  bytes   bytes  secs.   per sec   %% S    %% S    us/Tr   "
			   "us/Tr\n\n");
		fprintf(f, "%-6u %-6u %-7u %-6u %-7.2f %-9.2f %-6.2f %-6.2f %-7.3f %-7.3f\n",
			r->snd_sock, r->rcv_sock, pf->o.req_size, pf->o.resp_size, r->elapsed, tps,
			util(pf, r->cpu_local), util(pf, r->cpu_remote), r->cpu_local * per,
			r->cpu_remote * per);
		break;
	}
	}
	if (r->bad || r->retransmits || r->drops_a || r->drops_b ||
	    (pf->o.test == UDP_RR && r->send_errors))
		fprintf(f,
			"note: %llu failed verification, %llu retransmits, %llu resent, "
			"frames dropped in the host: %llu local, %llu remote\n",
			(unsigned long long)r->bad, (unsigned long long)r->retransmits,
			(unsigned long long)(pf->o.test == UDP_RR ? r->send_errors : 0),
			(unsigned long long)r->drops_a, (unsigned long long)r->drops_b);
}

void perf_print_json(const struct perf *pf, FILE *f)
{
	const struct perf_result *r = &pf->r;
	const struct perf_opts *o = &pf->o;
	double tps = r->elapsed > 0 ? r->trans / r->elapsed : 0;
	fprintf(f,
		"{\"test\": \"%s\", \"device_a\": \"%s\", \"device_b\": \"%s\", \"model\": \"%s\", "
		"\"mtu\": %u, \"timestamps\": %s, \"cpu_mode\": \"%s\", \"cpus\": %d, "
		"\"elapsed_s\": %.4f, \"recv_socket_size\": %u, \"send_socket_size\": %u, "
		"\"message_size\": %llu, \"request_size\": %u, \"response_size\": %u, "
		"\"burst\": %u, \"bytes_sent\": %llu, \"bytes_received\": %llu, "
		"\"messages_sent\": %llu, \"messages_received\": %llu, \"send_errors\": %llu, "
		"\"throughput_mbps\": %.3f, \"send_mbps\": %.3f, \"recv_mbps\": %.3f, "
		"\"recv_pps\": %.1f, \"transactions\": %llu, \"trans_per_s\": %.2f, "
		"\"util_local_pct\": %.3f, \"util_remote_pct\": %.3f, "
		"\"cpu_local_s\": %.6f, \"cpu_remote_s\": %.6f, "
		"\"sd_local_us_per_kb\": %.4f, \"sd_remote_us_per_kb\": %.4f, "
		"\"sd_local_us_per_tr\": %.4f, \"sd_remote_us_per_tr\": %.4f, "
		"\"retransmits\": %llu, \"failed_verification\": %llu, \"verified\": %s, "
		"\"irq_sleeps\": %llu, \"irq_wakeups\": %llu, \"drops_local\": %llu, "
		"\"drops_remote\": %llu, \"cpu_model_s\": %.6f, "
		"\"cpu_model_method\": \"pthread_getcpuclockid (model thread)\", "
		"\"cpu_process_s\": %.6f, \"cpu_process_method\": \"getrusage RUSAGE_SELF\", "
		"\"coalescing_us\": %u}\n",
		perf_test_name(o->test), o->dev_a ? o->dev_a : "sim:sim0",
		o->dev_b ? o->dev_b : "sim:sim1", o->dev_a ? "" : o->sim_spec, o->mtu,
		o->timestamps ? "true" : "false", r->cpu_method, pf->ncpus, r->elapsed, r->rcv_sock,
		r->snd_sock, (unsigned long long)(r->msgs_sent ? r->bytes_sent / r->msgs_sent : 0),
		o->req_size, o->resp_size, o->burst, (unsigned long long)r->bytes_sent,
		(unsigned long long)r->bytes_recv, (unsigned long long)r->msgs_sent,
		(unsigned long long)r->msgs_recv, (unsigned long long)r->send_errors,
		mbps(pf, r->bytes_recv), mbps(pf, r->bytes_sent), mbps(pf, r->bytes_recv),
		r->elapsed > 0 ? r->msgs_recv / r->elapsed : 0, (unsigned long long)r->trans, tps,
		util(pf, r->cpu_local), util(pf, r->cpu_remote), r->cpu_local, r->cpu_remote,
		sdemand(r->cpu_local, o->test == UDP_STREAM ? r->bytes_sent : r->bytes_recv),
		sdemand(r->cpu_remote, r->bytes_recv), r->trans ? r->cpu_local * 1e6 / r->trans : 0,
		r->trans ? r->cpu_remote * 1e6 / r->trans : 0, (unsigned long long)r->retransmits,
		(unsigned long long)r->bad, o->verify && !r->bad ? "true" : "false",
		(unsigned long long)r->sleeps, (unsigned long long)r->wakeups,
		(unsigned long long)r->drops_a, (unsigned long long)r->drops_b, r->cpu_model,
		r->cpu_process, pf->coal_us);
}

/* Both stacks' counters that are not zero, side by side in name order of side A. */
void perf_print_stacks(const struct perf *pf, FILE *f)
{
	const struct myrio_stack *st[2] = {pf->a.stack, pf->b.stack};
	char *text[2];
	for (int i = 0; i < 2; i++) {
		int n = myrio_stack_stats_format(st[i], NULL, 0);
		text[i] = calloc(1, n > 0 ? (size_t)n + 1 : 1);
		if (text[i] && n > 0)
			myrio_stack_stats_format(st[i], text[i], (size_t)n + 1);
	}
	fprintf(f, "%-32s %16s %16s\n", "stack counter", "local (A)", "remote (B)");
	char *save = NULL;
	for (char *line = text[0] ? strtok_r(text[0], "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long va = 0, vb = 0;
		if (sscanf(line, "%63s %llu", name, &va) != 2)
			continue;
		const char *pb = text[1] ? strstr(text[1], name) : NULL;
		while (pb && ((pb != text[1] && pb[-1] != '\n') || pb[strlen(name)] != ' '))
			pb = strstr(pb + 1, name);
		if (pb)
			sscanf(pb + strlen(name), "%llu", &vb);
		if (va || vb)
			fprintf(f, "%-32s %16llu %16llu\n", name, va, vb);
	}
	free(text[0]);
	free(text[1]);
	struct myrio_port_stats ps[2];
	myrio_port_stats(pf->a.port, &ps[0]);
	myrio_port_stats(pf->b.port, &ps[1]);
#define PORT_STAT(x)                                                                               \
	if (ps[0].x || ps[1].x)                                                                    \
		fprintf(f, "%-32s %16llu %16llu\n", "port_" #x, (unsigned long long)ps[0].x,       \
			(unsigned long long)ps[1].x);
	PORT_STAT(rx_packets)
	PORT_STAT(tx_packets)
	PORT_STAT(tx_tso_chains)
	PORT_STAT(rx_bad_completion)
	PORT_STAT(rx_refill_failed)
	PORT_STAT(tx_ring_full) PORT_STAT(tx_dropped_bad) PORT_STAT(rx_missed) PORT_STAT(rx_errors)
#undef PORT_STAT
}
