/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast reception on the Myri-10G (§7.4): the group list the host wants, and how it is
 * written into the firmware's filter, the way Linux's set_multicast_list does it. */
#ifndef MYRIO_MCP_MULTICAST_H
#define MYRIO_MCP_MULTICAST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "myrio/port.h"

struct myri_nic;

/* Written under the command channel's lock; n and overflow are also read without it, from
 * any thread, by the port's extended stats: atomic. */
struct myri_mc {
	uint8_t addrs[MYRIO_MC_ADDR_MAX][6];
	_Atomic unsigned n;
	bool allmulti; /* the host asked for every multicast frame */
	/* ALLMULTI is on in the NIC although the host did not ask for it: the list did not
	 * fit in the firmware's filter, or a command failed while it was being written */
	_Atomic bool overflow;
};

/* Writes the wanted state into the NIC: ENABLE_ALLMULTI, then (unless every group is
 * wanted, or the adopted firmware's broadcast bug needs ALLMULTI) LEAVE_ALL, JOIN each
 * address and DISABLE_ALLMULTI. A JOIN refused because the filter is full leaves ALLMULTI on
 * (overflow) and is no error. Called after every RESET and on each change; returns 0 or the
 * failing command's error, ALLMULTI then left on as far as the NIC took it. */
int myri_mc_apply(struct myri_nic *nic);
/* Replaces the list (addresses already checked by the port layer) and applies it. */
int myri_mc_set_list(struct myri_nic *nic, const uint8_t (*addrs)[6], unsigned n);
int myri_mc_set_allmulti(struct myri_nic *nic, bool on);

#endif
