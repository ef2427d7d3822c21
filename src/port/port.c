/* The public port API: device-string dispatch and thin calls into the back-end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bus/bus.h"
#include "port/capture.h"
#include "port/port_ops.h"
#include "util/log.h"

void myrio_port_conf_init(struct myrio_port_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->mtu = 1500;
	conf->adopt_firmware = true;
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
	if (strncmp(device, "pair:", 5) == 0) {
		rc = myrio_pair_port_open(device, conf, &port);
	} else {
		struct myrio_bus *bus;
		rc = myrio_bus_open(device, conf->sim, &bus);
		if (rc < 0)
			return rc;
		rc = myrio_myri10ge_open(bus, conf, &port); /* owns the bus from here on */
	}
	if (rc < 0)
		return rc;
	snprintf(port->device, sizeof(port->device), "%s", device);
	*out = port;
	return 0;
}

void myrio_port_close(struct myrio_port *port)
{
	if (!port)
		return;
	myrio_port_capture_stop(port);
	port->ops->close(port);
}

uint16_t myrio_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	uint16_t got = port->ops->rx_burst(port, pkts, n);
	if (__builtin_expect(port->capture != NULL, 0) && got)
		myrio_capture_write(port->capture, pkts, got);
	return got;
}

uint16_t myrio_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	uint16_t sent = port->ops->tx_burst(port, pkts, n);
	/* The driver frees sent buffers only in a later call, when the NIC reports them done,
	 * so they are still intact here. */
	if (__builtin_expect(port->capture != NULL, 0) && sent)
		myrio_capture_write(port->capture, pkts, sent);
	return sent;
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
	return port->ops->info(port, info);
}

int myrio_port_stats(struct myrio_port *port, struct myrio_port_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	return port->ops->stats(port, stats);
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
