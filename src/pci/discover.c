/* SPDX-License-Identifier: BSD-3-Clause */
/* Finding PCI functions by their IDs with libpciaccess. */
#include <errno.h>
#include <pciaccess.h>
#include <stdio.h>
#include <string.h>

#include "pci/vfio.h"
#include "util/log.h"

int myrio_pci_find(char (*addrs)[16], unsigned max,
		   bool (*wanted)(uint16_t vendor, uint16_t device))
{
	int rc = pci_system_init();
	if (rc != 0) {
		log_err("libpciaccess cannot scan the PCI bus: %s", strerror(rc));
		return -rc;
	}
	static const struct pci_id_match match = {
	    .vendor_id = PCI_MATCH_ANY,
	    .device_id = PCI_MATCH_ANY,
	    .subvendor_id = PCI_MATCH_ANY,
	    .subdevice_id = PCI_MATCH_ANY,
	};
	struct pci_device_iterator *it = pci_id_match_iterator_create(&match);
	if (!it) {
		pci_system_cleanup();
		return -ENOMEM;
	}
	unsigned n = 0;
	struct pci_device *dev;
	while ((dev = pci_device_next(it)) != NULL) {
		if (!wanted(dev->vendor_id, dev->device_id))
			continue;
		if (n < max)
			snprintf(addrs[n], sizeof(addrs[n]), "%04x:%02x:%02x.%x", dev->domain,
				 dev->bus, dev->dev, dev->func);
		n++;
	}
	pci_iterator_destroy(it);
	pci_system_cleanup();
	return (int)(n < max ? n : max);
}
