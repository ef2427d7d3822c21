/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver against the device model: bring-up, identity, link, close/reopen, firmware
 * load, and the bad inputs of the port API. Stepped model: deterministic. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_env.h"
#include "sim/fw_image.h"
#include "sim/model.h"
#include "wall_clock.h"

static uint32_t len_mixed(uint32_t i)
{
	return 60 + (i * 37) % (1514 - 60 + 1);
}

static void bringup_identity_and_link(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "stepped"), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	assert_memory_equal(env_attr(e.a, "fw_version"), "1.4.", 4);
	const uint8_t oui[3] = {0x00, 0x60, 0xdd};
	assert_memory_equal(e.ia.mac, oui, 3);
	assert_memory_not_equal(e.ia.mac, e.ib.mac, 6);
	assert_true(strlen(env_attr(e.a, "product")) > 0);
	assert_true(strlen(env_attr(e.a, "serial")) > 0);
	assert_string_equal(e.ia.bus, "sim");
	assert_string_equal(e.ia.driver, "myri10ge");
	assert_int_equal(e.ia.rx_ring_entries, 512);
	assert_int_equal(e.ia.tx_ring_entries, 1024);
	assert_int_equal(e.ia.mtu, 1500);
	assert_int_equal(e.ia.max_frame, 1518);
	assert_true(e.ia.caps & MYRIO_CAP_TX_CSUM);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	assert_int_equal(env_link(&e, e.b, MYRIO_LINK_UP), MYRIO_LINK_UP);
	struct myrio_port_stats s;
	myrio_port_stats(e.a, &s);
	assert_int_equal(env_xstat(e.a, "rdma_tags_available"), 15);
	assert_int_equal(s.link_up, 1);
	env_destroy(&e);
}

static void close_and_reopen(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "stepped"), 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(env_open(&e, 1500), 0);
		assert_int_equal(env_transfer(&e, 0, 200, len_mixed), 200);
		assert_int_equal(env_transfer(&e, 1, 200, len_mixed), 200);
		struct myrio_port_stats s;
		myrio_port_stats(e.b, &s);
		assert_int_equal(s.rx_packets, 200); /* counters restart with the port */
		assert_int_equal(s.tx_packets, 200);
		env_close_ports(&e);
	}
	env_destroy(&e);
}

static void bad_device_strings_and_busy_nic(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "stepped"), 0);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	struct myrio_port *p, *q;
	assert_true(myrio_port_open(&p, "sim:nosuchnic", &conf) < 0);
	assert_int_equal(myrio_port_open(&p, "bogus", &conf), -ENODEV);
	assert_int_equal(myrio_port_open(&p, "", &conf), -EINVAL);
	conf.sim = NULL;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -EINVAL);
	conf.sim = e.sim;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), 0);
	assert_int_equal(myrio_port_open(&q, "sim:sim0", &conf), -EBUSY); /* one driver per NIC */
	myrio_port_close(p);
	assert_int_equal(myrio_port_open(&q, "sim:sim0", &conf), 0); /* free again */
	myrio_port_close(q);
	conf.mtu = 9001;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -EINVAL);
	env_destroy(&e);
}

static void command_timeout_is_an_error_not_a_hang(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "stepped"), 0);
	struct sim_nic *nic = sim_nic_find(e.sim, "sim0");
	assert_non_null(nic);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	struct myrio_port *p = NULL;
	/* The fault arms on attach's power-on reset, so inject while attached: open, close,
	 * and inject into the detached NIC only if the model allows it. */
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_CMD_TIMEOUT, 0), 0);
	double t0 = wall_s();
	int rc = myrio_port_open(&p, "sim:sim0", &conf);
	double dt = wall_s() - t0;
	assert_int_equal(rc, -ETIMEDOUT);
	assert_null(p);
	assert_true(dt < 10);
	/* The NIC answers again: a fresh open works. */
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), 0);
	myrio_port_close(p);
	env_destroy(&e);
}

