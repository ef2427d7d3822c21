/* SPDX-License-Identifier: BSD-3-Clause */
/* One model NIC: creation, power-on and logical reset (§2.5), the firmware loop that the
 * world runs (one iteration = look at every trigger word once, move a batch of frames),
 * attach/detach, fault injection. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/fw_abi.h"
#include "sim/nic.h"
#include "util/log.h"

#define SCRATCH_LEN (160u * 1024) /* a TSO request and one segment (tx_tso.c) */

bool sim_nic_ratelimit(struct sim_nic *nic, enum sim_diag kind)
{
	unsigned n = nic->log_budget[kind]++;
	return n < 16 || (n & 4095) == 0;
}

void sim_nic_default_mac(unsigned index, uint8_t mac[6])
{
	static const uint8_t oui[3] = {0x00, 0x60, 0xdd};
	memcpy(mac, oui, 3);
	mac[3] = 0x4d; /* 'M'odel */
	mac[4] = (uint8_t)(index >> 8);
	mac[5] = (uint8_t)(index + 1);
}

int sim_nic_new(struct myrio_sim *w, unsigned index, const char *name, const uint8_t mac[6],
		struct sim_nic **out)
{
	struct sim_nic *nic = aligned_alloc(64, (sizeof(*nic) + 63) & ~(size_t)63);
	if (!nic)
		return -ENOMEM;
	memset(nic, 0, sizeof(*nic));
	nic->world = w;
	nic->index = index;
	nic->bar_fd = -1;
	nic->irq_fd = -1;
	nic->wake_fd = -1;
	for (unsigned s = 0; s < SIM_MAX_SLICES; s++)
		nic->sl[s].irq_fd = -1;
	nic->rings_at = w->conf.high_rings ? SIM_HIGH_RINGS_SHIFT : 0;
	snprintf(nic->name, sizeof(nic->name), "%s", name);
	if (mac)
		memcpy(nic->eeprom_mac, mac, 6);
	else
		sim_nic_default_mac(index, nic->eeprom_mac);
	int rc = -ENOMEM;
	nic->scratch = malloc(SCRATCH_LEN);
	if (!nic->scratch)
		goto fail;
	if (sim_dma_init(&nic->dma) < 0)
		goto fail;
	rc = sim_sram_create(nic);
	if (rc < 0)
		goto fail;
	nic->irq_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (nic->irq_fd < 0) {
		rc = -errno;
		log_err("%s: cannot create the interrupt eventfd: %s", name, strerror(errno));
		goto fail;
	}
	sim_nic_power_on(nic);
	*out = nic;
	return 0;
fail:
	sim_nic_free(nic);
	return rc;
}

void sim_nic_free(struct sim_nic *nic)
{
	if (!nic)
		return;
	sim_sram_destroy(nic);
	sim_wake_detach(nic);
	sim_slices_close_vectors(nic);
	if (nic->irq_fd >= 0)
		close(nic->irq_fd);
	if (atomic_load(&nic->dma.table))
		sim_dma_destroy(&nic->dma);
	free(nic->scratch);
	free(nic);
}

/* CMD_RESET: every parameter, counter, index, token and ring forgotten (§2.5, §10). */
void sim_nic_logical_reset(struct sim_nic *nic)
{
	const struct myrio_sim_conf *conf = &nic->world->conf;
	nic->running = false;
	nic->down_pending = false;
	nic->rx_entries = conf->rx_ring_entries;
	nic->tx_entries = conf->tx_ring_entries;
	nic->intrq_bytes = nic->intrq_mask = 0;
	nic->intrq_size_set = false;
	nic->small_size = nic->big_size = nic->always_n = 0;
	nic->mtu = 1518; /* [I] until SET_MTU */
	memcpy(nic->mac, nic->eeprom_mac, 6);
	nic->promisc = false;
	/* [I] multicast filtering starts off (docs), except on the firmware with the broadcast
	 * filter bug, whose filter starts on and takes broadcasts with it */
	nic->allmulti = !nic->fw.rx_filter_bug;
	nic->flow_control = false;
	nic->relax_align = false;
	nic->n_mcast = 0;
	nic->max_rss_queried = false;
	nic->slices = 1;
	nic->multi_tx = false;
	nic->vec_per_slice = false;
	nic->rss_enabled = false;
	nic->rss_table_size = nic->rss_hash = 0;
	nic->tso_mode = 0;
	nic->throttle = 0;
	nic->tx_boundary = nic->fw.unaligned ? SIM_TX_BOUNDARY_UNALIGNED : SIM_TX_BOUNDARY_ALIGNED;
	nic->fault_tx_hang = false;
	nic->rdma_tags = 15;
	nic->tso.active = false;
	sim_slices_reset(nic);
	sim_rss_reset(nic);
	memset(&nic->ctr, 0, sizeof(nic->ctr));
	nic->i2c_busy_until = 0;
	sim_irq_reset(nic);
	sim_sram_init_rings(nic);
}

