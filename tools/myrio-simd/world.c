/* SPDX-License-Identifier: BSD-3-Clause */
/* Builds the model world that myrio-simd's configuration describes. */
#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "sim/endpoint.h"
#include "sim/model.h"
#include "sim/nic.h"
#include "util/log.h"

struct simd_nic *simd_daemon_nic(struct simd_daemon *d, const char *name)
{
	for (unsigned i = 0; i < d->nnics; i++)
		if (strcmp(d->conf.nics[i].name, name) == 0)
			return &d->nics[i];
	return NULL;
}

static int cable_endpoint(struct simd_nic *n)
{
	const char *cable = n->conf->cable;
	struct sim_endpoint *ep;
	int rc;
	if (strncmp(cable, "tap:", 4) == 0)
		rc = sim_endpoint_tap_open(cable + 4, &ep);
	else
		rc = sim_endpoint_packet_open(cable + 7, &ep);
	if (rc < 0)
		return rc;
	rc = sim_world_cable_endpoint(n->nic, ep);
	if (rc < 0) {
		log_err("NIC %s: cannot plug its cable into %s: %s", n->conf->name, cable,
			strerror(-rc));
		ep->ops->destroy(ep);
		return rc;
	}
	n->ep = ep;
	return 0;
}

static int cable_all(struct simd_daemon *d)
{
	for (unsigned i = 0; i < d->nnics; i++) {
		struct simd_nic *n = &d->nics[i];
		const char *cable = n->conf->cable;
		int rc = 0;
		if (!cable[0])
			continue;
		if (strncmp(cable, "tap:", 4) == 0 || strncmp(cable, "packet:", 7) == 0) {
			rc = cable_endpoint(n);
		} else {
			struct simd_nic *peer = simd_daemon_nic(d, cable);
			if (peer < n) /* each NIC-to-NIC cable once */
				continue;
			rc = sim_world_cable(n->nic, peer->nic);
			if (rc < 0)
				log_err("cannot cable %s to %s: %s", n->conf->name, cable,
					strerror(-rc));
		}
		if (rc < 0)
			return rc;
		if (n->conf->has_faults) {
			rc = myrio_sim_set_faults(d->sim, n->conf->name, &n->conf->faults);
			if (rc < 0) {
				log_err("NIC %s: cannot set its cable's faults: %s", n->conf->name,
					strerror(-rc));
				return rc;
			}
		}
	}
	/* Rates per cable and timing per NIC, set before the model thread starts (it reads
	 * them unlocked). */
	for (unsigned i = 0; i < d->nnics; i++) {
		if (d->nics[i].conf->has_link && d->nics[i].nic->cable)
			d->nics[i].nic->cable->link_bps = d->nics[i].conf->link_bps;
		if (d->nics[i].conf->timing[0])
			d->nics[i].nic->timing = sim_timing_find(d->nics[i].conf->timing);
	}
	return 0;
}

int simd_world_build(struct simd_daemon *d)
{
	struct myrio_sim_conf mc;
	myrio_sim_conf_init(&mc);
	if (d->conf.model_spec[0]) {
		int rc = myrio_sim_conf_parse(&mc, d->conf.model_spec);
		if (rc < 0)
			return rc;
	}
	mc.nics = d->conf.nnics;
	int rc = sim_world_new(&mc, &d->sim);
	if (rc < 0) {
		log_err("cannot create the device model: %s", strerror(-rc));
		return rc;
	}
	rc = sim_world_shared_irqs(d->sim); /* the clients hold the interrupt eventfds */
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < d->conf.nnics; i++) {
		struct simd_nic *n = &d->nics[i];
		n->conf = &d->conf.nics[i];
		rc = sim_world_add_nic(d->sim, n->conf->name, n->conf->mac, &n->nic);
		if (rc < 0) {
			log_err("cannot add NIC %s to the model: %s", n->conf->name, strerror(-rc));
			return rc;
		}
		d->nnics++;
	}
	rc = cable_all(d);
	if (rc == 0)
		rc = sim_world_start(d->sim);
	if (rc < 0)
		log_err("cannot start the device model: %s", strerror(-rc));
	return rc;
}

void simd_world_destroy(struct simd_daemon *d)
{
	if (d->sim)
		myrio_sim_destroy(d->sim); /* stops the model thread, frees NICs and endpoints */
	d->sim = NULL;
	d->nnics = 0;
}
