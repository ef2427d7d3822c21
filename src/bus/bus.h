/* SPDX-License-Identifier: BSD-3-Clause */
/* The bus: everything the myri10ge driver needs from the machine, and nothing more.
 *
 * BAR0 is a plain memory mapping on every bus: the driver stores into it exactly as it
 * would into a VFIO BAR mapping (spec §10.1), and the device model watches the same memory.
 * Implementations: vfio (src/pci/), the in-process model (src/sim/sim_bus.c), the model
 * daemon's client (src/bus/simd_bus.c).
 */
#ifndef MYRIO_BUS_H
#define MYRIO_BUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct myrio_bus;
struct myrio_dma_region;

struct myrio_bus_ops {
	/* Makes the region reachable by the device; sets r->iova and r->bus. */
	int (*dma_map)(struct myrio_bus *bus, struct myrio_dma_region *r);
	void (*dma_unmap)(struct myrio_bus *bus, struct myrio_dma_region *r);
	/* Waits about us microseconds for the device (command and handoff polling). On the
	 * stepped model this is where the model advances. */
	void (*delay_us)(struct myrio_bus *bus, unsigned us);
	/* PCI configuration space (command register, vendor-specific capability §1.7). */
	int (*cfg_read)(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t *val);
	int (*cfg_write)(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t val);
	/* An eventfd signalled on each device interrupt; -ENOTSUP if the bus has none. */
	int (*irq_fd)(struct myrio_bus *bus);
	/* Before every reset sequence: msi wires MSI to the eventfd (off, then on: a NIC that
	 * rebooted lost its MSI state while the host kept its own); !msi leaves MSI off and
	 * INTx masked. NULL: the bus has no host-side interrupt state (irq_fd does it all). */
	int (*irq_setup)(struct myrio_bus *bus, bool msi);
	/* Before every reset sequence of a NIC with several slices: MSI-X with n vectors, vector
	 * i signalling fds[i] (§6.4). NULL or -ENOTSUP: the bus cannot; the slices run polled. */
	int (*irq_vectors)(struct myrio_bus *bus, unsigned n, int *fds);
	/* The device's time in nanoseconds, for timeouts the driver measures (the watchdog):
	 * a stepped model's virtual clock. NULL: the host's monotonic clock. */
	uint64_t (*now_ns)(struct myrio_bus *bus);
	/* Function-level reset where supported; -ENOTSUP otherwise. */
	int (*reset)(struct myrio_bus *bus);
	/* Wakes a device that sleeps when idle (see sleeping below); NULL if it never does. */
	void (*wake)(struct myrio_bus *bus);
	void (*close)(struct myrio_bus *bus);
};

struct myrio_bus {
	const struct myrio_bus_ops *ops;
	volatile uint8_t *bar0;
	size_t bar0_len;
	char kind[16];	/* "sim", "simd", "vfio" */
	char name[64];	/* device name or PCI address */
	unsigned holds; /* users besides the opener: regions mapped on it (myrio_bus_hold) */
	/* A device model sleeps when idle, 1 here while it does (docs/model-daemon.md,
	 * "Idle"); NULL: the device never sleeps (hardware polls its SRAM all the time). */
	const _Atomic uint32_t *sleeping;
	bool closing; /* the opener closed it; really closed when the last hold goes */
	struct myrio_bus_hook *at_close; /* run by myrio_bus_close, then forgotten */
};

/* The host's monotonic clock in nanoseconds; what now_ns reads when a bus has no clock. */
uint64_t myrio_host_now_ns(void);
static inline uint64_t myrio_bus_now_ns(struct myrio_bus *bus)
{
	return bus->ops->now_ns ? bus->ops->now_ns(bus) : myrio_host_now_ns();
}

/* A bus outlives its opener while something mapped on it holds it (a pool the application
 * destroys after closing the port): the DMA mapping and the device stay valid until the
 * last myrio_bus_release. The opener closes with myrio_bus_close (never ops->close
 * directly), after its driver has handed back every buffer. */
void myrio_bus_hold(struct myrio_bus *bus);
void myrio_bus_release(struct myrio_bus *bus);

/* After the driver posted work with BAR0 stores (a doorbell, a send commit, a command):
 * the fence orders those stores before the load, against the model's store of the word
 * and its last look at SRAM. Costs a NULL test on hardware. */
static inline void myrio_bus_posted(struct myrio_bus *bus)
{
	if (bus->sleeping) {
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(bus->sleeping, memory_order_relaxed))
			bus->ops->wake(bus);
	}
}
void myrio_bus_close(struct myrio_bus *bus);

/* Config-space offset of the first capability with this ID, 0 if none (or unreadable). */
unsigned myrio_bus_find_cap(struct myrio_bus *bus, unsigned id);
/* MSI-X on and unmasked, MSI off, in the device's config space, as a host's MSI-X setup
 * leaves them (-ENOTSUP: no MSI-X capability). */
int myrio_bus_msix_enable(struct myrio_bus *bus);

/* Work deferred to myrio_bus_close, when the driver has let go of every buffer (a pool
 * destroyed while the device still held some of its buffers is freed then). The hook lives
 * in its owner's memory; fn may drop the owner's hold. */
struct myrio_bus_hook {
	void (*fn)(struct myrio_bus_hook *hook);
	struct myrio_bus_hook *next;
};
void myrio_bus_at_close(struct myrio_bus *bus, struct myrio_bus_hook *hook);

/* Whether a driver takes the PCI function at addr with these IDs; says why not. */
typedef bool (*myrio_pci_claim_fn)(const char *addr, uint16_t vendor, uint16_t device);

/* Opens the bus a device string names ("sim:X", "simd:X[@sock]", "DDDD:BB:DD.F"). A PCI
 * function whose IDs claim (if not NULL) refuses is refused before VFIO opens it (opening
 * resets it). */
struct myrio_sim;
int myrio_bus_open(const char *device, struct myrio_sim *sim, myrio_pci_claim_fn claim,
		   struct myrio_bus **out);

/* Back-ends, selected by myrio_bus_open. */
int myrio_sim_bus_open(struct myrio_sim *sim, const char *nic, struct myrio_bus **out);
int myrio_simd_bus_open(const char *nic, const char *socket_path, struct myrio_bus **out);
int myrio_vfio_bus_open(const char *pci_addr, myrio_pci_claim_fn claim, struct myrio_bus **out);

#endif
