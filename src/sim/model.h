/* SPDX-License-Identifier: BSD-3-Clause */
/* The device model's internal API: what the in-process bus (sim_bus.c), the model daemon
 * (tools/myrio-simd) and the tests use. The public face is include/myrio/sim.h.
 *
 * A world (struct myrio_sim) holds NICs and cables and runs every NIC's firmware loop,
 * on its own thread or stepped by the caller. The driver reaches a NIC only through its
 * BAR0 memory, its config space, the DMA regions registered with it and its interrupt
 * eventfd, as it would reach a board through VFIO (spec §10).
 */
#ifndef MYRIO_SIM_MODEL_H
#define MYRIO_SIM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "myrio/sim.h"

struct sim_nic;
struct sim_endpoint;

/* Building a world: new (nothing runs yet), add NICs and cables, then start. The public
 * myrio_sim_create does exactly this with the default NICs and cables. */
int sim_world_new(const struct myrio_sim_conf *conf, struct myrio_sim **out);
int sim_world_add_nic(struct myrio_sim *sim, const char *name, const uint8_t mac[6],
		      struct sim_nic **out);
int sim_world_cable(struct sim_nic *a, struct sim_nic *b);            /* NIC to NIC */
int sim_world_cable_endpoint(struct sim_nic *nic, struct sim_endpoint *ep); /* NIC to TAP... */
int sim_world_start(struct myrio_sim *sim); /* the model thread, unless conf.stepped */
/* The NICs' interrupt eventfds go to other processes (the model daemon): signalled so that
 * nothing their holders do with them can block the model (irq_kick.c). Before the start. */
int sim_world_shared_irqs(struct myrio_sim *sim);
/* One iteration of every NIC's firmware loop and every cable; returns the work done
 * (0 when idle), so a host loop can decide to sleep. */
unsigned sim_world_run_once(struct myrio_sim *sim);

/* A threaded world that has been quiet a while sleeps until woken (docs/model-daemon.md,
 * "Idle"): it sets the word of its wake page to 1 first, and looks once more. A host that
 * posted work (a doorbell store in BAR0) and then, after a full fence, reads 1 there wakes
 * it with sim_world_wake, or by writing 1 to its NIC's wake eventfd (sim_nic_wake_fd: one
 * per attach, like the interrupt eventfd). The page (a sealed memfd, 4 KiB, writable by
 * the model only) and the NIC's eventfd are for the daemon to pass on. */
const _Atomic uint32_t *sim_world_sleeping(const struct myrio_sim *sim); /* NULL: stepped */
void sim_world_wake(struct myrio_sim *sim);
int sim_world_wake_page_fd(const struct myrio_sim *sim);
/* How many times the thread went to sleep so far (each one a system call and a wake-up). */
uint64_t sim_world_sleeps(const struct myrio_sim *sim);

struct sim_nic *sim_nic_find(struct myrio_sim *sim, const char *name);
unsigned sim_world_nic_count(const struct myrio_sim *sim);
struct sim_nic *sim_world_nic(struct myrio_sim *sim, unsigned index);
const char *sim_nic_name(const struct sim_nic *nic);

/* One driver at a time, like a PCI function bound to one process. Detach (or the driver
 * process dying, in the daemon) puts the NIC back to power-on state: running EEPROM
 * firmware, all DMA regions forgotten, no DMA, link as the cable says. */
int sim_nic_attach(struct sim_nic *nic); /* -EBUSY when attached */
void sim_nic_detach(struct sim_nic *nic);
/* Function-level reset: power-on state for the attached driver, which keeps its BAR0,
 * eventfd and DMA registrations. */
void sim_nic_flr(struct sim_nic *nic);

/* BAR0: 16 MiB of shared memory (a memfd, so the daemon can pass it on). */
volatile uint8_t *sim_nic_bar0(struct sim_nic *nic);
size_t sim_nic_bar0_len(const struct sim_nic *nic);
int sim_nic_bar0_fd(const struct sim_nic *nic);

