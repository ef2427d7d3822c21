/* Device interrupts into an eventfd. One vector: MSI when the function has it, else MSI-X
 * vector 0. A single-slice Myri-10G interrupts through MSI; MSI-X is meant for one vector
 * per slice and needs ENABLE_RSS_QUEUES first (spec §6.4). */
#include <errno.h>
#include <linux/vfio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pci/vfio.h"
#include "pci/vfio_dev.h"
#include "util/log.h"

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

static int irq_open(struct myrio_vfio_dev *d, uint32_t index)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		int rc = -errno;
		log_err("%s: eventfd: %s", d->bus.name, strerror(-rc));
		return rc;
	}
	int rc = set_trigger(d, index, efd);
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

void myrio_vfio_irq_close(struct myrio_vfio_dev *d)
{
	if (d->irq_fd < 0)
		return;
	struct vfio_irq_set off = {
	    .argsz = sizeof(off),
	    .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
	    .index = (uint32_t)d->irq_index,
	    .start = 0,
	    .count = 0,
	};
	ioctl(d->device, VFIO_DEVICE_SET_IRQS, &off);
	close(d->irq_fd);
	d->irq_fd = -1;
}
