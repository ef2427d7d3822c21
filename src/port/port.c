/* SPDX-License-Identifier: BSD-3-Clause */
/* The public port API: opening through the driver table (drivers.c) and thin calls into
 * the back-end. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus/bus.h"
#include "myrio/publish.h"
#include "port/capture.h"
#include "port/port_ops.h"
#include "port/publish_tick.h"
#include "util/log.h"

void myrio_port_conf_init(struct myrio_port_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->mtu = 1500;
	conf->adopt_firmware = true;
}

/* The port as a source of published counters: every counter by name. */
static int port_counters(void *arg, struct myrio_xstat_name *names, uint64_t *values, unsigned n)
{
	struct myrio_port *port = arg;
	return values ? myrio_port_xstats(port, values, n)
		      : myrio_port_xstats_names(port, names, n);
}

int myrio_port_open(struct myrio_port **out, const char *device, const struct myrio_port_conf *conf)
{
	struct myrio_port_conf defaults;
	*out = NULL;
	if (!device || !*device) {
		log_err("no device given: name a model NIC (sim:sim0, simd:nic0) or a PCI address "
			"(0000:03:00.0)");
		return -EINVAL;
	}
	if (!conf) {
		myrio_port_conf_init(&defaults);
		conf = &defaults;
	}
	int rc;
	struct myrio_port *port = NULL;
	const struct myrio_driver *d = myrio_driver_for_prefix(device);
	if (d) {
		rc = d->open_device(device, conf, &port);
		if (rc == 0)
			port->driver = d->name;
	} else {
		/* Any other string names a bus; the function's PCI IDs choose the driver. */
		struct myrio_bus *bus;
		rc = myrio_bus_open(device, conf->sim, myrio_driver_claims, &bus);
		if (rc < 0)
			return rc;
		rc = myrio_port_open_bus(bus, conf, &port); /* owns the bus from here on */
	}
	if (rc < 0)
		return rc;
	snprintf(port->device, sizeof(port->device), "%s", device);
	port->nb_queues = port->ops->queues ? (uint16_t)port->ops->queues(port) : 1;
	char group[80];
	snprintf(group, sizeof(group), "port %s", device);
	port->poll_countdown = MYRIO_PORT_POLL_CALLS;
	port->publish_last_ns = 0;
	port->publish_handle = myrio_publish_add_port(port, group, port_counters, port);
	*out = port;
	return 0;
}

void myrio_port_close(struct myrio_port *port)
{
	if (!port)
		return;
	myrio_port_capture_stop(port);
	myrio_publish_remove(port->publish_handle);
	port->ops->close(port);
}

void myrio_port_periodic(struct myrio_port *port)
{
	port->poll_countdown = MYRIO_PORT_POLL_CALLS;
	myrio_publish_tick(&port->publish_last_ns, port, 0);
}

uint16_t myrio_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	uint16_t got = port->ops->rx_burst(port, pkts, n);
	if (__builtin_expect(port->capture != NULL, 0) && got)
		myrio_capture_rx(port->capture, pkts, got);
	return got;
}

uint16_t myrio_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	if (__builtin_expect(port->capture != NULL, 0))
		return myrio_capture_tx_burst(port, pkts, n);
	return port->ops->tx_burst(port, pkts, n);
}

int myrio_port_pool_create(struct myrio_port *port, uint32_t count, uint32_t buf_len,
			   struct myrio_pool **out)
{
	return port->ops->pool_create(port, count, buf_len, out);
}

int myrio_port_link(struct myrio_port *port)
{
	return port->ops->link(port);
}

int myrio_port_info(struct myrio_port *port, struct myrio_port_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->device, sizeof(info->device), "%s", port->device);
	if (port->driver)
		snprintf(info->driver, sizeof(info->driver), "%s", port->driver);
	return port->ops->info(port, info);
}

int myrio_port_stats(struct myrio_port *port, struct myrio_port_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	return port->ops->stats(port, stats);
}

/* The generic counters lead the extended list, so that one list shows a port whole. */
#define GENERIC(f)                                                                                 \
	{                                                                                          \
#f, offsetof(struct myrio_port_stats, f),                                          \
		    sizeof(((struct myrio_port_stats *)0)->f)                                      \
	}
static const struct {
	const char *name;
	size_t off, size;
} generic[] = {
    GENERIC(rx_packets),      GENERIC(rx_bytes),	  GENERIC(tx_packets),
    GENERIC(tx_bytes),	      GENERIC(rx_bad_completion), GENERIC(rx_refill_failed),
    GENERIC(tx_ring_full),    GENERIC(tx_dropped_bad),	  GENERIC(tx_tso_chains),
    GENERIC(link_changes),    GENERIC(rx_missed),	  GENERIC(rx_errors),
    GENERIC(watchdog_resets), GENERIC(rx_csum_mismatch),  GENERIC(link_up),
};
#undef GENERIC
#define N_GENERIC (sizeof(generic) / sizeof(generic[0]))

