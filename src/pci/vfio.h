/* Opening any PCI function through VFIO as a struct myrio_bus.
 *
 * myrio_vfio_bus_open (bus.h) is this plus a check that the device is a Myri-10G; the
 * generic path is also what the e1000e test driver in tests/qemu/ runs on, so that the same
 * code is proven on real VFIO without a Myricom board.
 *
 * A bus belongs to one thread at a time (the port that owns it): its DMA mapping
 * bookkeeping is not locked.
 */
#ifndef MYRIO_PCI_VFIO_H
#define MYRIO_PCI_VFIO_H

#include <stdint.h>

#include "bus/bus.h"
#include "pci/sysfs.h"

#define MYRIO_PCI_VENDOR_MYRICOM 0x14c1
#define MYRIO_PCI_DEVICE_Z8E 0x0008   /* Myri-10G, PCIe x8 */
#define MYRIO_PCI_DEVICE_Z8E_9 0x0009 /* Myri-10G, later revision */

/* Opens addr ("DDDD:BB:DD.F" or "BB:DD.F"): checks the IOMMU group, opens the container,
 * group and device, maps BAR0, enables memory space and bus mastering. Every failure is
 * logged with what to do about it. */
int myrio_vfio_open_any(const char *addr, struct myrio_bus **out);
/* The same with other sysfs and /dev roots (tests). */
int myrio_vfio_open_at(const struct myrio_vfio_paths *paths, const char *addr,
		       struct myrio_bus **out);
/* The same, checking the vendor and device ids first. */
int myrio_vfio_open_myri_at(const struct myrio_vfio_paths *paths, const char *addr,
			    struct myrio_bus **out);

/* Myri-10G functions on this machine (libpciaccess scan): up to max addresses in
 * canonical form into addrs; returns how many were found, or a negative errno.
 * libpciaccess keeps process-wide state (pci_system_init/cleanup) that an application may
 * share, so the open path itself reads the few sysfs files it needs instead. */
int myrio_pci_find_myri(char (*addrs)[16], unsigned max);
int myrio_pci_is_myri(uint16_t vendor, uint16_t device);

/* The bus's irq_fd op wires MSI (else MSI-X vector 0); this wires MSI-X vector 0 instead,
 * for devices that need it (a multi-slice Myri-10G, after ENABLE_RSS_QUEUES, §6.4). Returns
 * the eventfd, -ENOTSUP without MSI-X. Replaces an eventfd handed out before. */
int myrio_vfio_irq_fd_msix(struct myrio_bus *bus);

/* The IOMMU group number of an open VFIO bus, for messages and tests. */
int myrio_vfio_group_id(const struct myrio_bus *bus);

#endif
