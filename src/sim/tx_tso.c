/* TCP segmentation offload (§5.6). */
#include <errno.h>

#include "sim/tx.h"
#include "util/log.h"

int sim_tx_tso(struct sim_nic *nic, uint32_t idx, const struct sim_txd *d, unsigned n,
	       uint32_t total, uint64_t now)
{
	(void)d;
	(void)n;
	(void)total;
	(void)now;
	nic->st.tx_invalid++;
	if (sim_nic_ratelimit(nic))
		log_err("%s: TSO chain at slot %u dropped: TSO not modelled yet", nic->name, idx);
	return -ENOTSUP;
}
