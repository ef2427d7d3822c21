/* SPDX-License-Identifier: BSD-3-Clause */
/* A port of several queues on a NIC of the model daemon gets an interrupt eventfd per queue
 * (MSI-X, a vector per slice, passed by the daemon), and each wakes for its own flows only,
 * as with the in-process model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipv4_frame.h"
#include "myrio/myrio.h"
#include "simd_daemon.h"

#define NQ 2
#define SRC_IP 0x0a000001u
#define DST_IP 0x0a000002u

static bool readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, ms) == 1;
}

static void each_queue_wakes_for_its_flows(void **state)
{
	(void)state;
	struct simd_daemon_proc d;
	const char *const args[] = {"--model", "eeprom_fw=rss", NULL};
	assert_int_equal(simd_daemon_start(&d, "qirq", args), 0);
	char dev_a[PATH_MAX + 16], dev_b[PATH_MAX + 16];
	snprintf(dev_a, sizeof(dev_a), "simd:nic0@%s", d.sock);
	snprintf(dev_b, sizeof(dev_b), "simd:nic1@%s", d.sock);
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	struct myrio_port *a, *b;
	assert_int_equal(myrio_port_open(&a, dev_a, &pc), 0);
	pc.irq = true;
	assert_int_equal(myrio_port_open_queues(&b, dev_b, &pc, NQ), 0);
	struct myrio_pool *pool;
	assert_int_equal(myrio_port_pool_create(a, 64, 2048, &pool), 0);
	struct myrio_port_info ia, ib;
	myrio_port_info(a, &ia);
	myrio_port_info(b, &ib);
	int fd[NQ];
	for (uint16_t q = 0; q < NQ; q++) {
		fd[q] = myrio_port_irq_fd_queue(b, q);
		assert_true(fd[q] >= 0);
	}
	assert_int_not_equal(fd[0], fd[1]);
	unsigned woke[NQ] = {0};
	for (uint16_t sport = 7000; sport < 7016; sport++) {
		int q = myrio_port_rss_flow_queue(b, 6, htonl(SRC_IP), htonl(DST_IP), htons(sport),
						  htons(80), NULL);
		assert_true(q >= 0 && q < NQ);
		for (uint16_t k = 0; k < NQ; k++) {
			struct myrio_pkt *pk[8];
			uint16_t n;
			uint64_t v;
			while ((n = myrio_rx_burst_queue(b, k, pk, 8)) > 0)
				myrio_pkt_free_bulk(pk, n);
			myrio_port_irq_arm_queue(b, k);
			while (read(fd[k], &v, sizeof(v)) == sizeof(v))
				;
		}
		struct myrio_pkt *p;
		while (!(p = myrio_pkt_alloc(pool)))
			myrio_tx_burst(a, NULL, 0);
		uint8_t *f = myrio_pkt_data(p);
		memset(f, 0, 80);
		uint8_t *l4 = ipv4_frame(f, ib.mac, ia.mac, 6, 80 - 14, SRC_IP, DST_IP, sport);
		put_be16(l4, sport);
		put_be16(l4 + 2, 80);
		p->len = 80;
		assert_int_equal(myrio_tx_burst(a, &p, 1), 1);
		assert_true(readable(fd[q], 5000));
		woke[q]++;
		for (uint16_t k = 0; k < NQ; k++)
			if (k != q)
				assert_false(readable(fd[k], 0));
	}
	printf("# queue 0 woke %u times, queue 1 %u times\n", woke[0], woke[1]);
	assert_true(woke[0] > 0 && woke[1] > 0);
	myrio_port_tx_drain(a, pool, 1000);
	myrio_pool_destroy(pool);
	myrio_port_close(b);
	myrio_port_close(a);
	assert_int_equal(simd_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_queue_wakes_for_its_flows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
