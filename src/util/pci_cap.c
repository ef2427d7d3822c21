/* SPDX-License-Identifier: BSD-3-Clause */
/* The PCI capability list walk: nothing read is trusted; a list that loops or points into
 * the standard header ends the walk. */
#include <linux/pci_regs.h>

#include "util/pci_cap.h"

#define CAP_MAX_HOPS 48 /* (256 - 64) / 4: more capabilities than fit means a loop */

unsigned pci_cap_find(pci_cfg_read_fn read, void *ctx, unsigned id)
{
	uint32_t status, cap;
	if (read(ctx, PCI_STATUS, 2, &status) < 0 || status == 0xffff ||
	    !(status & PCI_STATUS_CAP_LIST) || read(ctx, PCI_CAPABILITY_LIST, 1, &cap) < 0)
		return 0;
	for (int hops = 0; hops < CAP_MAX_HOPS; hops++) {
		uint32_t hdr;
		cap &= 0xfc; /* the low two bits are reserved */
		if (cap < 0x40)
			return 0; /* the end (0), or a pointer into the standard header */
		if (read(ctx, cap, 2, &hdr) < 0)
			return 0;
		if ((hdr & 0xff) == id)
			return cap;
		cap = (hdr >> 8) & 0xff;
	}
	return 0;
}
