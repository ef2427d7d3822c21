/* SPDX-License-Identifier: BSD-3-Clause */
/* What a real board under VFIO does that a forgiving model would hide, each against a model
 * made as strict as the board in that respect (docs/driver.md "Real hardware"). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_env.h"
#include "sim/fw_image.h" /* sim_fw_image_build */
#include "sim/model.h"
#include "sim/nic.h" /* the model's counters and config space */

#define STEPPED "nics=2,link=10g,stepped"

static uint32_t len_100(uint32_t i)
{
	(void)i;
	return 100;
}

static uint32_t cfg16(struct env *e, const char *nic, unsigned off)
{
	uint32_t v = 0;
	assert_int_equal(sim_nic_cfg_read(sim_nic_find(e->sim, nic), off, 2, &v), 0);
	return v;
}

#define CFG_MSI_FLAGS 0x52 /* the model's MSI capability at 0x50 */
#define CFG_DEVCTL 0x78    /* PCIe device control, the capability at 0x70 */
#define PCI_COMMAND_INTX_DISABLE 0x400

/* 1. A polled port: INTx masked at the device, the deassert handshake on every update. The
 * firmware sends no update after an INTx one until it is deasserted, so without the
 * handshake send completions stop after the first and the watchdog resets every period. */
static void polled_port_masks_intx_and_deasserts(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, STEPPED), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	struct myrio_port_info info;
	assert_int_equal(myrio_port_info(e.a, &info), 0);
	assert_false(info.caps & MYRIO_CAP_IRQ);
	/* asking for the port's capabilities turns nothing on */
	assert_false(cfg16(&e, "sim0", CFG_MSI_FLAGS) & 1);
	assert_true(cfg16(&e, "sim0", 0x04) & PCI_COMMAND_INTX_DISABLE);
	assert_int_equal(env_transfer(&e, 0, 5000, len_100), 5000);
	assert_int_equal(env_transfer(&e, 1, 5000, len_100), 5000);
	assert_true(env_drain_tx(&e));
	struct sim_nic_stats st;
	sim_nic_get_stats(sim_nic_find(e.sim, "sim0"), &st);
	assert_true(st.irqs > 10);
	assert_int_equal(st.intx_asserts, 0);
	assert_false(sim_nic_intx_line(sim_nic_find(e.sim, "sim0")));
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(e.a, &ps), 0);
	assert_int_equal(ps.watchdog_resets, 0);
	assert_int_equal(myrio_port_irq_fd(e.a), -ENOTSUP);
	env_destroy(&e);
}

/* 1. conf.irq: MSI is on before the first status update, not at the first irq_fd() call. */
static void irq_port_has_msi_from_the_start(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, STEPPED), 0);
	e.irq = true;
	assert_int_equal(env_open(&e, 1500), 0);
	assert_true(cfg16(&e, "sim1", CFG_MSI_FLAGS) & 1);
	assert_false(cfg16(&e, "sim1", 0x04) & PCI_COMMAND_INTX_DISABLE);
	struct myrio_port_info info;
	assert_int_equal(myrio_port_info(e.b, &info), 0);
	assert_true(info.caps & MYRIO_CAP_IRQ);
	int fd = myrio_port_irq_fd(e.b);
	assert_true(fd >= 0);
	assert_int_equal(env_transfer(&e, 0, 2000, len_100), 2000);
	uint64_t v = 0;
	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	assert_true(v >= 1);
	struct sim_nic_stats st;
	sim_nic_get_stats(sim_nic_find(e.sim, "sim1"), &st);
	assert_int_equal(st.intx_asserts, 0);
	env_destroy(&e);
}

/* Log lines, for what the driver says it did. */
static char log_text[1 << 16];

static void capture(enum myrio_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	size_t n = strlen(log_text);
	snprintf(log_text + n, sizeof(log_text) - n, "%s\n", msg);
}

static struct myrio_port_conf watched(struct env *e, uint32_t period_ms)
{
	struct myrio_port_conf c;
	myrio_port_conf_init(&c);
	c.sim = e->sim;
	c.watchdog_ms = period_ms;
	return c;
}