/* Power-on (and self-reboot): config space, SRAM and the EEPROM firmware (§2.3, §10). */
void sim_nic_power_on(struct sim_nic *nic)
{
	sim_cfg_power_on(nic);
	sim_sram_power_on(nic);
	sim_fw_adopt_eeprom(nic);
	nic->booted_at = 0;
	nic->dummy_rdma_on = false;
	nic->fault_cmd_timeout = nic->fault_cmd_error = nic->fault_bad_completion = false;
	sim_nic_logical_reset(nic);
	sim_irq_drain(nic->irq_fd);
}

/* Multiple TX queues (§5.9): the host starts and stops each slice's send ring. STOP is
 * taken before GO: both in one iteration means "drained, then posted again" (a GO then
 * STOP pair needs the ring to drain in between, i.e. an iteration of ours). */
static unsigned send_go_stop(struct sim_nic *nic)
{
	unsigned work = 0;
	for (unsigned s = 0; s < nic->slices; s++) {
		uint32_t stop_off = SIM_SEND_STOP_OFF + SIM_DOORBELL_STRIDE * s;
		uint32_t go_off = SIM_SEND_GO_OFF + SIM_DOORBELL_STRIDE * s;
		bool stop = sim_rd32_raw(nic, stop_off) != SIM_POISON;
		bool go = sim_rd32_raw(nic, go_off) != SIM_POISON;
		if (stop) {
			sim_wr32_raw(nic, stop_off, SIM_POISON);
			nic->sl[s].tx_active = false;
			work++;
		}
		if (go) {
			sim_wr32_raw(nic, go_off, SIM_POISON);
			nic->sl[s].tx_active = !nic->sl[s].tx_hung;
			work++;
		}
	}
	return work;
}

/* After a reset or a reboot the firmware boots for conf.boot_ms: SRAM holds no header
 * pointer yet and nothing answers. */
static void hide_header(struct sim_nic *nic)
{
	nic->boot_hdr = sim_rd32_raw(nic, SIM_HDR_PTR_OFF);
	sim_wr32_raw(nic, SIM_HDR_PTR_OFF, 0);
}

static void start_boot(struct sim_nic *nic)
{
	uint32_t ms = nic->world->conf.boot_ms;
	if (!ms)
		return;
	hide_header(nic);
	nic->booted_at = sim_world_now(nic->world) + (uint64_t)ms * 1000000u;
}

static bool booting(struct sim_nic *nic, uint64_t now)
{
	if (now < nic->booted_at)
		return true;
	sim_wr32_raw(nic, SIM_HDR_PTR_OFF, nic->boot_hdr);
	nic->booted_at = 0;
	return false;
}

unsigned sim_nic_poll(struct sim_nic *nic, uint64_t now)
{
	/* A NIC nobody is attached to runs nothing: its BAR0 is nobody's to write. */
	if (atomic_load_explicit(&nic->halted, memory_order_acquire) ||
	    __builtin_expect(atomic_load_explicit(&nic->removed, memory_order_relaxed), 0) ||
	    __builtin_expect(!atomic_load_explicit(&nic->attached, memory_order_relaxed), 0))
		return 0;
	if (__builtin_expect(nic->booted_at != 0, 0) && booting(nic, now))
		return 0;
	/* The control blocks' trigger words, looked at here in three loads: they are seldom
	 * written, and the firmware loop runs millions of times a second. */
	unsigned work = 0;
	if (__builtin_expect(sim_block_written(nic, SIM_CMD_OFF), 0) && !nic->down_pending)
		work += sim_cmd_poll(nic, now);
	if (__builtin_expect(sim_block_written(nic, SIM_HANDOFF_OFF) ||
				 sim_block_written(nic, SIM_DUMMY_RDMA_OFF),
			     0))
		work += sim_handoff_poll(nic);
	if (__builtin_expect(nic->multi_tx, 0))
		work += send_go_stop(nic);
	if (nic->running && !nic->fault_tx_hang && nic->rdma_tags)
		work += sim_tx_poll(nic, now);
	if (__builtin_expect(nic->down_pending, 0))
		work += sim_cmd_down_poll(nic, now);
	work += sim_irq_poll(nic, now);
	if (__builtin_expect(nic->dummy_rdma_on, 0) && now >= nic->dummy_rdma_next) {
		/* §2.6: read-only, every millisecond; an unmapped target is logged and counted */
		nic->dummy_rdma_next = now + 1000000;
		if (sim_dma(nic, nic->dummy_rdma_iova, 4, "dummy RDMA read"))
			nic->dummy_rdma_reads++;
	}
	return work;
}

