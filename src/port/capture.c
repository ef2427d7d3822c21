/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet capture of a port's traffic into a pcap file (readable by tcpdump, tshark and
 * Wireshark), written with libpcap's own writer. Off by default; one branch in the burst
 * calls when off.
 *
 * What is recorded is the wire: received frames as the NIC wrote them, and sent frames
 * only once the driver took them, as the NIC puts them on the cable: the checksum it
 * fills in (§5.5) filled in, a TSO request (§5.6) cut into its segments. A frame the
 * driver refused is not recorded and never read. */
#include "port/capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "port/port_ops.h"
#include "util/csum.h"
#include "util/log.h"
#include "util/tso_segment.h"

#define CAPTURE_SNAPLEN 262144 /* libpcap's maximum; a TSO request is up to ~64 KiB */
#define CAPTURE_CHUNK 64u      /* packets per back-end call while capturing */

struct myrio_capture {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	uint64_t frames;
	uint8_t *frame; /* a sent frame as it leaves: 2 x snaplen (request, then a segment),
			 * allocated on first use */
};

int myrio_port_capture_start(struct myrio_port *port, const char *path)
{
	if (port->capture)
		return -EBUSY;
	if (port->nb_queues > 1) {
		/* one file written by one thread: the queues' threads share nothing, no lock */
		log_err("%s: capture on a port of %u queues is not supported: a pcap file has one "
			"writer, and each queue has its own thread; capture a port of one queue",
			port->device, port->nb_queues);
		return -ENOTSUP;
	}
	struct myrio_capture *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dead = pcap_open_dead(DLT_EN10MB, CAPTURE_SNAPLEN);
	if (!c->dead) {
		free(c);
		return -ENOMEM;
	}
	c->dumper = pcap_dump_open(c->dead, path);
	if (!c->dumper) {
		log_err("%s: cannot write capture file %s: %s", port->device, path,
			pcap_geterr(c->dead));
		pcap_close(c->dead);
		free(c);
		return -EIO;
	}
	port->capture = c;
	return 0;
}

void myrio_port_capture_stop(struct myrio_port *port)
{
	struct myrio_capture *c = port->capture;
	if (!c)
		return;
	port->capture = NULL;
	pcap_dump_close(c->dumper);
	pcap_close(c->dead);
	free(c->frame);
	free(c);
}

/* The bytes of p's frame that lie inside its buffer. */
static uint32_t frame_len(const struct myrio_pkt *p)
{
	if (p->data_off > p->buf_len)
		return 0;
	uint32_t room = p->buf_len - p->data_off;
	return p->len < room ? p->len : room;
}

static void dump(struct myrio_capture *c, const struct timeval *ts, const uint8_t *f, uint32_t len)
{
	struct pcap_pkthdr h = {.ts = *ts, .caplen = len, .len = len};
	pcap_dump((u_char *)c->dumper, &h, f);
	c->frames++;
}

void myrio_capture_rx(struct myrio_capture *c, struct myrio_pkt *const *pkts, uint16_t n)
{
	struct timeval ts;
	gettimeofday(&ts, NULL);
	for (uint16_t i = 0; i < n; i++)
		dump(c, &ts, myrio_pkt_data(pkts[i]), frame_len(pkts[i]));
}

/* A TSO request in f (len bytes): its segments, as the NIC cuts them. False if its
 * headers are not what the driver would have encoded. */
