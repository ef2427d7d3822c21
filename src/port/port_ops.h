/* SPDX-License-Identifier: BSD-3-Clause */
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
	/* optional: the driver's own counters by name (names fixed for the port's life) and
	 * attributes; each returns how many it has and fills the first n */
	int (*xstats_names)(struct myrio_port *port, struct myrio_xstat_name *names, unsigned n);
	int (*xstats)(struct myrio_port *port, uint64_t *values, unsigned n);
	int (*attrs)(struct myrio_port *port, struct myrio_port_attr *attrs, unsigned n);
	int (*irq_fd)(struct myrio_port *port);
	int (*irq_arm)(struct myrio_port *port);
	/* optional: multicast reception (myrio_port_mc_addr_list, already checked; allmulti) */
	int (*mc_addr_list)(struct myrio_port *port, const uint8_t (*addrs)[6], unsigned n);
	int (*allmulti)(struct myrio_port *port, bool on);
	/* optional: a received buffer did not hold what the NIC reported (myrio_rx_verify) */
	void (*rx_mismatch)(struct myrio_port *port);
	void (*close)(struct myrio_port *port);
	/* optional: queues beyond 0 (port.h); queue is checked against queues() first */
	int (*queues)(struct myrio_port *port);
	uint16_t (*rx_burst_queue)(struct myrio_port *port, uint16_t queue, struct myrio_pkt **pkts,
				   uint16_t n);
	uint16_t (*tx_burst_queue)(struct myrio_port *port, uint16_t queue, struct myrio_pkt **pkts,
				   uint16_t n);
	int (*irq_fd_queue)(struct myrio_port *port, uint16_t queue);
	int (*irq_arm_queue)(struct myrio_port *port, uint16_t queue);
	/* optional: without it, queue 0's are the port's stats */
	int (*queue_stats)(struct myrio_port *port, uint16_t queue, struct myrio_queue_stats *st);
	int (*rss_get)(struct myrio_port *port, struct myrio_rss_conf *conf);
	int (*rss_set)(struct myrio_port *port, const struct myrio_rss_conf *conf);
	int (*rss_flow_queue)(struct myrio_port *port, const uint8_t tuple[12], uint8_t proto,
			      uint32_t *hash);
};

struct myrio_port {
	const struct myrio_port_ops *ops;
	const char *driver;	  /* its row's name in the driver table */
	uint32_t poll_countdown;  /* rx_burst calls until myrio_port_periodic (poll_count) */
	uint64_t publish_last_ns; /* when its counters were last copied */
	int publish_handle;	  /* its counters in the process's segment (publish.h) */
	char device[64];
	struct myrio_capture *capture; /* pcap writer when capture is on, else NULL */
	uint16_t nb_queues;	       /* 1, or what the back-end's queues() says at open */
};

/* The generic layer's periodic work on a port (publishing its counters), which only the
 * thread that polls the port may do. A back-end calls it from its rx_burst every
 * MYRIO_PORT_POLL_CALLS calls or so: from work it does that often anyway (the Myri-10G
 * driver's watchdog countdown) so that the burst pays nothing more, or else through
 * myrio_port_poll_count. */
#define MYRIO_PORT_POLL_CALLS 256u
void myrio_port_periodic(struct myrio_port *port);

static inline void myrio_port_poll_count(struct myrio_port *port)
{
	if (__builtin_expect(--port->poll_countdown == 0, 0))
		myrio_port_periodic(port);
}

struct myrio_pci_id {
	uint16_t vendor, device;
};

/* Back-ends, and the PCI functions each drives (ended by {0, 0}): the driver's own facts,
 * named in its row of the driver table (drivers.c). */
extern const struct myrio_pci_id myrio_myri10ge_pci_ids[];
extern const struct myrio_pci_id myrio_e1000e_pci_ids[];
int myrio_myri10ge_open(struct myrio_bus *bus, const struct myrio_port_conf *conf,
			struct myrio_port **out);
int myrio_pair_port_open(const char *device, const struct myrio_port_conf *conf,
			 struct myrio_port **out);
int myrio_e1000e_open(struct myrio_bus *bus, const struct myrio_port_conf *conf,
		      struct myrio_port **out);

/* A row of the driver table (drivers.c): how a device string or a PCI function finds the
 * back-end that opens it. Adding a driver adds a row; no other driver changes. */
struct myrio_driver {
	const char *name; /* "myri10ge" */
	const char *nic;  /* what it drives, for messages: "Myri-10G" */
	/* A device-string prefix naming a port of this driver's own ("pair:"), opened by
	 * open_device with the whole string; NULL for drivers that run on a bus. */
	const char *prefix;
	int (*open_device)(const char *device, const struct myrio_port_conf *conf,
			   struct myrio_port **out);
	/* The PCI functions it drives, ended by {0, 0}, opened by open_bus on their bus,
	 * which open_bus owns from the call on (it closes the bus when it fails). */
	const struct myrio_pci_id *ids;
	int (*open_bus)(struct myrio_bus *bus, const struct myrio_port_conf *conf,
			struct myrio_port **out);
};

/* A key a driver accepts in myrio_port_conf.driver_args, and where its value goes: one of
 * u32 (a number), flag (0 or 1), str (text, at most str_len - 1 bytes). */
struct myrio_driver_arg {
	const char *key;
	uint32_t *u32;
	bool *flag;
	char *str;
	size_t str_len;
};

/* Parses "key=value,..." into keys (ended by an entry whose key is NULL); an unknown key or
 * a bad value is refused (-EINVAL), logged under who with the keys the driver takes. */
int myrio_driver_args_parse(const char *who, const char *args, const struct myrio_driver_arg *keys);

/* The driver of a PCI function, or NULL when no driver claims its IDs. */
const struct myrio_driver *myrio_driver_for_pci(uint16_t vendor, uint16_t device);
/* Whether some driver takes these IDs (a myrio_pci_claim_fn); logs the refusal of the
 * function called name. */
bool myrio_driver_claims(const char *name, uint16_t vendor, uint16_t device);
/* The driver whose prefix starts device, or NULL (the string then names a bus). */
const struct myrio_driver *myrio_driver_for_prefix(const char *device);
/* Reads the function's IDs from its config space and opens it with the driver that claims
 * them; refuses (-ENODEV, logged) a function no driver claims. Owns the bus from the call
 * on. */
int myrio_port_open_bus(struct myrio_bus *bus, const struct myrio_port_conf *conf,
			struct myrio_port **out);

#endif
