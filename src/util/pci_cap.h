/* SPDX-License-Identifier: BSD-3-Clause */
/* The PCI capability list walk (PCI Local Bus 3.0 §6.7), over any way of reading config
 * space: a bus's cfg_read, a copy read from sysfs. The one walk of the tree. */
#ifndef MYRIO_UTIL_PCI_CAP_H
#define MYRIO_UTIL_PCI_CAP_H

#include <stdint.h>

#define PCI_CAP_ID_MSI 0x05
#define PCI_MSI_FLAGS 0x02 /* message control, after the capability header */
#define PCI_MSI_FLAGS_ENABLE 0x0001
#define PCI_CAP_ID_MSIX 0x11
#define PCI_MSIX_FLAGS_ENABLE 0x8000 /* in the message control word, as PCI_MSI_FLAGS */
#define PCI_MSIX_FLAGS_MASKALL 0x4000

/* Reads size (1, 2 or 4) bytes of config space at off, little-endian; < 0 on failure. */
typedef int (*pci_cfg_read_fn)(void *ctx, unsigned off, unsigned size, uint32_t *val);

/* Config-space offset of the first capability with this ID, 0 if there is none, the list
 * is unreadable, loops, or points into the standard header. */
unsigned pci_cap_find(pci_cfg_read_fn read, void *ctx, unsigned id);

#endif
