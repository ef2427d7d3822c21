/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP_STREAM message-size sweep: one short run per size, a table, JSON lines, and an SVG
 * plot of received throughput (and the link's ceiling) against message size. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"

#define MAX_POINTS 64

struct point {
	uint32_t size;
	double recv_mbps, send_mbps, pps;
};

/* Goodput a link of bps carries with size-byte UDP payloads: 8 preamble + 14 Ethernet +
 * 20 IP + 8 UDP + 4 FCS + 12 gap bytes per frame, frames at least 84 bytes on the wire. */
static double ceiling_mbps(uint64_t bps, uint32_t size)
{
	double wire = size + 66.0;
	if (wire < 84)
		wire = 84;
	return bps ? bps / 1e6 * size / wire : 0;
}

static void svg_write(FILE *f, const struct point *pt, unsigned n, uint64_t link_bps,
		      const char *title)
{
	const double W = 720, H = 440, L = 70, R = 20, T = 40, B = 60;
	double xmax = pt[n - 1].size, ymax = 0;
	for (unsigned i = 0; i < n; i++) {
		if (pt[i].recv_mbps > ymax)
			ymax = pt[i].recv_mbps;
		if (ceiling_mbps(link_bps, pt[i].size) > ymax)
			ymax = ceiling_mbps(link_bps, pt[i].size);
	}
	double step = 1000; /* y grid: 1, 2, 5 x 10^k Mb/s, about 5 lines */
	while (ymax / step > 8)
		step *= ymax / step > 20 ? 5 : 2;
	while (ymax / step < 3 && step > 1)
		step /= 2;
	ymax = step * (double)(long)(ymax / step + 1);
#define X(v) (L + (W - L - R) * (v) / xmax)
#define Y(v) (H - B - (H - T - B) * (v) / ymax)
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
		W, H, W / 2, title);
	for (double y = 0; y <= ymax + 1e-9; y += step)
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
			L, Y(y), W - R, Y(y), L - 6, Y(y) + 4, y);
	for (unsigned i = 0; i < n; i++)
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
			"font-size=\"10\">%u</text>\n",
			X(pt[i].size), H - B + 16, pt[i].size);
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">UDP message size (bytes)"
		"</text>\n<text transform=\"translate(18,%.1f) rotate(-90)\" "
		"text-anchor=\"middle\">received throughput (10^6 bits/s)</text>\n",
		L, H - B, W - R, H - B, L, T, L, H - B, (L + W - R) / 2, H - 18, (T + H - B) / 2);
	if (link_bps) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"#999\" stroke-dasharray=\"6,4\" "
			   "points=\"");
		for (unsigned i = 0; i < n; i++)
			fprintf(f, "%.1f,%.1f ", X(pt[i].size),
				Y(ceiling_mbps(link_bps, pt[i].size)));
		fprintf(f,
			"\"/>\n<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\" text-anchor=\"end\">"
			"link ceiling</text>\n",
			W - R, Y(ceiling_mbps(link_bps, pt[n - 1].size)) - 6);
	}
	fprintf(f, "<polyline fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%.1f,%.1f ", X(pt[i].size), Y(pt[i].recv_mbps));
	fprintf(f, "\"/>\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(f,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#1565c0\">"
			"<title>%u bytes: %.0f Mb/s, %.0f datagrams/s</title></circle>\n",
			X(pt[i].size), Y(pt[i].recv_mbps), pt[i].size, pt[i].recv_mbps, pt[i].pps);
	fprintf(f, "</svg>\n");
#undef X
#undef Y
}

int perf_sweep(struct perf_opts *o, const char *sizes, const char *svg_path)
{
	struct point pt[MAX_POINTS];
	unsigned n = 0;
	char *list = strdup(sizes), *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok && n < MAX_POINTS;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t size = (uint32_t)strtoul(tok, NULL, 0);
		if (size < 8 || size > o->mtu - 28)
			continue;
		pt[n++].size = size;
	}
	free(list);
	if (!n) {
		fprintf(stderr, "myrio-perf: no usable message size in '%s'\n", sizes);
		return -EINVAL;
	}
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (!o->dev_a && myrio_sim_conf_parse(&sc, o->sim_spec) < 0)
		return -EINVAL;
	if (!o->json)
		printf("UDP_STREAM sweep, MTU %u, %.1f s per size\n%8s %12s %12s %12s\n", o->mtu,
		       o->seconds, "size", "send Mb/s", "recv Mb/s", "recv pps");
	int rc = 0;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		struct perf pf = {.o = *o};
		pf.o.test = UDP_STREAM;
		pf.o.msg_size = pt[i].size;
		pf.o.quiet = true;
		pf.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
		if ((rc = perf_open(&pf)) == 0)
			rc = perf_stream(&pf);
		perf_close(&pf);
		if (rc < 0)
			break;
		double e = pf.r.elapsed;
		pt[i].send_mbps = pf.r.bytes_sent * 8 / e / 1e6;
		pt[i].recv_mbps = pf.r.bytes_recv * 8 / e / 1e6;
		pt[i].pps = pf.r.msgs_recv / e;
		if (o->json)
			perf_print_json(&pf, stdout);
		else
			printf("%8u %12.1f %12.1f %12.0f\n", pt[i].size, pt[i].send_mbps,
			       pt[i].recv_mbps, pt[i].pps);
		fflush(stdout);
	}
	if (rc == 0 && svg_path) {
		FILE *f = fopen(svg_path, "w");
		if (!f) {
			fprintf(stderr, "myrio-perf: cannot write %s\n", svg_path);
			return -errno;
		}
		char title[128];
		snprintf(title, sizeof(title), "libmyrio UDP_STREAM, MTU %u, %s", o->mtu,
			 o->dev_a ? o->dev_a : o->sim_spec);
		svg_write(f, pt, n, o->dev_a ? 0 : sc.link_bps, title);
		fclose(f);
		if (!o->json)
			printf("plot written to %s\n", svg_path);
	}
	return rc;
}
