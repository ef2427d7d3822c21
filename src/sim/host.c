/* SPDX-License-Identifier: BSD-3-Clause */
/* The model hosted by a device framework (host.h): DMA through the host, the host's clock,
 * the host's loop. */
#include <string.h>

#include "sim/host.h"
#include "sim/nic.h"
#include "util/log.h"

void sim_nic_set_host_dma(struct sim_nic *nic, const struct sim_host_dma *dma)
{
	nic->host_dma = dma ? *dma : (struct sim_host_dma){0};
	for (unsigned q = 0; q < SIM_MAX_SLICES; q++)
		nic->sl[q].intrq_va = NULL;
}

uint64_t sim_nic_dma_faults(const struct sim_nic *nic)
{
	return nic->st.dma_faults;
}

bool sim_host_dma_reads(const char *what)
{
	return !strncmp(what, "tx buffer", 9) || !strncmp(what, "dummy RDMA read", 15) ||
	       !strncmp(what, "dummy RDMA target", 17);
}

bool sim_bar0_store_is_urgent(uint32_t off)
{
	return off >= SIM_CMD_OFF && off - SIM_CMD_OFF < 64;
}

unsigned sim_world_run_at(struct myrio_sim *sim, uint64_t now_ns)
{
	if (!sim->conf.stepped) {
		log_err("model: sim_world_run_at needs a stepped world (the host drives it)");
		return 0;
	}
	if (now_ns > sim->now_ns)
		sim->now_ns = now_ns;
	/* rx.c keeps each slice's interrupt queue address for a DMA-table generation; a
	 * host's mapping lasts one call */
	for (unsigned i = 0; i < sim->n_nics; i++)
		if (sim->nics[i]->host_dma.map)
			for (unsigned q = 0; q < SIM_MAX_SLICES; q++)
				sim->nics[i]->sl[q].intrq_va = NULL;
	return sim_world_run_once(sim);
}