static int driver_xstats(struct myrio_port *port)
{
	return port->ops->xstats_names ? port->ops->xstats_names(port, NULL, 0) : 0;
}

int myrio_port_xstats_names(struct myrio_port *port, struct myrio_xstat_name *names, unsigned n)
{
	for (unsigned i = 0; i < N_GENERIC && i < n; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s", generic[i].name);
	if (n <= N_GENERIC)
		return (int)N_GENERIC + driver_xstats(port);
	int rc = port->ops->xstats_names
		     ? port->ops->xstats_names(port, names + N_GENERIC, n - (unsigned)N_GENERIC)
		     : 0;
	return rc < 0 ? rc : (int)N_GENERIC + rc;
}

int myrio_port_xstats(struct myrio_port *port, uint64_t *values, unsigned n)
{
	struct myrio_port_stats st;
	int rc = myrio_port_stats(port, &st);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < N_GENERIC && i < n; i++) {
		const uint8_t *f = (const uint8_t *)&st + generic[i].off;
		uint32_t v32;
		if (generic[i].size == sizeof(uint64_t)) {
			memcpy(&values[i], f, sizeof(uint64_t));
		} else {
			memcpy(&v32, f, sizeof(v32));
			values[i] = v32;
		}
	}
	if (n <= N_GENERIC)
		return (int)N_GENERIC + driver_xstats(port);
	rc = port->ops->xstats
		 ? port->ops->xstats(port, values + N_GENERIC, n - (unsigned)N_GENERIC)
		 : 0;
	return rc < 0 ? rc : (int)N_GENERIC + rc;
}

int myrio_port_attrs(struct myrio_port *port, struct myrio_port_attr *attrs, unsigned n)
{
	return port->ops->attrs ? port->ops->attrs(port, attrs, n) : 0;
}

int myrio_port_xstat(struct myrio_port *port, const char *name, uint64_t *value)
{
	int n = myrio_port_xstats_names(port, NULL, 0);
	if (n <= 0)
		return n < 0 ? n : -ENOENT;
	struct myrio_xstat_name *names = calloc((size_t)n, sizeof(*names));
	uint64_t *values = calloc((size_t)n, sizeof(*values));
	int rc = names && values ? -ENOENT : -ENOMEM;
	if (rc == -ENOENT && myrio_port_xstats_names(port, names, (unsigned)n) == n &&
	    myrio_port_xstats(port, values, (unsigned)n) == n) {
		for (int i = 0; i < n && rc; i++)
			if (strcmp(names[i].name, name) == 0) {
				*value = values[i];
				rc = 0;
			}
	}
	free(names);
	free(values);
	return rc;
}

int myrio_port_mc_addr_list(struct myrio_port *port, const uint8_t (*addrs)[6], unsigned n)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	if (!port->ops->mc_addr_list) {
		log_err("%s: the %s driver has no multicast filter", port->device,
			port->driver ? port->driver : "port's");
		return -ENOTSUP;
	}
	if (n > MYRIO_MC_ADDR_MAX) {
		log_err("%s: %u multicast addresses, at most %u", port->device, n,
			MYRIO_MC_ADDR_MAX);
		return -E2BIG;
	}
	for (unsigned i = 0; i < n; i++)
		if (!(addrs[i][0] & 1) || !memcmp(addrs[i], bcast, 6)) {
			log_err("%s: %02x:%02x:%02x:%02x:%02x:%02x is not a multicast group",
				port->device, addrs[i][0], addrs[i][1], addrs[i][2], addrs[i][3],
				addrs[i][4], addrs[i][5]);
			return -EINVAL;
		}
	return port->ops->mc_addr_list(port, addrs, n);
}

int myrio_port_allmulti(struct myrio_port *port, bool on)
{
	return port->ops->allmulti ? port->ops->allmulti(port, on) : -ENOTSUP;
}

int myrio_port_irq_fd(struct myrio_port *port)
{
	return port->ops->irq_fd ? port->ops->irq_fd(port) : -ENOTSUP;
}

int myrio_port_irq_arm(struct myrio_port *port)
{
	return port->ops->irq_arm ? port->ops->irq_arm(port) : -ENOTSUP;
}

int myrio_port_tx_drain(struct myrio_port *port, struct myrio_pool *pool, unsigned timeout_ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t end = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + timeout_ms;
	for (;;) {
		myrio_tx_burst(port, NULL, 0); /* reaps send completions */
		if (myrio_pool_free_count(pool) >= pool->count)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 >= end)
			return -ETIMEDOUT;
		struct timespec nap = {0, 100000}; /* the NIC reports completions in batches */
		nanosleep(&nap, NULL);
	}
}

