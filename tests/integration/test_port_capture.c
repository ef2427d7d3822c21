/* SPDX-License-Identifier: BSD-3-Clause */
/* Capture records the wire: a port's capture holds, byte for byte and in order, the frames
 * its peer receives, the checksum the NIC fills in filled in and a TSO request as the
 * segments the NIC cuts, and nothing of a frame the driver refused (one that would not
 * even fit its buffer). */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h> /* after the headers it needs */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_env.h"
#include "tso_request.h"
#include "wall_clock.h"

#define MAX_FRAMES 16

struct frames {
	unsigned n;
	uint32_t len[MAX_FRAMES];
	uint8_t data[MAX_FRAMES][70000]; /* room for a TSO request recorded whole */
};

/* The records of a pcap file written on this host (native byte order). */
static void read_pcap(const char *path, struct frames *out)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t hdr[24], rec[16];
	assert_int_equal(fread(hdr, 1, 24, f), 24);
	out->n = 0;
	while (fread(rec, 1, 16, f) == 16) {
		uint32_t incl, orig;
		memcpy(&incl, rec + 8, 4);
		memcpy(&orig, rec + 12, 4);
		assert_int_equal(incl, orig);
		assert_true(out->n < MAX_FRAMES && incl <= sizeof(out->data[0]));
		assert_int_equal(fread(out->data[out->n], 1, incl, f), incl);
		out->len[out->n++] = incl;
	}
	fclose(f);
}

/* A UDP datagram whose checksum the NIC fills in: the field holds the pseudo-header sum. */
static struct myrio_pkt *udp_offloaded(struct env *e, uint32_t payload)
{
	struct myrio_pkt *p = myrio_pkt_alloc(e->pool_a);
	assert_non_null(p);
	uint8_t *f = myrio_pkt_data(p);
	uint32_t len = 42 + payload;
	uint8_t *udp = ipv4_frame(f, e->ib.mac, e->ia.mac, 17, (uint16_t)(len - 14), 0x0a000001,
				  0x0a000002, 7);
	put_be16(udp, 1234);
	put_be16(udp + 2, 5678);
	put_be16(udp + 4, (uint16_t)(8 + payload));
	for (uint32_t i = 42; i < len; i++)
		f[i] = (uint8_t)(i * 31);
	put_be16(udp + 6, csum_fold(csum_add(0, f + 26, 8) + 17 + 8 + payload));
	p->len = len;
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 34;
	p->csum_field = 40;
	return p;
}

/* A TCP segment whose checksum the NIC fills in and whose sum gives 0: the NIC's choice of
 * 0x0000 or 0xFFFF is what capture must record. */
static struct myrio_pkt *tcp_offloaded_zero_sum(struct env *e)
{
	struct myrio_pkt *p = myrio_pkt_alloc(e->pool_a);
	assert_non_null(p);
	uint8_t *f = myrio_pkt_data(p);
	uint8_t *tcp = ipv4_frame(f, e->ib.mac, e->ia.mac, 6, 20 + 24, 0x0a000001, 0x0a000002, 9);
	memset(tcp, 0, 24);
	put_be16(tcp, 4000);
	put_be16(tcp + 2, 5000);
	tcp[12] = 5 << 4;
	tcp[13] = 0x18; /* ACK|PSH */
	uint64_t pseudo = csum_add(0, f + 26, 8) + 6 + 24;
	for (uint32_t x = 0; csum_finish(pseudo + csum_add(0, tcp, 24)) != 0; x++)
		put_be16(tcp + 20, (uint16_t)x); /* a payload word that brings the sum to 0 */
	put_be16(tcp + 16, csum_fold(pseudo));
	p->len = 58;
	p->ol_flags = MYRIO_PKT_TX_CSUM;
	p->csum_start = 34;
	p->csum_field = 50;
	return p;
}

static void capture_is_the_wire(void **state)
{
	(void)state;
	struct env e;
	assert_int_equal(env_world(&e, "stepped"), 0);
	assert_int_equal(env_open(&e, 1500), 0);
	assert_int_equal(env_link(&e, e.a, MYRIO_LINK_UP), MYRIO_LINK_UP);
	char path[] = "/tmp/myrio-capture-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(myrio_port_capture_start(e.a, path), 0);

	struct myrio_pkt *burst[4], *tso[5];
	burst[0] = udp_offloaded(&e, 301);
	burst[1] = myrio_pkt_alloc(e.pool_a); /* longer than its buffer: refused */
	assert_non_null(burst[1]);
	env_fill(myrio_pkt_data(burst[1]), 64, 1, e.ib.mac, e.ia.mac);
	burst[1]->len = burst[1]->buf_len + 64;
	assert_int_equal(tso_request(e.pool_a, e.ib.mac, e.ia.mac, 1000, 5, 1000, 0, tso), 0);
	burst[2] = tso[0];
	burst[3] = tcp_offloaded_zero_sum(&e);
	assert_int_equal(myrio_tx_burst(e.a, burst, 4), 4);

	static struct frames wire, cap;
	double until = wall_s() + 5;
	while (wire.n < 7 && wall_s() < until) {
		struct myrio_pkt *rx[8];
		uint16_t n = myrio_rx_burst(e.b, rx, 8);
		for (uint16_t i = 0; i < n; i++) {
			assert_true(wire.n < MAX_FRAMES && rx[i]->len <= sizeof(wire.data[0]));
			memcpy(wire.data[wire.n], myrio_pkt_data(rx[i]), rx[i]->len);
			wire.len[wire.n++] = rx[i]->len;
			myrio_pkt_free(rx[i]);
		}
		env_pump(&e);
	}
	assert_int_equal(wire.n, 7);   /* the datagram, five segments, the zero-sum segment */
	assert_true(env_drain_tx(&e)); /* every buffer back, the refused one included */
	myrio_port_capture_stop(e.a);
	struct myrio_port_stats st;
	assert_int_equal(myrio_port_stats(e.a, &st), 0);
	assert_int_equal(st.tx_dropped_bad, 1);

	read_pcap(path, &cap);
	unlink(path);
	assert_int_equal(cap.n, wire.n);
	for (unsigned i = 0; i < cap.n; i++) {
		assert_int_equal(cap.len[i], wire.len[i]);
		assert_memory_equal(cap.data[i], wire.data[i], cap.len[i]);
	}
	const uint8_t *z = cap.data[6]; /* 0x0000 or 0xFFFF: either verifies */
	assert_int_equal(csum_fold(csum_add(0, z + 26, 8) + 6 + 24 + csum_add(0, z + 34, 24)),
			 0xFFFF);
	env_destroy(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(capture_is_the_wire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
