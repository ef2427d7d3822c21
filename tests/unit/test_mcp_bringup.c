/* SPDX-License-Identifier: BSD-3-Clause */
/* Bring-up order (§8.2, §8.3, §8.4), firmware load and handoff (§2.2, §2.4) and bad input,
 * against the fake NIC of fake_nic.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <unistd.h>

#include "fake_nic.h"
#include "mcp/nic.h"
#include "port/port_ops.h"

static const uint32_t adopt_order[] = {
	/* probe (§8.1) */
	MCP_CMD_GET_MAX_TSO6_HDR_SIZE, MCP_CMD_GET_RX_RING_SIZE, MCP_CMD_GET_SEND_RING_SIZE,
	/* reset (§8.2) */
	MCP_CMD_RESET, MCP_CMD_DMA_TEST, MCP_CMD_DMA_TEST, MCP_CMD_DMA_TEST,
	MCP_CMD_SET_RSS_MCP_SLOT_TYPE, MCP_CMD_SET_INTRQ_SIZE, MCP_CMD_SET_INTRQ_DMA,
	MCP_CMD_GET_IRQ_ACK_OFFSET, MCP_CMD_GET_IRQ_DEASSERT_OFFSET,
	MCP_CMD_GET_INTR_COAL_DELAY_OFFSET, MCP_CMD_SET_MAC_ADDRESS, MCP_CMD_ENABLE_FLOW_CONTROL,
	MCP_CMD_DISABLE_PROMISC,
	/* the multicast filter, emptied (§7.4) */
	MCP_CMD_ENABLE_ALLMULTI, MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS, MCP_CMD_DISABLE_ALLMULTI,
	/* open (§8.3) */
	MCP_CMD_GET_SEND_OFFSET, MCP_CMD_GET_SMALL_RX_OFFSET, MCP_CMD_GET_BIG_RX_OFFSET,
	MCP_CMD_GET_RX_RING_SIZE, MCP_CMD_GET_SEND_RING_SIZE, MCP_CMD_SET_STATS_DMA_V2,
	MCP_CMD_SET_MTU, MCP_CMD_SET_SMALL_BUFFER_SIZE, MCP_CMD_SET_BIG_BUFFER_SIZE,
	MCP_CMD_SET_TSO_MODE, MCP_CMD_ETHERNET_UP,
	/* close (§8.4) */
	MCP_CMD_ETHERNET_DOWN,
};

/* As myrio_port_conf_init, without pulling the port layer into this test. */
static void conf_defaults(struct myrio_port_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->mtu = 1500;
	conf->adopt_firmware = true;
}

static unsigned find_op(struct fake_nic *f, uint32_t op)
{
	for (unsigned i = 0; i < f->nops; i++)
		if (f->ops[i] == op)
			return i;
	fail_msg("command %u never sent", op);
	return 0;
}

static void adopt_bringup_follows_linux_order(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	struct myrio_port *port;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), 0);
	assert_true(f->rings_full_at_up);
	assert_int_equal(f->handoffs, 0);
	assert_int_equal(f->dummy_rdmas, 1);
	struct myrio_port_info info;
	memset(&info, 0, sizeof(info));
	assert_int_equal(port->ops->info(port, &info), 0);
	struct myrio_port_attr a[8];
	assert_int_equal(port->ops->attrs(port, a, 8), 6);
	assert_string_equal(a[0].name, "fw_version");
	assert_string_equal(a[0].value, "1.4.57 -- fake");
	assert_string_equal(a[1].name, "serial");
	assert_string_equal(a[1].value, "424242");
	assert_string_equal(a[2].name, "product");
	assert_string_equal(a[2].value, "10G-PCIE-8B-S");
	const uint8_t mac[6] = {0x00, 0x60, 0xdd, 0x43, 0x21, 0x07};
	assert_memory_equal(info.mac, mac, 6);
	assert_int_equal(info.rx_ring_entries, 512);
	assert_int_equal(info.tx_ring_entries, 1024);
	assert_int_equal(info.tx_boundary, 2048); /* adopted: unaligned flavour (§2.3) */
	assert_int_equal(port->ops->link(port), MYRIO_LINK_UNKNOWN);
	port->ops->close(port);
	assert_int_equal(f->dummy_rdmas, 2); /* turned off again before the memory went */

	assert_int_equal(f->nops, sizeof(adopt_order) / sizeof(adopt_order[0]));
	for (unsigned i = 0; i < f->nops; i++)
		assert_int_equal(f->ops[i], adopt_order[i]);
	assert_int_equal(f->d0[find_op(f, MCP_CMD_SET_INTRQ_SIZE)], 2 * 512 * 4);
	assert_int_equal(f->d0[find_op(f, MCP_CMD_SET_MTU)], 1518);
	unsigned mac_at = find_op(f, MCP_CMD_SET_MAC_ADDRESS);
	assert_int_equal(f->d0[mac_at], 0x0060dd43);
	assert_int_equal(f->d1[mac_at], 0x2107);
	assert_int_equal(f->d2[find_op(f, MCP_CMD_SET_STATS_DMA_V2)] & 0xffff, 64);
	unsigned big = find_op(f, MCP_CMD_SET_BIG_BUFFER_SIZE);
	assert_true(f->d0[big] >= 1518 + 2);
	/* the DMA tests: read, write, both, with len = tx_boundary */
	unsigned t = find_op(f, MCP_CMD_DMA_TEST);
	assert_int_equal(f->d2[t], 2048u << 16);
	assert_int_equal(f->d2[t + 1], 2048u);
	assert_int_equal(f->d2[t + 2], 2048u * 0x10001u);
	/* coalescing register written */
	assert_int_equal(fake_rd(f, FAKE_COAL_OFF), 0);
	fake_nic_free(f);
}

