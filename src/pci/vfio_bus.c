/* SPDX-License-Identifier: BSD-3-Clause */
/* A PCI function opened through VFIO, presented as a struct myrio_bus. Open order and
 * unwind: checks (sysfs) -> container/group/device -> regions -> bus mastering; close and
 * every error path undo it in reverse. */
#include <errno.h>
#include <linux/vfio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "mem/dma.h"
#include "pci/iommu_group.h"
#include "pci/pci_addr.h"
#include "pci/vfio.h"
#include "pci/vfio_dev.h"
#include "util/log.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Short waits spin (a sleep costs 50 us or more of timer slack, far beyond what the
 * command polling asks for); longer ones sleep. */
static void vfio_delay_us(struct myrio_bus *bus, unsigned us)
{
	(void)bus;
	if (us < 50) {
		uint64_t end = now_ns() + (uint64_t)us * 1000u;
		while (now_ns() < end)
			cpu_relax();
		return;
	}
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int vfio_reset(struct myrio_bus *bus)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (!d->can_reset)
		return -ENOTSUP;
	if (ioctl(d->device, VFIO_DEVICE_RESET) != 0) {
		int rc = -errno;
		log_err("%s: VFIO_DEVICE_RESET: %s", bus->name, strerror(-rc));
		return rc;
	}
	/* The kernel restores config space around the reset; make sure of the bits we need. */
	return myrio_vfio_enable_master(d);
}

static void vfio_close(struct myrio_bus *bus)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (!d)
		return;
	myrio_vfio_irq_close(d);
	if (d->device >= 0 && d->cfg_size)
		myrio_vfio_disable_master(d);
	if (d->container >= 0)
		myrio_vfio_dma_unmap_all(d);
	myrio_vfio_regions_close(d);
	myrio_vfio_fds_close(d);
	myrio_iova_fini(&d->iova);
	free(d);
}

static const struct myrio_bus_ops vfio_ops = {
    .dma_map = myrio_vfio_dma_map,
    .dma_unmap = myrio_vfio_dma_unmap,
    .delay_us = vfio_delay_us,
    .cfg_read = myrio_vfio_cfg_read,
    .cfg_write = myrio_vfio_cfg_write,
    .irq_fd = myrio_vfio_irq_fd,
    .irq_setup = myrio_vfio_irq_setup,
    .reset = vfio_reset,
    .close = vfio_close,
};

/* What the kernel must offer before any VFIO call, with the fix for each lack. */
static int check_host(const struct myrio_vfio_paths *paths, const char *addr,
		      struct myrio_iommu_group *g)
{
	int rc = myrio_iommu_group_read(paths, addr, g);
	if (rc < 0)
		return rc;
	if (myrio_vfio_pci_loaded(paths) != 0) {
		log_err("the vfio-pci driver is not loaded: run 'modprobe vfio-pci', then "
			"'myrio-setup bind %s'",
			addr);
		return -ENODEV;
	}
	return myrio_iommu_group_check(g, addr);
}

int myrio_vfio_open_at(const struct myrio_vfio_paths *paths, const char *addr_in,
		       myrio_pci_claim_fn claim, struct myrio_bus **out)
{
	struct myrio_pci_addr a;
	char addr[MYRIO_PCI_ADDR_STRLEN + 1];
	struct myrio_iommu_group g;
	*out = NULL;
	if (myrio_pci_addr_parse(addr_in, &a) != 0) {
		log_err("'%s' is not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:03:00.0)",
			addr_in);
		return -EINVAL;
	}
	myrio_pci_addr_str(&a, addr);
	uint16_t vendor, device;
	if (myrio_pci_ids(paths, addr, &vendor, &device) < 0) {
		log_err("no PCI device %s (see lspci -D for the addresses of this machine)", addr);
		return -ENODEV;
	}
	if (claim && !claim(addr, vendor, device))
		return -ENODEV; /* claim said why */
	int rc = check_host(paths, addr, &g);
	if (rc < 0)
		return rc;

	struct myrio_vfio_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->bus.ops = &vfio_ops;
	strcpy(d->bus.kind, "vfio");
	strcpy(d->bus.name, addr);
	if (paths)
		d->paths = *paths;
	d->group_id = g.id;
	d->container = d->group = d->device = d->irq_fd = d->intx_fd = -1;
	myrio_iova_init(&d->iova, NULL, 0);

	rc = myrio_vfio_fds_open(d, addr);
	if (rc == 0)
		rc = myrio_vfio_iova_setup(d);
	if (rc == 0)
		rc = myrio_vfio_regions_open(d);
	if (rc == 0)
		rc = myrio_vfio_enable_master(d);
	if (rc < 0) {
		vfio_close(&d->bus);
		return rc;
	}
	log_info("%s: open through VFIO (IOMMU group %d, BAR0 %zu bytes%s)", addr, d->group_id,
		 d->bus.bar0_len, d->can_reset ? ", resettable" : "");
	*out = &d->bus;
	return 0;
}

int myrio_vfio_bus_open(const char *pci_addr, myrio_pci_claim_fn claim, struct myrio_bus **out)
{
	return myrio_vfio_open_at(NULL, pci_addr, claim, out);
}

int myrio_vfio_group_id(const struct myrio_bus *bus)
{
	if (!bus || strcmp(bus->kind, "vfio") != 0)
		return -EINVAL;
	return ((const struct myrio_vfio_dev *)bus)->group_id;
}
