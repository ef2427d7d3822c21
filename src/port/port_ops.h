/* What every port back-end implements (think ixy's ixy_device, lwIP's netif). A back-end
 * embeds struct myrio_port first in its own state. */
#ifndef MYRIO_PORT_OPS_H
#define MYRIO_PORT_OPS_H

#include "myrio/port.h"

struct myrio_bus;
struct myrio_capture;

struct myrio_port_ops {
	uint16_t (*rx_burst)(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);
	uint16_t (*tx_burst)(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);
	int (*pool_create)(struct myrio_port *port, uint32_t count, uint32_t buf_len,
			   struct myrio_pool **out);
	int (*link)(struct myrio_port *port);
	int (*info)(struct myrio_port *port, struct myrio_port_info *info);
	int (*stats)(struct myrio_port *port, struct myrio_port_stats *stats);
	int (*irq_fd)(struct myrio_port *port);
	int (*irq_arm)(struct myrio_port *port);
	/* optional: a received buffer did not hold what the NIC reported (myrio_rx_verify) */
	void (*rx_mismatch)(struct myrio_port *port);
	void (*close)(struct myrio_port *port);
};

struct myrio_port {
	const struct myrio_port_ops *ops;
	char device[64];
	struct myrio_capture *capture; /* pcap writer when capture is on, else NULL */
};

/* Back-ends. */
int myrio_myri10ge_open(struct myrio_bus *bus, const struct myrio_port_conf *conf,
			struct myrio_port **out);
int myrio_pair_port_open(const char *device, const struct myrio_port_conf *conf,
			 struct myrio_port **out);

#endif
