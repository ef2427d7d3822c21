/* SPDX-License-Identifier: BSD-3-Clause */
/* The VFIO interrupt calls the driver makes before every reset sequence, against a fake
 * device: ioctl is this file's (the executable's definition wins over libc's), answering
 * VFIO_DEVICE_GET_IRQ_INFO and recording every VFIO_DEVICE_SET_IRQS. The device fd is a
 * memfd holding the function's config space, as vfio-pci presents it: virtual, where the
 * MSI enable bit is the user's to write. */
#include <errno.h>
#include <linux/vfio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pci/vfio_dev.h"
#include "util/pci_cap.h"

#define FAKE_FD 1000
#define MSI_CAP 0x50

struct set_call {
	uint32_t flags, index, start, count;
	int32_t fd; /* the eventfd passed, -1 without data */
};

static struct {
	bool has_msi, has_intx;
	struct set_call calls[16];
	unsigned n;
} fake;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != FAKE_FD) {
		errno = ENOTTY;
		return -1;
	}
	if (req == VFIO_DEVICE_GET_IRQ_INFO) {
		struct vfio_irq_info *ii = arg;
		bool has = (ii->index == VFIO_PCI_MSI_IRQ_INDEX && fake.has_msi) ||
			   (ii->index == VFIO_PCI_INTX_IRQ_INDEX && fake.has_intx);
		ii->flags = has ? VFIO_IRQ_INFO_EVENTFD : 0;
		ii->count = has ? 1 : 0;
		return 0;
	}
	if (req == VFIO_DEVICE_SET_IRQS && fake.n < 16) {
		const struct vfio_irq_set *s = arg;
		struct set_call *c = &fake.calls[fake.n++];
		*c = (struct set_call){s->flags, s->index, s->start, s->count, -1};
		if ((s->flags & VFIO_IRQ_SET_DATA_EVENTFD) && s->count == 1)
			memcpy(&c->fd, s->data, sizeof(c->fd));
		return 0;
	}
	errno = EINVAL;
	return -1;
}

/* Config space with one capability, MSI, at MSI_CAP. */
static void dev_init(struct myrio_vfio_dev *d)
{
	memset(d, 0, sizeof(*d));
	memset(&fake, 0, sizeof(fake));
	strcpy(d->bus.name, "fake");
	int mfd = memfd_create("cfg", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	uint8_t cfg[256] = {0};
	cfg[0x06] = 0x10; /* status: capability list */
	cfg[0x34] = MSI_CAP;
	cfg[MSI_CAP] = PCI_CAP_ID_MSI;
	assert_int_equal(pwrite(mfd, cfg, sizeof(cfg), 0), (ssize_t)sizeof(cfg));
	assert_int_equal(dup2(mfd, FAKE_FD), FAKE_FD);
	close(mfd);
	d->device = FAKE_FD;
	d->cfg_size = sizeof(cfg);
	d->num_irqs = VFIO_PCI_NUM_IRQS;
	d->irq_fd = d->intx_fd = -1;
}

static void dev_fini(void)
{
	close(FAKE_FD);
}

/* What the driver reads back to know its interrupt mode (src/mcp/nic.c's msi_on). */
static bool msi_enabled_in_config(void)
{
	uint16_t flags = 0;
	assert_int_equal(pread(FAKE_FD, &flags, 2, MSI_CAP + PCI_MSI_FLAGS), 2);
	return flags & PCI_MSI_FLAGS_ENABLE;
}

static bool is_off(const struct set_call *c, uint32_t index)
{
	return c->index == index && c->count == 0 &&
	       c->flags == (VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER);
}

static bool is_trigger(const struct set_call *c, uint32_t index, int fd)
{
	return c->index == index && c->count == 1 && c->fd == fd &&
	       c->flags == (VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER);
}

/* MSI wired at open; after a reboot wired again through VFIO (off, then on) with the same
 * eventfd, since VFIO would otherwise believe MSI still on in a device that forgot it. */
static void msi_rearmed_with_the_same_eventfd(void **state)
{
	(void)state;
	struct myrio_vfio_dev d;
	dev_init(&d);
	fake.has_msi = fake.has_intx = true;
	int fd = myrio_vfio_irq_setup(&d.bus, true);
	assert_true(fd >= 0);
	assert_int_equal(fake.n, 1);
	assert_true(is_trigger(&fake.calls[0], VFIO_PCI_MSI_IRQ_INDEX, fd));
	assert_true(msi_enabled_in_config());
	assert_int_equal(myrio_vfio_irq_setup(&d.bus, true), fd);
	assert_int_equal(fake.n, 3);
	assert_true(is_off(&fake.calls[1], VFIO_PCI_MSI_IRQ_INDEX));
	assert_true(is_trigger(&fake.calls[2], VFIO_PCI_MSI_IRQ_INDEX, fd));
	assert_true(msi_enabled_in_config());
	assert_int_equal(myrio_vfio_irq_fd(&d.bus), fd);
	myrio_vfio_irq_close(&d);
	assert_true(is_off(&fake.calls[fake.n - 1], VFIO_PCI_MSI_IRQ_INDEX));
	assert_false(msi_enabled_in_config());
	dev_fini();
}

/* A polled port: INTx taken by VFIO and masked there, again after every reset. */
static void polled_port_masks_intx(void **state)
{
	(void)state;
	struct myrio_vfio_dev d;
	dev_init(&d);
	fake.has_msi = fake.has_intx = true;
	assert_int_equal(myrio_vfio_irq_setup(&d.bus, false), 0);
	assert_int_equal(fake.n, 2);
	assert_true(d.intx_fd >= 0);
	assert_true(is_trigger(&fake.calls[0], VFIO_PCI_INTX_IRQ_INDEX, d.intx_fd));
	const struct set_call *m = &fake.calls[1];
	assert_int_equal(m->flags, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_MASK);
	assert_int_equal(m->index, VFIO_PCI_INTX_IRQ_INDEX);
	assert_int_equal(m->count, 1);
	assert_int_equal(myrio_vfio_irq_setup(&d.bus, false), 0); /* after a reboot */
	assert_int_equal(fake.n, 3);
	assert_int_equal(fake.calls[2].flags, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_MASK);
	myrio_vfio_irq_close(&d);
	assert_true(is_off(&fake.calls[fake.n - 1], VFIO_PCI_INTX_IRQ_INDEX));
	assert_int_equal(d.intx_fd, -1);
	assert_false(msi_enabled_in_config());
	dev_fini();
}

/* A function without MSI: asking for it fails (the driver then runs polled). */
static void no_msi_no_interrupts(void **state)
{
	(void)state;
	struct myrio_vfio_dev d;
	dev_init(&d);
	fake.has_intx = true;
	assert_int_equal(myrio_vfio_irq_setup(&d.bus, true), -ENOTSUP);
	assert_int_equal(fake.n, 0);
	dev_fini();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(msi_rearmed_with_the_same_eventfd),
	    cmocka_unit_test(polled_port_masks_intx),
	    cmocka_unit_test(no_msi_no_interrupts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
