/* SPDX-License-Identifier: BSD-3-Clause */
/* The e1000e port back-end against a fake 82574 whose BAR0 is plain memory and whose DMA
 * addresses are host pointers: bring-up, frames in both directions through the rings, and
 * what a device must not be trusted with (lengths past the buffer, errors, frames without
 * their end) dropped and counted with every buffer back in its pool. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "e1000e/e1000e_regs.h"
#include "mem/dma.h"
#include "myrio/log.h"
#include "port/port_ops.h"

#define BAR_LEN (128u << 10)

struct fake {
	struct myrio_bus bus;
	uint16_t ee[64]; /* EEPROM words: the MAC in 0..2 */
	int closed;
};

static volatile uint32_t *reg(struct fake *f, uint32_t off)
{
	return (volatile uint32_t *)(f->bus.bar0 + off);
}

/* The device answers where the driver waits: reset done, EEPROM word read, link up. */
static void fake_delay(struct myrio_bus *b, unsigned us)
{
	struct fake *f = (struct fake *)b;
	*reg(f, E1000E_CTRL) &= ~(1u << 26);
	uint32_t eerd = *reg(f, E1000E_EERD);
	if (eerd & E1000E_EERD_START)
		*reg(f, E1000E_EERD) = (uint32_t)f->ee[(eerd >> 2) & 63] << 16 | E1000E_EERD_DONE;
	*reg(f, E1000E_STATUS) |= E1000E_STATUS_LU;
}

static int fake_map(struct myrio_bus *b, struct myrio_dma_region *r)
{
	r->iova = (uint64_t)(uintptr_t)r->va;
	r->bus = b;
	return 0;
}

static void fake_unmap(struct myrio_bus *b, struct myrio_dma_region *r)
{
	r->bus = NULL;
	r->iova = 0;
}

static void fake_close(struct myrio_bus *b)
{
	((struct fake *)b)->closed++;
}

static const struct myrio_bus_ops fake_ops = {
    .dma_map = fake_map, .dma_unmap = fake_unmap, .delay_us = fake_delay, .close = fake_close};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	f->bus.ops = &fake_ops;
	f->bus.bar0 = calloc(1, BAR_LEN);
	f->bus.bar0_len = BAR_LEN;
	strcpy(f->bus.kind, "vfio");
	strcpy(f->bus.name, "0000:00:11.0");
	f->ee[0] = 0x5452;
	f->ee[1] = 0x1200;
	f->ee[2] = 0x5634;
	return f;
}

static void fake_free(struct fake *f)
{
	free((void *)f->bus.bar0);
	free(f);
}

static struct myrio_port *open_port(struct fake *f, uint32_t mtu, const char *args, int *rc)
{
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	conf.mtu = mtu;
	conf.driver_args = args;
	struct myrio_port *p = NULL;
	*rc = myrio_e1000e_open(&f->bus, &conf, &p);
	return p;
}

static volatile struct e1000e_rx_desc *rx_ring(struct fake *f)
{
	uint64_t a = *reg(f, E1000E_RDBAL) | (uint64_t)*reg(f, E1000E_RDBAH) << 32;
	return (volatile struct e1000e_rx_desc *)(uintptr_t)a;
}

static volatile struct e1000e_tx_desc *tx_ring(struct fake *f)
{
	uint64_t a = *reg(f, E1000E_TDBAL) | (uint64_t)*reg(f, E1000E_TDBAH) << 32;
	return (volatile struct e1000e_tx_desc *)(uintptr_t)a;
}

/* The device writes a frame of len bytes (a pattern) into descriptor i. */
static void device_rx(struct fake *f, unsigned i, uint16_t len, uint8_t status, uint8_t errors)
{
	volatile struct e1000e_rx_desc *d = &rx_ring(f)[i];
	uint8_t *buf = (uint8_t *)(uintptr_t)d->addr;
	for (unsigned k = 0; k < len && k < E1000E_RX_BUF; k++)
		buf[k] = (uint8_t)(k * 7 + i);
	d->length = len;
	d->errors = errors;
	d->status = status;
}