int myrio_port_open_queues(struct myrio_port **out, const char *device,
			   const struct myrio_port_conf *conf, uint16_t queues)
{
	struct myrio_port_conf c;
	if (conf)
		c = *conf;
	else
		myrio_port_conf_init(&c);
	if (queues <= 1)
		return myrio_port_open(out, device, &c);
	char args[512];
	int n = snprintf(args, sizeof(args), "%s%squeues=%u", c.driver_args ? c.driver_args : "",
			 c.driver_args && *c.driver_args ? "," : "", queues);
	if (n < 0 || (size_t)n >= sizeof(args)) {
		log_err("%s: driver arguments too long", device ? device : "?");
		return -EINVAL;
	}
	c.driver_args = args;
	return myrio_port_open(out, device, &c);
}

int myrio_port_queues(struct myrio_port *port)
{
	return port->nb_queues;
}

uint16_t myrio_rx_burst_queue(struct myrio_port *port, uint16_t queue, struct myrio_pkt **pkts,
			      uint16_t n)
{
	if (queue == 0)
		return myrio_rx_burst(port, pkts, n);
	if (__builtin_expect(queue >= port->nb_queues, 0))
		return 0;
	return port->ops->rx_burst_queue(port, queue, pkts, n);
}

uint16_t myrio_tx_burst_queue(struct myrio_port *port, uint16_t queue, struct myrio_pkt **pkts,
			      uint16_t n)
{
	if (queue == 0)
		return myrio_tx_burst(port, pkts, n);
	if (__builtin_expect(queue >= port->nb_queues, 0))
		return 0;
	return port->ops->tx_burst_queue(port, queue, pkts, n);
}

int myrio_port_irq_fd_queue(struct myrio_port *port, uint16_t queue)
{
	if (queue == 0)
		return myrio_port_irq_fd(port);
	if (queue >= port->nb_queues)
		return -EINVAL;
	return port->ops->irq_fd_queue(port, queue);
}

int myrio_port_irq_arm_queue(struct myrio_port *port, uint16_t queue)
{
	if (queue == 0)
		return myrio_port_irq_arm(port);
	if (queue >= port->nb_queues)
		return -EINVAL;
	return port->ops->irq_arm_queue(port, queue);
}

int myrio_port_queue_stats(struct myrio_port *port, uint16_t queue, struct myrio_queue_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (queue >= port->nb_queues)
		return -EINVAL;
	if (port->ops->queue_stats)
		return port->ops->queue_stats(port, queue, stats);
	struct myrio_port_stats st;
	int rc = myrio_port_stats(port, &st);
	*stats = (struct myrio_queue_stats){.rx_packets = st.rx_packets,
					    .rx_bytes = st.rx_bytes,
					    .tx_packets = st.tx_packets,
					    .tx_bytes = st.tx_bytes,
					    .rx_refill_failed = st.rx_refill_failed,
					    .rx_bad_completion = st.rx_bad_completion,
					    .tx_ring_full = st.tx_ring_full,
					    .tx_dropped_bad = st.tx_dropped_bad};
	return rc;
}

int myrio_port_rss_get(struct myrio_port *port, struct myrio_rss_conf *conf)
{
	return port->ops->rss_get ? port->ops->rss_get(port, conf) : -ENOTSUP;
}

int myrio_port_rss_set(struct myrio_port *port, const struct myrio_rss_conf *conf)
{
	if (!port->ops->rss_set)
		return -ENOTSUP;
	if (conf->table_size < 1 || conf->table_size > sizeof(conf->table)) {
		log_err("%s: an RSS table has 1 to 256 entries, not %u", port->device,
			conf->table_size);
		return -EINVAL;
	}
	for (unsigned i = 0; i < conf->table_size; i++)
		if (conf->table[i] >= port->nb_queues) {
			log_err("%s: RSS table entry %u names queue %u of %u", port->device, i,
				conf->table[i], port->nb_queues);
			return -EINVAL;
		}
	return port->ops->rss_set(port, conf);
}

int myrio_port_rss_flow_queue(struct myrio_port *port, uint8_t proto, uint32_t saddr,
			      uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t *hash)
{
	if (!port->ops->rss_flow_queue)
		return -ENOTSUP;
	uint8_t t[12]; /* as on the wire: addresses, then ports, network order */
	memcpy(t, &saddr, 4);
	memcpy(t + 4, &daddr, 4);
	memcpy(t + 8, &sport, 2);
	memcpy(t + 10, &dport, 2);
	return port->ops->rss_flow_queue(port, t, proto, hash);
}