static void open_pair(struct env *e, const struct myrio_port_conf *c)
{
	assert_int_equal(myrio_port_open(&e->a, "sim:sim0", c), 0);
	assert_int_equal(myrio_port_open(&e->b, "sim:sim1", c), 0);
	myrio_port_info(e->a, &e->ia);
	myrio_port_info(e->b, &e->ib);
	assert_int_equal(myrio_port_pool_create(e->a, 2048, 2048, &e->pool_a), 0);
	assert_int_equal(myrio_port_pool_create(e->b, 2048, 2048, &e->pool_b), 0);
}

/* Runs the stepped model for ms of model time, a burst on each port every 10 us; port a
 * keeps one frame queued for sending. */
static void run_ms(struct env *e, unsigned ms)
{
	for (unsigned i = 0; i < ms * 100; i++) {
		struct myrio_pkt *p = myrio_pkt_alloc(e->pool_a), *in[32];
		if (p) {
			env_fill(myrio_pkt_data(p), 100, 0, e->ib.mac, e->ia.mac);
			p->len = 100;
			if (myrio_tx_burst(e->a, &p, 1) == 0)
				myrio_pkt_free(p);
		}
		myrio_pkt_free_bulk(in, myrio_rx_burst(e->a, in, 32));
		myrio_pkt_free_bulk(in, myrio_rx_burst(e->b, in, 32));
		myrio_sim_step(e->sim, 10);
	}
}

/* A stepped pair with a 100 ms watchdog that has moved some frames; from now on the log is
 * captured at level. Returns sim0, port a's NIC. */
static struct sim_nic *watched_pair(struct env *e, enum myrio_log_level level)
{
	assert_int_equal(env_world(e, STEPPED), 0);
	struct myrio_port_conf c = watched(e, 100);
	open_pair(e, &c);
	assert_int_equal(env_transfer(e, 0, 100, len_100), 100);
	log_text[0] = '\0';
	myrio_log_set(capture, NULL, level);
	return sim_nic_find(e->sim, "sim0");
}

/* Lets run_ms's frames arrive and drops them, so that a checked transfer can follow. */
static void settle(struct env *e)
{
	assert_true(env_drain_tx(e));
	struct myrio_pkt *in[32];
	for (int i = 0; i < 1000; i++) {
		env_pump(e);
		myrio_pkt_free_bulk(in, myrio_rx_burst(e->b, in, 32));
	}
}

/* 5. Through VFIO a removed NIC still shows its command register and IDs (VFIO's copies):
 * the watchdog must see it gone by BAR0 reading all ones, not run stuck-ring recoveries
 * against it (each blocking for command timeouts), and recover once it is back. */
static void removed_nic_seen_through_bar0(void **state)
{
	(void)state;
	struct env e;
	struct sim_nic *nic = watched_pair(&e, MYRIO_LOG_INFO);
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REMOVED, 2), 0);
	assert_int_equal(cfg16(&e, "sim0", 0x00), 0x14c1); /* what VFIO shows */
	run_ms(&e, 1000);
	assert_int_equal(myrio_port_link(e.a), MYRIO_LINK_DOWN);
	assert_non_null(strstr(log_text, "gone from the bus"));
	assert_null(strstr(log_text, "recovery failed"));
	assert_null(strstr(log_text, "reloading"));
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(e.a, &ps), 0);
	assert_int_equal(ps.watchdog_resets, 0);
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REMOVED, 0), 0);
	run_ms(&e, 500);
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
	assert_int_equal(myrio_port_stats(e.a, &ps), 0);
	assert_int_equal(ps.watchdog_resets, 1);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_true(env_drain_tx(&e));
	env_destroy(&e);
}

/* 6. After a reset (VFIO resets the function at open) the firmware boots for a while
 * before its header pointer is there: bring-up waits for it, adopting or loading. */
