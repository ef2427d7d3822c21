/* SPDX-License-Identifier: BSD-3-Clause */
/* The in-process model bus (src/bus/bus.h): BAR0, DMA mapping with IOVAs, delay_us that
 * steps a stepped world or sleeps on a threaded one, config space, irq_fd, close. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
/* after the headers it needs */
#include <cmocka.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mem/dma.h"
#include "sim/nic.h"
#include "util/byteorder.h"

/* One command through the bus, as the driver issues it (§3.1). */
static int bus_cmd(struct myrio_bus *b, struct myrio_dma_region *r, uint32_t op, uint32_t *data)
{
	uint8_t *resp = r->va;
	put_be32(resp + 4, 0xFFFFFFFFu);
	uint32_t w[16] = {op, 0, 0, 0, (uint32_t)(r->iova >> 32), (uint32_t)r->iova};
	for (unsigned i = 0; i < 15; i++)
		mmio_write32(b->bar0, 0xF80000 + 4 * i, w[i]);
	mmio_wmb();
	mmio_write32(b->bar0, 0xF80000 + 60, 0);
	for (unsigned i = 0; i < 200000; i++) { /* steps, or ~10 s of sleeps */
		uint32_t res = get_be32((const void *)(resp + 4));
		if (res != 0xFFFFFFFFu) {
			*data = get_be32(resp);
			return (int)res;
		}
		b->ops->delay_us(b, 1);
	}
	return -1;
}

static void run_bus(const char *spec)
{
	struct myrio_sim_conf conf;
	myrio_sim_conf_init(&conf);
	assert_int_equal(myrio_sim_conf_parse(&conf, spec), 0);
	struct myrio_sim *w;
	assert_int_equal(myrio_sim_create(&w, &conf), 0);
	struct myrio_bus *b, *b2;
	assert_int_equal(myrio_bus_open("sim:sim0", w, NULL, &b), 0);
	assert_string_equal(b->kind, "sim");
	assert_int_equal(b->bar0_len, 16u << 20);
	assert_ptr_equal(b->bar0, sim_nic_bar0(sim_nic_find(w, "sim0")));
	assert_int_equal(myrio_bus_open("sim:sim0", w, NULL, &b2), -EBUSY);
	assert_int_equal(myrio_bus_open("sim:sim9", w, NULL, &b2), -ENODEV);
	uint32_t v = 0;
	assert_int_equal(b->ops->cfg_read(b, 0, 4, &v), 0);
	assert_int_equal(v, 0x000814C1);
	assert_int_equal(b->ops->cfg_write(b, 4, 2, 0x0006), 0);
	struct myrio_dma_region r;
	assert_int_equal(myrio_dma_alloc(&r, 4096), 0);
	assert_int_equal(b->ops->dma_map(b, &r), 0);
	assert_true(r.iova >= 0x100000000ull);
	assert_ptr_equal(r.bus, b);
	uint32_t d = 0;
	assert_int_equal(bus_cmd(b, &r, 12, &d), 0);
	assert_int_equal(d, conf.rx_ring_entries * 8);
	/* a second region gets a disjoint IOVA range */
	struct myrio_dma_region r2;
	assert_int_equal(myrio_dma_alloc(&r2, 8192), 0);
	assert_int_equal(b->ops->dma_map(b, &r2), 0);
	assert_true(r2.iova >= r.iova + r.len || r2.iova + r2.len <= r.iova);
	b->ops->dma_unmap(b, &r2);
	assert_null(r2.bus);
	myrio_dma_free(&r2);
	/* function-level reset: power-on config space and firmware, mappings kept */
	assert_int_equal(b->ops->reset(b), 0);
	assert_int_equal(b->ops->cfg_read(b, 4, 2, &v), 0);
	assert_int_equal(v & 4, 0);
	assert_int_equal(b->ops->cfg_write(b, 4, 2, 0x0006), 0);
	assert_int_equal(bus_cmd(b, &r, 12, &d), 0);
	/* irq_fd enables MSI in config space */
	int fd = b->ops->irq_fd(b);
	assert_true(fd >= 0);
	assert_true(sim_cfg_msi_enabled(sim_nic_find(w, "sim0")));
	b->ops->close(b);
	assert_null(r.bus); /* the bus let go of the regions still mapped */
	/* closed: the NIC is free again and back at power-on (bus master off) */
	assert_int_equal(myrio_bus_open("sim:sim0", w, NULL, &b), 0);
	assert_int_equal(b->ops->cfg_read(b, 4, 2, &v), 0);
	assert_int_equal(v & 4, 0);
	assert_false(sim_cfg_msi_enabled(sim_nic_find(w, "sim0")));
	b->ops->close(b);
	myrio_dma_free(&r);
	myrio_sim_destroy(w);
}

static void stepped_bus(void **state)
{
	(void)state;
	run_bus("stepped");
}

static void threaded_bus(void **state)
{
	(void)state;
	run_bus("rx_ring=256");
}

static void sim_device_needs_a_world(void **state)
{
	(void)state;
	struct myrio_bus *b;
	assert_int_equal(myrio_bus_open("sim:sim0", NULL, NULL, &b), -EINVAL);
}

/* Strings no bus takes, and malformed ones of each form, are refused before anything opens. */
static void device_strings_no_bus_takes(void **state)
{
	(void)state;
	struct myrio_bus *b = (struct myrio_bus *)1;
	const char *unknown[] = {"", "eth0", "sim", "SIM:sim0", "0000:03:00", "03:00", "pair"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_int_equal(myrio_bus_open(unknown[i], NULL, NULL, &b), -ENODEV);
		assert_null(b);
	}
	assert_int_equal(myrio_bus_open("simd:", NULL, NULL, &b), -EINVAL);
	assert_int_equal(myrio_bus_open("simd:@/tmp/x", NULL, NULL, &b), -EINVAL);
	char longname[128];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "simd:", 5);
	assert_int_equal(myrio_bus_open(longname, NULL, NULL, &b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(stepped_bus),
	    cmocka_unit_test(threaded_bus),
	    cmocka_unit_test(sim_device_needs_a_world),
	    cmocka_unit_test(device_strings_no_bus_takes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
