/* What a real board under VFIO does that a forgiving model would hide, each against a model
 * made as strict as the board in that respect (docs/driver.md "Real hardware"). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver_env.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(polled_port_masks_intx_and_deasserts),
	    cmocka_unit_test(irq_port_has_msi_from_the_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