static bool dump_segments(struct myrio_capture *c, const struct timeval *ts,
			  const struct myrio_pkt *p, const uint8_t *f, uint32_t len)
{
	uint32_t l3 = 14;
	uint16_t type = get_be16(f + 12);
	if (type == 0x8100 || type == 0x88a8) {
		l3 += 4;
		type = get_be16(f + 16);
	}
	struct tso_layout t = {.l3 = l3,
			       .l4 = p->csum_start,
			       .hlen = p->tso_hlen,
			       .mss = p->tso_mss,
			       .v6 = type == 0x86DD};
	if (t.mss == 0 || t.hlen > len || t.l4 + 20 > t.hlen || t.l4 < l3 + (t.v6 ? 40 : 20))
		return false;
	uint32_t payload = len - t.hlen;
	t.segs = payload ? (payload + t.mss - 1) / t.mss : 1;
	t.seq0 = get_be32(f + t.l4 + 4);
	t.id0 = t.v6 ? 0 : get_be16(f + l3 + 4);
	t.flags0 = f[t.l4 + 13];
	tso_layout_sums(f, &t);
	uint8_t *seg = c->frame + CAPTURE_SNAPLEN;
	for (uint32_t k = 0; k < t.segs; k++) {
		uint32_t off = k * t.mss, plen = payload - off < t.mss ? payload - off : t.mss;
		memcpy(seg, f, t.hlen);
		memcpy(seg + t.hlen, f + t.hlen + off, plen);
		tso_segment_headers(seg, &t, k, plen);
		uint32_t tcp_len = t.hlen - t.l4 + plen;
		uint64_t s = tso_pseudo_sum(&t, tcp_len) + csum_add(0, seg + t.l4, tcp_len);
		put_be16(seg + t.l4 + 16, csum_finish(s));
		dump(c, ts, seg, t.hlen + plen);
	}
	return true;
}

/* A frame the driver took, recorded as it leaves the NIC. */
static void capture_sent(struct myrio_capture *c, const struct timeval *ts,
			 const struct myrio_pkt *p)
{
	if (!(p->ol_flags & (MYRIO_PKT_TX_TSO | MYRIO_PKT_TX_CSUM))) {
		dump(c, ts, myrio_pkt_data(p), frame_len(p));
		return;
	}
	if (!c->frame && !(c->frame = malloc(2 * (size_t)CAPTURE_SNAPLEN)))
		return;
	uint8_t *f = c->frame;
	uint32_t len = 0;
	unsigned npkts = p->ol_flags & MYRIO_PKT_TX_TSO ? p->tso_npkts : 1;
	const struct myrio_pkt *q = p;
	for (unsigned k = 0; k < npkts && q; k++, q = q->next) { /* the chain, gathered */
		uint32_t take = frame_len(q);
		if (take > CAPTURE_SNAPLEN - len)
			take = CAPTURE_SNAPLEN - len;
		memcpy(f + len, myrio_pkt_data(q), take);
		len += take;
	}
	if ((p->ol_flags & MYRIO_PKT_TX_TSO) && len > 14 && dump_segments(c, ts, p, f, len))
		return;
	if (p->ol_flags & MYRIO_PKT_TX_CSUM)
		csum_tx_fill(f, len, p->csum_start, p->csum_field); /* the NIC's (§5.5) */
	dump(c, ts, f, len);
}

/* The driver frees a request it refuses (counted, but taken) and keeps one it sends until
 * a later call reports it done: a reference held across the call tells the two apart. */
uint16_t myrio_capture_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct myrio_capture *c = port->capture;
	struct timeval ts;
	gettimeofday(&ts, NULL);
	uint16_t sent = 0;
	if (n == 0)
		return port->ops->tx_burst(port, pkts, 0); /* reaping completions only */
	while (sent < n) {
		uint16_t k =
		    (uint16_t)(n - sent < (int)CAPTURE_CHUNK ? n - sent : (int)CAPTURE_CHUNK);
		uint16_t held[CAPTURE_CHUNK];
		for (uint16_t i = 0; i < k; i++) {
			myrio_pkt_ref(pkts[sent + i]);
			held[i] = pkts[sent + i]->refcnt;
		}
		uint16_t took = port->ops->tx_burst(port, pkts + sent, k);
		for (uint16_t i = 0; i < k; i++) {
			struct myrio_pkt *p = pkts[sent + i];
			if (i < took && p->refcnt == held[i])
				capture_sent(c, &ts, p);
			myrio_pkt_free(p);
		}
		sent += took;
		if (took < k)
			break;
	}
	return sent;
}