/* DMA registration, the model's IOMMU: the device may only touch registered IOVA ranges
 * and fails loudly (and counts) on anything else. Safe to call while the model runs. */
int sim_nic_dma_map(struct sim_nic *nic, uint64_t iova, void *va, size_t len);
int sim_nic_dma_unmap(struct sim_nic *nic, uint64_t iova, size_t len);

/* Config space (256 bytes + the vendor-specific capability of §1.7). */
int sim_nic_cfg_read(struct sim_nic *nic, unsigned off, unsigned size, uint32_t *val);
int sim_nic_cfg_write(struct sim_nic *nic, unsigned off, unsigned size, uint32_t val);

/* Interrupts are delivered by adding 1 to this eventfd (§6.4, MSI). */
int sim_nic_irq_fd(const struct sim_nic *nic);
/* MSI-X (§6.4): with a vector per slice (ENABLE_RSS_QUEUES bit 0) and MSI-X enabled in
 * config space, slice s signals vector s's eventfd; vector 0 is the irq_fd above. */
int sim_nic_vector_fd(struct sim_nic *nic, unsigned vec);
int sim_nic_wake_fd(const struct sim_nic *nic);

/* Legacy INTx (§6.5): whether the NIC holds its line asserted now (MSI off, INTX_DISABLE
 * clear, the update not yet deasserted). */
bool sim_nic_intx_line(const struct sim_nic *nic);

/* Stepped mode: the bus's delay_us lands here and runs the world for that long. */
bool sim_world_is_stepped(const struct myrio_sim *sim);

/* Fault injection beyond the cable's (issue: reliability): command errors/timeouts,
 * firmware reboot, bogus completions. */
enum sim_fault {
	SIM_FAULT_REBOOT,          /* bus master off, SRAM back to EEPROM firmware (§10) */
	SIM_FAULT_CMD_TIMEOUT,     /* next command: no response */
	SIM_FAULT_CMD_ERROR,       /* next command: result = arg */
	SIM_FAULT_BAD_COMPLETION,  /* next completion entry carries length arg */
	SIM_FAULT_UNALIGNED,       /* arg != 0: UNALIGNED_TEST fails with ERROR_UNALIGNED (§2.1) */
	SIM_FAULT_TX_HANG,         /* the send engine stops, bus master stays on, until CMD_RESET;
				    * arg s + 1: only slice s's send ring (multi-TX), else all */
	SIM_FAULT_TX_READ,         /* the next arg send-buffer reads fail (an IOMMU fault): each
				    * loses an RDMA tag until CMD_RESET; with none left the send
				    * engine stops */
	SIM_FAULT_REMOVED,         /* arg != 0: off the bus (config and BAR0 read all ones, no
				    * activity); arg 2: as seen through VFIO, whose copies of the
				    * IDs and command register still read as before; arg 0: back,
				    * as at power-on */
	SIM_FAULT_HDR_PTR,         /* the next attach finds the running firmware's header
				    * pointer (SRAM 0x3C, §1.5) reading arg: corrupted SRAM */
	SIM_FAULT_FW_HANG,         /* the firmware hangs: no command answered, nothing sent or
				    * received, no status update, bus master on, the header in
				    * place; until power-on (FLR, reboot) */
};
int sim_nic_inject(struct sim_nic *nic, enum sim_fault fault, uint32_t arg);

/* The multicast filter's size [I]: SIM_MCAST_MAX groups unless a test makes it smaller
 * (1..SIM_MCAST_MAX; 0: back to SIM_MCAST_MAX), to see a driver's fallback to ALLMULTI
 * when a JOIN is refused. Linux's myri10ge treats a refused JOIN as an error and has no
 * fallback of its own (docs/device-model.md). */
#define SIM_MCAST_MAX 256u
void sim_nic_set_mcast_capacity(struct sim_nic *nic, unsigned groups);

#endif
