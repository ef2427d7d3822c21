/* SPDX-License-Identifier: BSD-3-Clause */
/* Device interrupts into an eventfd. One vector: MSI when the function has it, else MSI-X
 * vector 0; or none, INTx masked, for a polled port. A single-slice Myri-10G interrupts
 * through MSI; MSI-X is meant for one vector per slice and needs ENABLE_RSS_QUEUES first
 * (spec §6.4). */
#include <errno.h>
#include <linux/vfio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pci/vfio.h"
#include "pci/vfio_dev.h"
#include "util/log.h"
#include "util/pci_cap.h"

static int irq_count(struct myrio_vfio_dev *d, uint32_t index)
{
	struct vfio_irq_info ii = {.argsz = sizeof(ii), .index = index};
	if (index >= d->num_irqs || ioctl(d->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) != 0)
		return 0;
	return (ii.flags & VFIO_IRQ_INFO_EVENTFD) ? (int)ii.count : 0;
}

static int set_trigger(struct myrio_vfio_dev *d, uint32_t index, int efd)
{
	/* struct vfio_irq_set ends in a flexible array: the eventfd goes right after it. */
	union {
		struct vfio_irq_set set;
		uint8_t raw[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	} u;
	memset(&u, 0, sizeof(u));
	u.set.argsz = sizeof(u.raw);
	u.set.flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	u.set.index = index;
	u.set.start = 0;
	u.set.count = 1;
	int32_t fd = efd;
	memcpy(u.set.data, &fd, sizeof(fd));
	return ioctl(d->device, VFIO_DEVICE_SET_IRQS, &u) == 0 ? 0 : -errno;
}

/* A VFIO_DEVICE_SET_IRQS without data: count 0 with TRIGGER turns the index off, count 1
 * with MASK masks INTx. */
static int set_none(struct myrio_vfio_dev *d, uint32_t index, uint32_t action, uint32_t count)
{
	struct vfio_irq_set set = {
	    .argsz = sizeof(set),
	    .flags = VFIO_IRQ_SET_DATA_NONE | action,
	    .index = index,
	    .start = 0,
	    .count = count,
	};
	return ioctl(d->device, VFIO_DEVICE_SET_IRQS, &set) == 0 ? 0 : -errno;
}

static int cfg_read(void *bus, unsigned off, unsigned size, uint32_t *val)
{
	return myrio_vfio_cfg_read(bus, off, size, val);
}

/* vfio-pci turns MSI on at the device for VFIO_DEVICE_SET_IRQS, but the MSI capability the
 * user reads is its virtual copy, whose enable bit only the user sets (kept only while the
 * ioctl has MSI on), as QEMU does for its guest. Without it the driver, which reads the
 * capability to know its interrupt mode, would take the port for polled. */
static void msi_cap_enable(struct myrio_vfio_dev *d, bool on)
{
	unsigned cap = pci_cap_find(cfg_read, &d->bus, PCI_CAP_ID_MSI);
	uint32_t flags;
	if (!cap || myrio_vfio_cfg_read(&d->bus, cap + PCI_MSI_FLAGS, 2, &flags) < 0)
		return;
	uint32_t want = on ? flags | PCI_MSI_FLAGS_ENABLE : flags & ~(uint32_t)PCI_MSI_FLAGS_ENABLE;
	if (want != flags && myrio_vfio_cfg_write(&d->bus, cap + PCI_MSI_FLAGS, 2, want) < 0)
		log_warn("%s: cannot set MSI enable in the virtual config space", d->bus.name);
}

static int msi_trigger(struct myrio_vfio_dev *d, uint32_t index, int efd)
{
	int rc = set_trigger(d, index, efd);
	if (rc == 0 && index == VFIO_PCI_MSI_IRQ_INDEX)
		msi_cap_enable(d, true);
	return rc;
}

static void irq_disable(struct myrio_vfio_dev *d)
{
	set_none(d, (uint32_t)d->irq_index, VFIO_IRQ_SET_ACTION_TRIGGER, 0);
	if (d->irq_index == VFIO_PCI_MSI_IRQ_INDEX)
		msi_cap_enable(d, false);
}

static void intx_release(struct myrio_vfio_dev *d)
{
	if (d->intx_fd < 0)
		return;
	set_none(d, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_ACTION_TRIGGER, 0);
	close(d->intx_fd);
	d->intx_fd = -1;
}

static int irq_open(struct myrio_vfio_dev *d, uint32_t index)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		int rc = -errno;
		log_err("%s: eventfd: %s", d->bus.name, strerror(-rc));
		return rc;
	}
	int rc = msi_trigger(d, index, efd);
	if (rc < 0) {
		log_err("%s: VFIO_DEVICE_SET_IRQS (%s): %s", d->bus.name,
			index == VFIO_PCI_MSIX_IRQ_INDEX ? "MSI-X" : "MSI", strerror(-rc));
		close(efd);
		return rc;
	}
	d->irq_fd = efd;
	d->irq_index = (int)index;
	return efd;
}