static void jumbo_and_promisc_settings(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	conf.mtu = 9000;
	conf.promisc = true;
	conf.intr_coal_us = 25;
	struct myrio_port *port;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), 0);
	assert_int_equal(f->d0[find_op(f, MCP_CMD_SET_MTU)], 9018);
	assert_true(f->d0[find_op(f, MCP_CMD_SET_BIG_BUFFER_SIZE)] >= 9020);
	find_op(f, MCP_CMD_ENABLE_PROMISC);
	assert_int_equal(fake_rd(f, FAKE_COAL_OFF), 25);
	port->ops->close(port);
	fake_nic_free(f);
}

static char *write_image(const char *version, size_t len)
{
	static char path[64];
	strcpy(path, "/tmp/myrio-fw-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	uint8_t *img = calloc(1, len);
	for (size_t i = 0; i < len; i++)
		img[i] = (uint8_t)(i * 7);
	put_be32(img + MCP_HEADER_PTR_OFFSET, 0x400);
	uint8_t *h = img + 0x400;
	memset(h, 0, MCP_HDR_FULL_LEN);
	put_be32(h + MCP_HDR_OFF_LENGTH, MCP_HDR_FULL_LEN);
	put_be32(h + MCP_HDR_OFF_TYPE, MCP_TYPE_ETH);
	strcpy((char *)h + MCP_HDR_OFF_VERSION, version);
	assert_int_equal(write(fd, img, len), (ssize_t)len);
	close(fd);
	free(img);
	return path;
}

static void load_image_and_hand_off(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	char *path = write_image("1.4.60 -- loaded", 10001);
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	conf.firmware = path;
	struct myrio_port *port;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), 0);
	assert_int_equal(f->handoffs, 1);
	assert_int_equal(f->handoff_words[2], 0xffffffffu);
	assert_int_equal(f->handoff_words[3], MCP_FW_STAGING_OFFSET + 8);
	assert_int_equal(f->handoff_words[4], 10001 - 8);
	assert_int_equal(f->handoff_words[5], 8);
	assert_int_equal(f->handoff_words[6], 0);
	find_op(f, MCP_CMD_UNALIGNED_TEST);
	struct myrio_port_info info;
	port->ops->info(port, &info);
	struct myrio_port_attr a[1];
	assert_int_equal(port->ops->attrs(port, a, 1), 6);
	assert_string_equal(a[0].value, "1.4.60 -- loaded");
	assert_int_equal(info.tx_boundary, 4096);
	port->ops->close(port);
	fake_nic_free(f);

	/* unaligned completions: the aligned image must not run, and there is no "p" image of
	 * that name (test_driver_silicon has one) */
	f = fake_nic_new();
	f->fail_op = MCP_CMD_UNALIGNED_TEST;
	f->fail_result = MCP_ERR_UNALIGNED;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -EPROTO);
	fake_nic_free(f);
	unlink(path);
}

