/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening a PCI function through VFIO as a struct myrio_bus (myrio_vfio_bus_open,
 * bus.h). The driver table (src/port/drivers.c) chooses the driver from the function's
 * IDs; its claim function, given to the open, refuses a function no driver takes before
 * the VFIO device is opened, since opening it resets the function.
 *
 * A bus belongs to one thread at a time (the port that owns it): its DMA mapping
 * bookkeeping is not locked.
 */
#ifndef MYRIO_PCI_VFIO_H
#define MYRIO_PCI_VFIO_H

#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "pci/sysfs.h"

/* myrio_vfio_bus_open opens addr ("DDDD:BB:DD.F" or "BB:DD.F"): checks the IOMMU group,
 * opens the container, group and device, maps BAR0, enables memory space and bus
 * mastering. Every failure is logged with what to do about it. This is the same with
 * other sysfs and /dev roots (tests). */
int myrio_vfio_open_at(const struct myrio_vfio_paths *paths, const char *addr,
		       myrio_pci_claim_fn claim, struct myrio_bus **out);

/* The functions on this machine whose IDs wanted() accepts (libpciaccess scan): up to
 * max addresses in canonical form into addrs; returns how many were found, or a negative
 * errno. libpciaccess keeps process-wide state (pci_system_init/cleanup) that an
 * application may share, so the open path itself reads the few sysfs files it needs
 * instead. */
int myrio_pci_find(char (*addrs)[16], unsigned max,
		   bool (*wanted)(uint16_t vendor, uint16_t device));

/* The bus's irq_fd op wires MSI (else MSI-X vector 0); this wires MSI-X vector 0 instead,
 * for devices that need it (a multi-slice Myri-10G, after ENABLE_RSS_QUEUES, §6.4). Returns
 * the eventfd, -ENOTSUP without MSI-X. Replaces an eventfd handed out before. */
int myrio_vfio_irq_fd_msix(struct myrio_bus *bus);

/* The IOMMU group number of an open VFIO bus, for messages and tests. */
int myrio_vfio_group_id(const struct myrio_bus *bus);

#endif