int myrio_vfio_irq_fd(struct myrio_bus *bus)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (d->irq_fd >= 0)
		return d->irq_fd;
	if (irq_count(d, VFIO_PCI_MSI_IRQ_INDEX) > 0)
		return irq_open(d, VFIO_PCI_MSI_IRQ_INDEX);
	if (irq_count(d, VFIO_PCI_MSIX_IRQ_INDEX) > 0)
		return irq_open(d, VFIO_PCI_MSIX_IRQ_INDEX);
	return -ENOTSUP; /* legacy INTx needs unmasking per interrupt: poll instead */
}

int myrio_vfio_irq_fd_msix(struct myrio_bus *bus)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (strcmp(bus->kind, "vfio") != 0)
		return -EINVAL;
	if (d->irq_fd >= 0 && d->irq_index == VFIO_PCI_MSIX_IRQ_INDEX)
		return d->irq_fd;
	if (irq_count(d, VFIO_PCI_MSIX_IRQ_INDEX) == 0)
		return -ENOTSUP;
	myrio_vfio_irq_close(d);
	return irq_open(d, VFIO_PCI_MSIX_IRQ_INDEX);
}

/* INTx through VFIO, masked: VFIO owns the line and keeps DisINTx set at the device while
 * masked, so a polled NIC never asserts it (VFIO clears INTX_DISABLE at open). */
static int intx_masked(struct myrio_vfio_dev *d)
{
	if (irq_count(d, VFIO_PCI_INTX_IRQ_INDEX) == 0)
		return 0; /* no INTx: nothing to mask */
	int rc = 0;
	if (d->intx_fd < 0) {
		int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0)
			rc = -errno;
		else if ((rc = set_trigger(d, VFIO_PCI_INTX_IRQ_INDEX, efd)) < 0)
			close(efd);
		else
			d->intx_fd = efd;
	}
	if (rc == 0)
		rc = set_none(d, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_ACTION_MASK, 1);
	if (rc < 0)
		log_warn("%s: cannot mask INTx through VFIO (%s): INTX_DISABLE alone keeps it "
			 "quiet",
			 d->bus.name, strerror(-rc));
	return 0;
}

/* Before every reset sequence (bus.h). MSI is turned off first even when VFIO believes it
 * on: a NIC that rebooted lost its MSI capability state, and only a new
 * VFIO_DEVICE_SET_IRQS writes it to the device again. The eventfd stays the same. */
int myrio_vfio_irq_setup(struct myrio_bus *bus, bool msi)
{
	struct myrio_vfio_dev *d = (struct myrio_vfio_dev *)bus;
	if (!msi)
		return intx_masked(d);
	intx_release(d); /* VFIO takes one interrupt type at a time */
	uint32_t index = d->irq_fd >= 0 ? (uint32_t)d->irq_index : VFIO_PCI_MSI_IRQ_INDEX;
	if (d->irq_fd < 0 && irq_count(d, index) == 0)
		index = VFIO_PCI_MSIX_IRQ_INDEX;
	if (irq_count(d, index) == 0)
		return -ENOTSUP;
	if (d->irq_fd < 0)
		return irq_open(d, index);
	irq_disable(d);
	int rc = msi_trigger(d, index, d->irq_fd);
	if (rc < 0)
		log_err("%s: VFIO_DEVICE_SET_IRQS (re-arm): %s", bus->name, strerror(-rc));
	return rc < 0 ? rc : d->irq_fd;
}

void myrio_vfio_irq_close(struct myrio_vfio_dev *d)
{
	intx_release(d);
	if (d->irq_fd < 0)
		return;
	irq_disable(d);
	close(d->irq_fd);
	d->irq_fd = -1;
}
