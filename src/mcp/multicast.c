/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast filter (§7.4). The firmware does not say how many groups its filter holds,
 * so the driver learns it from ERROR_MULTICAST on JOIN, as Linux's myri10ge does: the whole
 * list is rewritten under ALLMULTI, and a list that does not fit leaves ALLMULTI on. When the
 * list shrinks the next rewrite fits and filtering comes back. */
#include "mcp/multicast.h"

#include <errno.h>
#include <string.h>

#include "bus/bus.h"
#include "mcp/nic.h"
#include "util/log.h"

/* JOIN/LEAVE's encoding (§3.3 #28): bytes 0..3 in data0, bytes 4..5 in data1's high half. */
static int join(struct myri_nic *nic, const uint8_t m[6])
{
	uint32_t d0 = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];
	uint32_t d1 = (uint32_t)m[4] << 24 | (uint32_t)m[5] << 16;
	return mcp_cmd(&nic->cmd, MCP_CMD_JOIN_MULTICAST_GROUP, d0, d1, 0, NULL);
}

static int apply_locked(struct myri_nic *nic)
{
	struct myri_mc *mc = &nic->mc;
	bool was_overflow = mc->overflow;
	mc->overflow = false;
	int rc = mcp_cmd(&nic->cmd, MCP_CMD_ENABLE_ALLMULTI, 0, 0, 0, NULL);
	if (rc < 0 || mc->allmulti || nic->rx_filter_bug) {
		mc->overflow = rc < 0;
		return rc;
	}
	rc = mcp_cmd(&nic->cmd, MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS, 0, 0, 0, NULL);
	for (unsigned i = 0; rc == 0 && i < mc->n; i++)
		rc = join(nic, mc->addrs[i]);
	if (rc == -ENOSPC) {
		if (!was_overflow)
			log_info("%s: %u multicast groups exceed the NIC's filter: receiving all "
				 "multicast until they fit",
				 nic->bus->name, mc->n);
		mc->overflow = true;
		return 0;
	}
	if (rc == 0)
		rc = mcp_cmd(&nic->cmd, MCP_CMD_DISABLE_ALLMULTI, 0, 0, 0, NULL);
	if (rc < 0) {
		log_err("%s: the multicast filter could not be written (%s): receiving all "
			"multicast",
			nic->bus->name, strerror(-rc));
		mc->overflow = true;
	}
	return rc;
}

/* The list and its rewrite in the NIC under the command channel's lock: two threads'
 * lists never interleave, and the NIC's filter is the last list set. */
int myri_mc_apply(struct myri_nic *nic)
{
	mcp_cmd_lock(&nic->cmd);
	int rc = apply_locked(nic);
	mcp_cmd_unlock(&nic->cmd);
	return rc;
}

int myri_mc_set_list(struct myri_nic *nic, const uint8_t (*addrs)[6], unsigned n)
{
	mcp_cmd_lock(&nic->cmd);
	if (n) /* addrs may be NULL for an empty list */
		memcpy(nic->mc.addrs, addrs, (size_t)n * 6);
	nic->mc.n = n;
	int rc = nic->up ? apply_locked(nic) : 0;
	mcp_cmd_unlock(&nic->cmd);
	return rc;
}

int myri_mc_set_allmulti(struct myri_nic *nic, bool on)
{
	mcp_cmd_lock(&nic->cmd);
	nic->mc.allmulti = on;
	int rc = nic->up ? apply_locked(nic) : 0;
	mcp_cmd_unlock(&nic->cmd);
	return rc;
}
