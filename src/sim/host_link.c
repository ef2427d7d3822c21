/* SPDX-License-Identifier: BSD-3-Clause */
/* The public face of the model's cable endpoints (myrio/sim.h, myrio_sim_host_*): a host
 * interface at the far end of a cable, for programs that host the model through the
 * public API. The handle is the endpoint itself (struct sim_endpoint, endpoint.h). */
#include <errno.h>
#include <string.h>

#include "myrio/sim.h"
#include "sim/endpoint.h"
#include "sim/model.h"
#include "sim/nic.h"

static struct sim_endpoint *ep_of(struct myrio_sim_host *h)
{
	return (struct sim_endpoint *)h;
}

int myrio_sim_host_open(struct myrio_sim_host **out, const char *spec)
{
	struct sim_endpoint *ep = NULL;
	int rc = -EINVAL;
	if (strncmp(spec, "tap:", 4) == 0 && spec[4])
		rc = sim_endpoint_tap_open(spec + 4, &ep);
	else if (strncmp(spec, "packet:", 7) == 0 && spec[7])
		rc = sim_endpoint_packet_open(spec + 7, &ep);
	else if (strncmp(spec, "shm:", 4) == 0 && spec[4])
		rc = sim_endpoint_shm_open(spec + 4, &ep);
	if (rc == 0)
		*out = (struct myrio_sim_host *)ep;
	return rc;
}

int myrio_sim_create_cabled(struct myrio_sim **out, const struct myrio_sim_conf *conf,
			    struct myrio_sim_host *host)
{
	struct myrio_sim *w;
	int rc = sim_world_new(conf, &w);
	if (rc < 0) {
		myrio_sim_host_close(host);
		return rc;
	}
	struct sim_nic *nic;
	uint8_t mac[6];
	sim_nic_default_mac(ep_of(host)->nic_index, mac);
	if ((rc = sim_world_add_nic(w, "sim0", mac, &nic)) < 0 ||
	    (rc = sim_world_cable_endpoint(nic, ep_of(host))) < 0) {
		myrio_sim_host_close(host); /* not the world's: its cable was not made */
		myrio_sim_destroy(w);
		return rc;
	}
	if ((rc = sim_world_start(w)) < 0) {
		myrio_sim_destroy(w); /* and host with its cable */
		return rc;
	}
	*out = w;
	return 0;
}

unsigned myrio_sim_host_recv(struct myrio_sim_host *host,
			     void (*fn)(void *ctx, const uint8_t *frame, uint32_t len), void *ctx,
			     unsigned max)
{
	return ep_of(host)->ops->poll(ep_of(host), fn, ctx, max);
}

void myrio_sim_host_send(struct myrio_sim_host *host, const uint8_t *frame, uint32_t len)
{
	ep_of(host)->ops->deliver(ep_of(host), frame, len);
}

int myrio_sim_host_fd(struct myrio_sim_host *host)
{
	return ep_of(host)->ops->fd(ep_of(host));
}

void myrio_sim_host_stats(const struct myrio_sim_host *host, struct myrio_sim_host_stats *st)
{
	const struct sim_endpoint *ep = (const struct sim_endpoint *)host;
	st->to_host = ep->tx_frames;
	st->from_host = ep->rx_frames;
	st->drops = ep->drops;
}

void myrio_sim_host_close(struct myrio_sim_host *host)
{
	if (host)
		ep_of(host)->ops->destroy(ep_of(host));
}