void sim_nic_link_changed(struct sim_nic *nic, bool up)
{
	if (atomic_load_explicit(&nic->halted, memory_order_acquire))
		return; /* detach or reboot in progress: it reads the cable itself */
	nic->link_state = up ? 1 : 0;
	if (nic->running) {
		nic->stats_pending = true;
		sim_irq_event(nic, sim_world_now(nic->world));
	}
}

/* Stops the model loop from touching the NIC while another thread changes it. */
static void halt(struct sim_nic *nic)
{
	atomic_store(&nic->halted, true);
	sim_world_sync(nic->world);
}
static void resume(struct sim_nic *nic)
{
	atomic_store(&nic->halted, false);
}

/* Every attach gets a BAR0 and an interrupt eventfd of its own, made while the NIC is
 * halted: whoever held the previous ones (a former owner that kept its mapping) writes
 * into memory the model no longer reads and is never signalled again. */
static int fresh_bar_and_irq(struct sim_nic *nic)
{
	uint8_t *old_bar = nic->bar;
	int old_fd = nic->bar_fd;
	int irq = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (irq < 0)
		return -errno;
	int rc = sim_sram_create(nic);
	if (rc < 0) {
		close(irq);
		return rc;
	}
	munmap(old_bar, SIM_BAR0_LEN);
	close(old_fd);
	close(nic->irq_fd);
	nic->irq_fd = irq;
	sim_slices_close_vectors(nic);
	/* Fresh diagnostics for every driver, not for every reset it asks for: a reset
	 * loop would otherwise log without bound. */
	memset(nic->log_budget, 0, sizeof(nic->log_budget));
	sim_sram_power_on(nic);
	if (nic->fault_hdr_ptr) {
		sim_wr32_raw(nic, SIM_HDR_PTR_OFF, nic->fault_hdr_ptr_val);
		nic->fault_hdr_ptr = false;
	}
	if (nic->booted_at) /* still booting: the new BAR0 shows no header either */
		hide_header(nic);
	return 0;
}

int sim_nic_attach(struct sim_nic *nic)
{
	bool expected = false;
	if (!atomic_compare_exchange_strong(&nic->attached, &expected, true)) {
		log_err("%s: already attached to a driver; one driver per NIC, like a PCI "
			"function bound to one process",
			nic->name);
		return -EBUSY;
	}
	halt(nic);
	int rc = fresh_bar_and_irq(nic);
	if (rc == 0)
		rc = sim_wake_attach(nic);
	resume(nic);
	if (rc < 0) {
		log_err("%s: attach: no BAR0 or eventfd for the new driver: %s", nic->name,
			strerror(-rc));
		atomic_store(&nic->attached, false);
	}
	return rc;
}

void sim_nic_detach(struct sim_nic *nic)
{
	halt(nic);
	sim_wake_detach(nic);
	sim_dma_forget_all(nic);
	sim_nic_power_on(nic);
	if (nic->cable)
		nic->link_state = nic->cable->up;
	resume(nic);
	atomic_store(&nic->attached, false);
}

/* Function-level reset (fw >= 1.4.45, §1.2): config space, SRAM and firmware back to
 * power-on, as after a reboot; the host's DMA registrations (its IOMMU) stay. */
void sim_nic_flr(struct sim_nic *nic)
{
	halt(nic);
	sim_nic_power_on(nic);
	if (nic->cable)
		nic->link_state = nic->cable->up;
	start_boot(nic);
	resume(nic);
}