static void bad_images_and_headers_refused(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	struct myrio_port *port;
	/* an image of another kind: refused before anything is written */
	char *path = write_image("2.0.1", 4096);
	conf.firmware = path;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -EPROTO);
	assert_int_equal(f->handoffs, 0);
	unlink(path);
	/* a missing file without adoption */
	conf.firmware = "/nonexistent/eth_z8e.dat";
	conf.adopt_firmware = false;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -ENOENT);
	/* ... with adoption: keeps the running firmware */
	conf.adopt_firmware = true;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), 0);
	port->ops->close(port);
	/* corrupted running header */
	conf.firmware = NULL;
	put_be32((uint8_t *)f->bus.bar0 + FAKE_HDR_OFF + MCP_HDR_OFF_TYPE, 0x12345678);
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -EPROTO);
	put_be32((uint8_t *)f->bus.bar0 + MCP_HEADER_PTR_OFFSET, 0x3);
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -EINVAL);
	fake_nic_free(f);
}

static void silent_nic_fails_cleanly(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	f->mute = true;
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	struct myrio_port *port = (void *)1;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -ETIMEDOUT);
	assert_null(port);
	/* A failing command mid-way also unwinds. */
	f->mute = false;
	f->fail_op = MCP_CMD_ETHERNET_UP;
	f->fail_result = 14;
	unsigned before = f->dummy_rdmas;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -ENXIO);
	assert_int_equal(f->dummy_rdmas, before + 2); /* on, then off on the way out */
	fake_nic_free(f);
}

static void impossible_ring_sizes_refused(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	f->rx_entries = 100; /* not a power of 2 */
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	struct myrio_port *port;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -EPROTO);
	fake_nic_free(f);
}

/* Ring offsets are bounded by BAR0, not by 2 MiB: above it lie a board's doorbell windows;
 * a ring that would end past BAR0 (or an offset that wraps) is refused. */
static void ring_offsets_bounded_by_bar0(void **state)
{
	(void)state;
	const uint32_t offs[3] = {0x300000u, MCP_BAR0_MIN_LEN - 1024 * 16 + 16, 0xfffffff0u};
	const int want[3] = {0, -EPROTO, -EPROTO};
	for (int i = 0; i < 3; i++) {
		struct fake_nic *f = fake_nic_new();
		f->send_off = offs[i];
		struct myrio_port_conf conf;
		conf_defaults(&conf);
		struct myrio_port *port = NULL;
		assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), want[i]);
		if (port)
			myrio_port_close(port);
		fake_nic_free(f);
	}
}

/* The bounded waits of the boot and the close end on the bus's clock: with every sleep
 * lasting ten times what it asked for (a loaded host), a 2 s boot wait and a 1 s wait for
 * the "down" update last 2 s and 1 s, not 20 s and 10 s. */
static void waits_end_on_the_clock_not_the_sleeps(void **state)
{
	(void)state;
	struct fake_nic *f = fake_nic_new();
	f->stretch = 10;
	struct myrio_port_conf conf;
	conf_defaults(&conf);
	struct myrio_port *port;
	/* a firmware that never finishes booting: its header pointer stays 0 */
	put_be32((uint8_t *)f->bus.bar0 + MCP_HEADER_PTR_OFFSET, 0);
	uint64_t t0 = f->clock_ns;
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), -EINVAL);
	uint64_t took = f->clock_ns - t0;
	assert_true(took >= 2000000000u);
	assert_true(took <= 2000000000u + 100000000u);

	/* a NIC that answers ETHERNET_DOWN but never sends its status update */
	put_be32((uint8_t *)f->bus.bar0 + MCP_HEADER_PTR_OFFSET, FAKE_HDR_OFF);
	assert_int_equal(myrio_myri10ge_open(&f->bus, &conf, &port), 0);
	f->down_silent = true;
	t0 = f->clock_ns;
	port->ops->close(port);
	took = f->clock_ns - t0;
	assert_true(took >= 1000000000u);
	assert_true(took <= 1000000000u + 100000000u);
	fake_nic_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(adopt_bringup_follows_linux_order),
		cmocka_unit_test(jumbo_and_promisc_settings),
		cmocka_unit_test(load_image_and_hand_off),
		cmocka_unit_test(bad_images_and_headers_refused),
		cmocka_unit_test(silent_nic_fails_cleanly),
		cmocka_unit_test(impossible_ring_sizes_refused),
		cmocka_unit_test(ring_offsets_bounded_by_bar0),
		cmocka_unit_test(waits_end_on_the_clock_not_the_sleeps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
