/* SPDX-License-Identifier: BSD-3-Clause */
/* One PCI function opened through VFIO: the state behind the struct myrio_bus that
 * myrio_vfio_bus_open returns. Internal to src/pci/. */
#ifndef MYRIO_PCI_VFIO_DEV_H
#define MYRIO_PCI_VFIO_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus/bus.h"
#include "pci/iova.h"
#include "pci/sysfs.h"

struct myrio_vfio_dev {
	struct myrio_bus bus; /* first: the bus ops get this pointer back */
	struct myrio_vfio_paths paths;
	int group_id;
	int container; /* /dev/vfio/vfio, with the type1 IOMMU set */
	int group;     /* /dev/vfio/N */
	int device;    /* VFIO_GROUP_GET_DEVICE_FD */
	uint32_t num_regions, num_irqs;
	bool can_reset;
	uint64_t cfg_offset, cfg_size; /* config space region in the device fd */
	uint64_t iova_pgsizes;	       /* page sizes the IOMMU supports */
	struct myrio_iova_space iova;
	struct myrio_dma_region **mapped; /* regions mapped now, unmapped on close */
	unsigned n_mapped, cap_mapped;
	int irq_fd;    /* eventfd, -1 until irq_fd() is first called */
	int irq_index; /* VFIO_PCI_MSIX_IRQ_INDEX or VFIO_PCI_MSI_IRQ_INDEX */
	int intx_fd;   /* INTx trigger while masked (polled), -1 if none */
};

/* container/group/device (vfio_fds.c) */
int myrio_vfio_fds_open(struct myrio_vfio_dev *d, const char *addr);
void myrio_vfio_fds_close(struct myrio_vfio_dev *d);
/* regions: config space, BAR0 mapping, command register (region.c) */
int myrio_vfio_regions_open(struct myrio_vfio_dev *d);
void myrio_vfio_regions_close(struct myrio_vfio_dev *d);
int myrio_vfio_cfg_read(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t *val);
int myrio_vfio_cfg_write(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t val);
int myrio_vfio_enable_master(struct myrio_vfio_dev *d);
/* Stops the function's DMA before its memory is unmapped (close). */
void myrio_vfio_disable_master(struct myrio_vfio_dev *d);
/* DMA (dma_map.c) */
struct vfio_iommu_type1_info;
/* The valid IOVA ranges in a VFIO_IOMMU_GET_INFO answer of len bytes; every offset is
 * checked against len. Returns how many were stored in out (0: none reported). */
unsigned myrio_vfio_parse_iova_ranges(const struct vfio_iommu_type1_info *info, size_t len,
				      struct myrio_iova_range *out, unsigned max);
int myrio_vfio_iova_setup(struct myrio_vfio_dev *d);
int myrio_vfio_dma_map(struct myrio_bus *bus, struct myrio_dma_region *r);
void myrio_vfio_dma_unmap(struct myrio_bus *bus, struct myrio_dma_region *r);
/* Unmaps whatever is still mapped, so that no region points at a closed bus. */
void myrio_vfio_dma_unmap_all(struct myrio_vfio_dev *d);
/* interrupts (irq.c) */
int myrio_vfio_irq_fd(struct myrio_bus *bus);
int myrio_vfio_irq_setup(struct myrio_bus *bus, bool msi);
void myrio_vfio_irq_close(struct myrio_vfio_dev *d);

#endif