static void open_waits_for_the_firmware_to_boot(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, STEPPED ",boot=1500"), 0);
	struct myrio_port_conf c = watched(&e, 0);
	char path[] = "/tmp/myrio-boot-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static uint8_t img[1 << 20];
	size_t len;
	assert_int_equal(sim_fw_image_build(img, sizeof(img), "eth@1.4.61", &len), 0);
	assert_int_equal(write(fd, img, len), (ssize_t)len);
	close(fd);
	sim_nic_flr(sim_nic_find(e.sim, "sim0"));
	sim_nic_flr(sim_nic_find(e.sim, "sim1"));
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &c), 0); /* adopts */
	c.firmware = path;
	assert_int_equal(myrio_port_open(&e.b, "sim:sim1", &c), 0); /* loads */
	unlink(path);
	myrio_port_info(e.a, &e.ia);
	myrio_port_info(e.b, &e.ib);
	assert_non_null(strstr(env_attr(e.b, "fw_version"), "1.4.61"));
	assert_int_equal(myrio_port_pool_create(e.a, 2048, 2048, &e.pool_a), 0);
	assert_int_equal(myrio_port_pool_create(e.b, 2048, 2048, &e.pool_b), 0);
	assert_int_equal(env_transfer(&e, 0, 100, len_100), 100);
	env_destroy(&e);
}

/* 7. Ring and interrupt-word offsets above 2 MiB (a board's doorbell windows): inside BAR0,
 * so taken; an offset beyond BAR0 is still refused (test_mcp_bringup). */
static void rings_above_2_mib(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, STEPPED ",high_rings"), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	assert_int_equal(env_transfer(&e, 0, 3000, len_100), 3000);
	assert_int_equal(env_transfer(&e, 1, 3000, len_100), 3000);
	assert_true(env_drain_tx(&e));
	env_destroy(&e);
}

/* 8. Send-buffer DMA reads that fail (an IOMMU fault) lose RDMA tags; fifteen of them stop
 * the send engine. Fewer leave it running short: logged, counted and reset all the same. */
static void lost_rdma_tags_reported_and_reset(void **state)
{
	(void)state;
	struct env e;
	struct sim_nic *nic = watched_pair(&e, MYRIO_LOG_WARN);
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_TX_READ, 3), 0);
	run_ms(&e, 300);
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
	struct sim_nic_stats st;
	sim_nic_get_stats(nic, &st);
	assert_int_equal(st.tx_read_faults, 3);
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(e.a, &ps), 0);
	assert_int_equal(env_xstat(e.a, "rdma_tags_lost"), 3);
	assert_int_equal(ps.watchdog_resets, 1);
	assert_non_null(strstr(log_text, "3 of 15 RDMA tags lost"));
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(env_xstat(e.a, "rdma_tags_available"), 15);
	assert_true(env_drain_tx(&e));
	env_destroy(&e);
}

/* 4. Adopted EEPROM firmware 1.4.4-1.4.11 drops broadcasts unless ALLMULTI is on: ARP
 * requests would never arrive. The driver turns ALLMULTI on after every reset. */
static void adopted_old_firmware_still_gets_broadcasts(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, STEPPED ",eeprom_fw=1.4.10"), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	assert_non_null(strstr(env_attr(e.b, "fw_version"), "1.4.10"));
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	unsigned got = 0;
	for (uint32_t i = 0; i < 20; i++) {
		struct myrio_pkt *p = myrio_pkt_alloc(e.pool_a), *in[4];
		env_fill(myrio_pkt_data(p), 60, i, bcast, e.ia.mac);
		p->len = 60;
		assert_int_equal(myrio_tx_burst(e.a, &p, 1), 1);
		for (int k = 0; k < 50; k++) {
			env_pump(&e);
			uint16_t n = myrio_rx_burst(e.b, in, 4);
			for (uint16_t j = 0; j < n; j++)
				got += env_check(in[j], 60, i, bcast, e.ia.mac);
			myrio_pkt_free_bulk(in, n);
		}
	}
	assert_int_equal(got, 20);
	env_destroy(&e);
}

/* 3. A NIC that rebooted itself lost its MSI and PCIe capability state (and INTX_DISABLE):
 * recovery wires MSI again (a program asleep on the eventfd wakes), sets the read request
 * size again and, on a polled port, masks INTx again. */