static char *write_tmp(const uint8_t *img, size_t len)
{
	static char path[64];
	strcpy(path, "/tmp/myrio_ethp_z8e-XXXXXX"); /* the name tells the flavour (§2.1) */
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, img, len), (ssize_t)len);
	close(fd);
	return path;
}

static void firmware_load_and_corrupted_image(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "stepped"), 0);
	static uint8_t img[1 << 20];
	size_t len;
	assert_int_equal(sim_fw_image_build(img, sizeof(img), "ethp@1.4.60", &len), 0);
	char *path = write_tmp(img, len);
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.sim = e.sim;
	conf.firmware = path;
	struct myrio_port *p;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), 0);
	struct myrio_port_info in;
	myrio_port_info(p, &in);
	assert_memory_equal(env_attr(p, "fw_version"), "1.4.60", 6);
	assert_int_equal(in.tx_boundary, 2048); /* the "p" flavour: unaligned completions */
	myrio_port_close(p);
	/* the aligned flavour passes UNALIGNED_TEST: 4 KiB send descriptors (§2.1) */
	size_t len2;
	static uint8_t img2[1 << 20];
	assert_int_equal(sim_fw_image_build(img2, sizeof(img2), "eth@1.4.61", &len2), 0);
	char path2[64];
	strcpy(path2, "/tmp/myrio_eth_z8e-XXXXXX");
	int fd2 = mkstemp(path2);
	assert_true(fd2 >= 0);
	assert_int_equal(write(fd2, img2, len2), (ssize_t)len2);
	close(fd2);
	conf.firmware = path2;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), 0);
	conf.firmware = path;
	myrio_port_info(p, &in);
	assert_memory_equal(env_attr(p, "fw_version"), "1.4.61", 6);
	assert_int_equal(in.tx_boundary, 4096);
	myrio_port_close(p);
	/* ... unless the chipset delivers unaligned completions: then the aligned image must
	 * not run, and without its "p" image beside it the port does not start
	 * (test_driver_silicon loads the "p" image) */
	assert_int_equal(sim_nic_inject(sim_nic_find(e.sim, "sim0"), SIM_FAULT_UNALIGNED, 1), 0);
	conf.firmware = path2;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -EPROTO);
	unlink(path2);
	conf.firmware = path;
	/* corrupted header type: refused before the NIC is touched */
	uint32_t hdr = (uint32_t)img[0x3c] << 24 | img[0x3d] << 16 | img[0x3e] << 8 | img[0x3f];
	img[hdr + 4] ^= 0x20;
	FILE *f = fopen(path, "wb");
	fwrite(img, 1, len, f);
	fclose(f);
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -EPROTO);
	unlink(path);
	/* BAR0 of a NIC nobody is attached to is nobody's: a header pointer corrupted there
	 * does not reach the next driver, which gets a BAR0 of its own at power-on */
	volatile uint8_t *bar = sim_nic_bar0(sim_nic_find(e.sim, "sim0"));
	*(volatile uint32_t *)(bar + 0x3c) = 0xfffffff0u;
	conf.firmware = NULL;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), 0);
	myrio_port_close(p);
	/* A running firmware whose SRAM is corrupted, as the driver finds it at attach: a
	 * header pointer outside the first MiB, then one at SRAM that holds no header.
	 * Nothing to adopt; the next attach finds the firmware whole again. */
	struct sim_nic *nic = sim_nic_find(e.sim, "sim0");
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_HDR_PTR, 0xfffffff0u), 0);
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -EINVAL);
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_HDR_PTR, 0x80000u), 0);
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -EINVAL);
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), 0);
	myrio_port_close(p);
	conf.firmware = path;
	/* missing image, adoption refused */
	conf.adopt_firmware = false;
	assert_int_equal(myrio_port_open(&p, "sim:sim0", &conf), -ENOENT);
	env_destroy(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bringup_identity_and_link),
		cmocka_unit_test(close_and_reopen),
		cmocka_unit_test(bad_device_strings_and_busy_nic),
		cmocka_unit_test(command_timeout_is_an_error_not_a_hang),
		cmocka_unit_test(firmware_load_and_corrupted_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