int sim_nic_inject(struct sim_nic *nic, enum sim_fault fault, uint32_t arg)
{
	int rc = 0;
	halt(nic);
	switch (fault) {
	case SIM_FAULT_REBOOT:
		log_info("%s: injected fault: firmware reboot", nic->name);
		sim_nic_power_on(nic);
		nic->reboot_status = 0x00000001u | arg << 8;
		if (nic->cable)
			nic->link_state = nic->cable->up;
		start_boot(nic);
		break;
	case SIM_FAULT_CMD_TIMEOUT:
		nic->fault_cmd_timeout = true;
		break;
	case SIM_FAULT_CMD_ERROR:
		nic->fault_cmd_error = true;
		nic->fault_cmd_error_val = arg;
		break;
	case SIM_FAULT_BAD_COMPLETION:
		nic->fault_bad_completion = true;
		nic->fault_bad_completion_len = arg;
		break;
	case SIM_FAULT_UNALIGNED:
		nic->fault_unaligned = arg != 0;
		break;
	case SIM_FAULT_TX_READ:
		nic->fault_tx_read_fail = arg;
		break;
	case SIM_FAULT_TX_HANG:
		if (arg > SIM_MAX_SLICES) {
			rc = -EINVAL;
		} else if (arg) { /* one slice's send ring (multi-TX, §5.9) */
			log_info("%s: injected fault: slice %u's send ring hangs", nic->name,
				 arg - 1);
			nic->sl[arg - 1].tx_hung = true;
			nic->sl[arg - 1].tx_active = false;
		} else {
			log_info("%s: injected fault: send engine hangs", nic->name);
			nic->fault_tx_hang = true;
		}
		break;
	case SIM_FAULT_FW_HANG:
		/* The firmware loop stops: a boot that never ends runs nothing (sim_nic_poll)
		 * while the header stays; power-on (FLR, reboot) ends it. */
		log_info("%s: injected fault: the firmware hangs", nic->name);
		nic->running = false;
		nic->booted_at = UINT64_MAX;
		break;
	case SIM_FAULT_REMOVED:
		log_info("%s: injected fault: %s the bus", nic->name, arg ? "off" : "back on");
		if (!arg) { /* a card inserted again starts from power-on */
			sim_nic_power_on(nic);
			if (nic->cable)
				nic->link_state = nic->cable->up;
		} else {
			sim_sram_gone(nic);
		}
		nic->removed_vfio = arg == 2;
		atomic_store(&nic->removed, arg != 0);
		break;
	case SIM_FAULT_HDR_PTR:
		nic->fault_hdr_ptr = true;
		nic->fault_hdr_ptr_val = arg;
		break;
	default:
		rc = -EINVAL;
	}
	resume(nic);
	return rc;
}

volatile uint8_t *sim_nic_bar0(struct sim_nic *nic)
{
	return nic->bar;
}
size_t sim_nic_bar0_len(const struct sim_nic *nic)
{
	(void)nic;
	return SIM_BAR0_LEN;
}
int sim_nic_bar0_fd(const struct sim_nic *nic)
{
	return nic->bar_fd;
}
int sim_nic_irq_fd(const struct sim_nic *nic)
{
	return nic->irq_fd;
}
/* MSI-X vector vec's eventfd, made at the first request of this attach (0 is the MSI one),
 * while the NIC is halted: the model thread reads it when it signals. */
int sim_nic_vector_fd(struct sim_nic *nic, unsigned vec)
{
	if (vec == 0)
		return nic->irq_fd;
	if (vec >= SIM_MAX_SLICES)
		return -EINVAL;
	if (nic->sl[vec].irq_fd >= 0)
		return nic->sl[vec].irq_fd;
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	halt(nic);
	nic->sl[vec].irq_fd = fd;
	resume(nic);
	return fd;
}

int sim_nic_wake_fd(const struct sim_nic *nic)
{
	return nic->wake_fd;
}
const char *sim_nic_name(const struct sim_nic *nic)
{
	return nic->name;
}

void sim_nic_get_stats(const struct sim_nic *nic, struct sim_nic_stats *st)
{
	*st = nic->st;
}
void sim_nic_get_counters(const struct sim_nic *nic, struct sim_counters *c)
{
	*c = nic->ctr;
}