static void brings_up_and_moves_frames(void **state)
{
	struct fake *f = fake_new();
	int rc;
	struct myrio_port *p = open_port(f, 1500, NULL, &rc);
	assert_int_equal(rc, 0);
	struct myrio_port_info in;
	memset(&in, 0, sizeof(in));
	assert_int_equal(p->ops->info(p, &in), 0);
	const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	assert_memory_equal(in.mac, mac, 6);
	assert_int_equal(p->ops->link(p), MYRIO_LINK_UP);
	assert_true(*reg(f, E1000E_RCTL) & E1000E_RCTL_EN);
	/* receive: three frames, handed out in order, the tail one behind the next */
	for (unsigned i = 0; i < 3; i++)
		device_rx(f, i, (uint16_t)(60 + i), E1000E_DESC_DD | E1000E_RXD_EOP, 0);
	struct myrio_pkt *pkts[8];
	assert_int_equal(p->ops->rx_burst(p, pkts, 8), 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(pkts[i]->len, 60 + i);
		assert_int_equal(myrio_pkt_data(pkts[i])[5], (uint8_t)(5 * 7 + i));
	}
	assert_int_equal(*reg(f, E1000E_RDT), 2);
	assert_int_equal(rx_ring(f)[0].status, 0); /* re-posted with a fresh buffer */
	myrio_pkt_free_bulk(pkts, 3);
	/* transmit: one descriptor per frame, one doorbell, buffers back once done */
	struct myrio_pool *pool;
	assert_int_equal(p->ops->pool_create(p, 16, MYRIO_PKT_HEADROOM + 1514, &pool), 0);
	struct myrio_pkt *out[2] = {myrio_pkt_alloc(pool), myrio_pkt_alloc(pool)};
	out[0]->len = 60;
	out[1]->len = 1514;
	assert_int_equal(p->ops->tx_burst(p, out, 2), 2);
	assert_int_equal(*reg(f, E1000E_TDT), 2);
	volatile struct e1000e_tx_desc *t = tx_ring(f);
	assert_int_equal(t[1].length, 1514);
	assert_int_equal(t[1].addr, myrio_pkt_data_iova(out[1]));
	assert_int_equal(myrio_pool_free_count(pool), 14);
	t[0].status = E1000E_DESC_DD;
	t[1].status = E1000E_DESC_DD;
	assert_int_equal(p->ops->tx_burst(p, NULL, 0), 0);
	assert_int_equal(myrio_pool_free_count(pool), 16);
	struct myrio_port_stats st;
	memset(&st, 0, sizeof(st));
	p->ops->stats(p, &st);
	assert_int_equal(st.rx_packets, 3);
	assert_int_equal(st.tx_packets, 2);
	assert_int_equal(st.tx_bytes, 60 + 1514);
	myrio_pool_destroy(pool);
	p->ops->close(p);
	assert_int_equal(f->closed, 1);
	fake_free(f);
}

static void distrusts_what_the_device_writes(void **state)
{
	struct fake *f = fake_new();
	int rc;
	struct myrio_port *p = open_port(f, 1500, NULL, &rc);
	assert_int_equal(rc, 0);
	device_rx(f, 0, 4000, E1000E_DESC_DD | E1000E_RXD_EOP, 0);   /* past the buffer */
	device_rx(f, 1, 100, E1000E_DESC_DD, 0);		     /* no end of packet */
	device_rx(f, 2, 100, E1000E_DESC_DD | E1000E_RXD_EOP, 0x01); /* CRC error */
	device_rx(f, 3, 4, E1000E_DESC_DD | E1000E_RXD_EOP, 0);	     /* shorter than a header */
	device_rx(f, 4, 64, E1000E_DESC_DD | E1000E_RXD_EOP, 0);     /* a good one */
	struct myrio_pkt *pkts[8];
	assert_int_equal(p->ops->rx_burst(p, pkts, 8), 1);
	assert_int_equal(pkts[0]->len, 64);
	myrio_pkt_free(pkts[0]);
	struct myrio_port_stats st;
	memset(&st, 0, sizeof(st));
	p->ops->stats(p, &st);
	assert_int_equal(st.rx_bad_completion, 4);
	assert_int_equal(st.rx_packets, 1);
	/* what the driver refuses to send: offloads it has not, runts, giants */
	struct myrio_pool *pool;
	assert_int_equal(p->ops->pool_create(p, 8, MYRIO_PKT_HEADROOM + 2048, &pool), 0);
	struct myrio_pkt *out[3] = {myrio_pkt_alloc(pool), myrio_pkt_alloc(pool),
				    myrio_pkt_alloc(pool)};
	out[0]->len = 100;
	out[0]->ol_flags = MYRIO_PKT_TX_CSUM;
	out[1]->len = 10;
	out[2]->len = 1600;
	assert_int_equal(p->ops->tx_burst(p, out, 3), 3); /* taken, and freed */
	assert_int_equal(*reg(f, E1000E_TDT), 0);	  /* nothing posted */
	assert_int_equal(myrio_pool_free_count(pool), 8);
	p->ops->stats(p, &st);
	assert_int_equal(st.tx_dropped_bad, 3);
	myrio_pool_destroy(pool);
	p->ops->close(p);
	fake_free(f);
}

static void quiet(enum myrio_log_level level, const char *msg, void *arg) {}

static void refuses_what_it_cannot_do(void **state)
{
	struct fake *f = fake_new();
	int rc;
	myrio_log_set(quiet, NULL, MYRIO_LOG_ERR);
	assert_null(open_port(f, 9000, NULL, &rc));
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(f->closed, 1); /* it owned the bus, and closed it */
	assert_null(open_port(f, 1500, "rx_ring=512", &rc));
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(f->closed, 2);
	myrio_log_set(NULL, NULL, MYRIO_LOG_WARN);
	fake_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(brings_up_and_moves_frames),
	    cmocka_unit_test(distrusts_what_the_device_writes),
	    cmocka_unit_test(refuses_what_it_cannot_do),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
