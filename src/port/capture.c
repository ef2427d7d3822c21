/* Packet capture of a port's traffic into a pcap file (readable by tcpdump, tshark and
 * Wireshark), written with libpcap's own writer. Off by default; one branch in the burst
 * calls when off. */
#include "port/capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <sys/time.h>

#include "port/port_ops.h"
#include "util/log.h"

struct myrio_capture {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	uint64_t frames;
};

int myrio_port_capture_start(struct myrio_port *port, const char *path)
{
	if (port->capture)
		return -EBUSY;
	struct myrio_capture *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dead = pcap_open_dead(DLT_EN10MB, 65535);
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
	free(c);
}

void myrio_capture_write(struct myrio_capture *c, struct myrio_pkt *const *pkts, uint16_t n)
{
	struct pcap_pkthdr h;
	gettimeofday(&h.ts, NULL);
	for (uint16_t i = 0; i < n; i++) {
		h.caplen = h.len = pkts[i]->len;
		pcap_dump((u_char *)c->dumper, &h, myrio_pkt_data(pkts[i]));
	}
	c->frames += n;
}
