/* Packet capture of a port's traffic into a pcap file (readable by tcpdump, tshark and
 * Wireshark), written with libpcap's own writer. Off by default; one branch in the burst
 * calls when off. */
#include "port/capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "port/port_ops.h"
#include "util/log.h"

struct myrio_capture {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	uint64_t frames;
	uint8_t *gather; /* a TSO request's chain as one frame, allocated on first use */
};

#define CAPTURE_SNAPLEN 262144 /* libpcap's maximum; a TSO request is up to ~64 KiB */

int myrio_port_capture_start(struct myrio_port *port, const char *path)
{
	if (port->capture)
		return -EBUSY;
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
	free(c->gather);
	free(c);
}

void myrio_capture_write(struct myrio_capture *c, struct myrio_pkt *const *pkts, uint16_t n)
{
	struct pcap_pkthdr h;
	gettimeofday(&h.ts, NULL);
	for (uint16_t i = 0; i < n; i++) {
		const struct myrio_pkt *p = pkts[i];
		if (p->ol_flags & MYRIO_PKT_TX_TSO) {
			/* the request as the NIC reads it: one frame, as tcpdump shows a TSO
			 * super-frame on Linux */
			if (!c->gather && !(c->gather = malloc(CAPTURE_SNAPLEN)))
				continue;
			uint32_t at = 0;
			const struct myrio_pkt *q = p;
			for (unsigned k = 0; k < p->tso_npkts && q; k++, q = q->next) {
				uint32_t len = q->len < CAPTURE_SNAPLEN - at ? q->len
									 : CAPTURE_SNAPLEN - at;
				memcpy(c->gather + at, myrio_pkt_data(q), len);
				at += len;
			}
			h.caplen = h.len = at;
			pcap_dump((u_char *)c->dumper, &h, c->gather);
			continue;
		}
		h.caplen = h.len = p->len;
		pcap_dump((u_char *)c->dumper, &h, myrio_pkt_data(p));
	}
	c->frames += n;
}