static void reboot_restores_interrupts_and_mrrs(bool irq)
{
	struct env e;
	assert_int_equal(env_world(&e, STEPPED), 0);
	struct myrio_port_conf c = watched(&e, 100);
	c.irq = irq;
	open_pair(&e, &c);
	assert_int_equal(env_transfer(&e, 0, 100, len_100), 100);
	struct sim_nic *nic = sim_nic_find(e.sim, "sim1");
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_REBOOT, 0), 0);
	assert_false(cfg16(&e, "sim1", CFG_MSI_FLAGS) & 1);
	run_ms(&e, 500);
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(e.b, &ps), 0);
	assert_int_equal(ps.watchdog_resets, 1);
	assert_int_equal(!!(cfg16(&e, "sim1", CFG_MSI_FLAGS) & 1), irq);
	assert_int_equal(!!(cfg16(&e, "sim1", 0x04) & PCI_COMMAND_INTX_DISABLE), !irq);
	assert_int_equal(cfg16(&e, "sim1", CFG_DEVCTL) & 0x7000, 0x5000); /* 4096 */
	int fd = irq ? myrio_port_irq_fd(e.b) : -1;
	uint64_t v;
	while (fd >= 0 && read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
	settle(&e);
	assert_int_equal(env_transfer(&e, 0, 1000, len_100), 1000);
	if (fd >= 0)
		assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	env_destroy(&e);
}

static void reboot_restores_msi(void **state)
{
	(void)state;
	reboot_restores_interrupts_and_mrrs(true);
}

static void reboot_masks_intx_again(void **state)
{
	(void)state;
	reboot_restores_interrupts_and_mrrs(false);
}

/* Writes a model image of flavour (sim_fw_image_build) to dir/name. */
static void put_image(const char *dir, const char *name, const char *flavour)
{
	static uint8_t img[1 << 20];
	size_t len;
	assert_int_equal(sim_fw_image_build(img, sizeof(img), flavour, &len), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, len, f), len);
	fclose(f);
}

/* 2. A root complex that sends unaligned completions fails UNALIGNED_TEST, and the aligned
 * image must not run behind it (the model's sends corrupted frames there): the driver loads
 * the "p" image beside it, or refuses to start without one. */
static void unaligned_root_complex_gets_the_p_image(void **state)
{
	(void)state;
	char dir[] = "/tmp/myrio-fw-XXXXXX";
	assert_non_null(mkdtemp(dir));
	put_image(dir, "myri10ge_eth_z8e.dat", "eth@1.4.61");
	char path[256];
	snprintf(path, sizeof(path), "%s/myri10ge_eth_z8e.dat", dir);
	struct env e;
	assert_int_equal(env_world(&e, STEPPED ",unaligned_rc"), 0);
	struct myrio_port_conf c = watched(&e, 100);
	c.firmware = path;
	assert_int_equal(myrio_port_open(&e.a, "sim:sim0", &c), -EPROTO);
	put_image(dir, "myri10ge_ethp_z8e.dat", "ethp@1.4.61");
	open_pair(&e, &c);
	assert_non_null(strstr(env_attr(e.a, "fw_version"), "ethp"));
	assert_int_equal(e.ia.tx_boundary, 2048);
	assert_int_equal(env_transfer(&e, 0, 1000, len_100), 1000);
	assert_int_equal(env_transfer(&e, 1, 1000, len_100), 1000);
	/* a reboot reloads the "p" image */
	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	run_ms(&e, 500);
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(e.a, &ps), 0);
	assert_int_equal(ps.watchdog_resets, 1);
	myrio_port_info(e.a, &e.ia);
	assert_non_null(strstr(env_attr(e.a, "fw_version"), "ethp"));
	settle(&e);
	assert_int_equal(env_transfer(&e, 0, 1000, len_100), 1000);
	env_destroy(&e);
	snprintf(path, sizeof(path), "%s/myri10ge_eth_z8e.dat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/myri10ge_ethp_z8e.dat", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(polled_port_masks_intx_and_deasserts),
	    cmocka_unit_test(irq_port_has_msi_from_the_start),
	    cmocka_unit_test(removed_nic_seen_through_bar0),
	    cmocka_unit_test(open_waits_for_the_firmware_to_boot),
	    cmocka_unit_test(rings_above_2_mib),
	    cmocka_unit_test(lost_rdma_tags_reported_and_reset),
	    cmocka_unit_test(adopted_old_firmware_still_gets_broadcasts),
	    cmocka_unit_test(reboot_restores_msi),
	    cmocka_unit_test(reboot_masks_intx_again),
	    cmocka_unit_test(unaligned_root_complex_gets_the_p_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
