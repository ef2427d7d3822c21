/* SPDX-License-Identifier: BSD-3-Clause */
/* MYRIO_DEVICE=sim+HOST: the process hosts its own model NIC, cabled to HOST (a host
 * endpoint of myrio_sim_host_open, e.g. shm:NAME/0 for a cable to another process). The
 * model has no thread: engine_progress steps it before each poll of the stack, so a
 * busy-polling program is also its NIC's firmware, with no wake-up between them. Hence
 * only with MYRIO_SPIN=1: a program asleep would leave its NIC stopped. */
#include <errno.h>
#include <string.h>

#include "myrio/sim.h"
#include "preload.h"

#define OWN_MODEL_PREFIX "sim+"

bool own_model_wanted(const char *device)
{
	return strncmp(device, OWN_MODEL_PREFIX, strlen(OWN_MODEL_PREFIX)) == 0;
}

int own_model_open(const struct preload_conf *conf, struct myrio_port_conf *pc,
		   struct myrio_sim **sim, struct myrio_port **port)
{
	const char *host_spec = conf->device + strlen(OWN_MODEL_PREFIX);
	if (!conf->spin) {
		preload_log("%s: a model of this process's own runs only while the program polls: "
			    "set MYRIO_SPIN=1 (myrio-run --spin)",
			    conf->device);
		return -EINVAL;
	}
	struct myrio_sim_host *host;
	int rc = myrio_sim_host_open(&host, host_spec);
	if (rc < 0)
		return rc;
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	sc.stepped = true;
	sc.link_bps = 0; /* a step is model time, not the wall's: no rate to hold frames to */
	if ((rc = myrio_sim_create_cabled(sim, &sc, host)) < 0)
		return rc;
	pc->sim = *sim;
	if ((rc = myrio_port_open(port, "sim:sim0", pc)) < 0) {
		myrio_sim_destroy(*sim);
		*sim = NULL;
	}
	return rc;
}
