/* SPDX-License-Identifier: BSD-3-Clause */
/* Seeded fuzzing of a live model daemon: random protocol messages (any type, length and
 * fds) on connections of their own, and random BAR0 stores by an attached client (every
 * doorbell area, the rings, random offsets) with a DMA region registered and bus
 * mastering on. After every round the daemon must be alive and serve a fresh client.
 * MYRIO_FUZZ_SEED picks the seed (printed, so a failure replays), MYRIO_FUZZ_SECONDS the
 * time (default 3 s; tests/sh/fuzz_short.sh runs it for the fuzz pass's time). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "bus/bus.h"
#include "bus/simd_proto.h"
#include "mem/dma.h"
#include "sim/nic.h"
#include "simd_daemon.h"
#include "wall_clock.h"

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void protocol_round(const char *sock, int region_fd)
{
	int s;
	if (simd_connect(sock, &s) < 0)
		return;
	for (unsigned i = 0; i < 200; i++) {
		uint8_t buf[128];
		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (uint8_t)next();
		size_t len = 1 + next() % sizeof(buf);
		if (next() & 1) {
			struct simd_hdr h;
			simd_hdr_init(&h, (uint16_t)(next() % (SIMD_TYPE_END + 1)), i);
			memcpy(buf, &h, sizeof(h));
			if (next() & 1)
				len = sizeof(h) + simd_request_len(h.type);
			if (h.type == SIMD_ATTACH && (next() & 1))
				memcpy(buf + sizeof(h), "nic0", 5);
		}
		int fds[2] = {region_fd, region_fd};
		if (simd_send(s, buf, len, fds, (unsigned)(next() % 3)) < 0)
			break;
		struct simd_msg rep;
		int rfds[SIMD_MAX_FDS];
		unsigned rn = 0;
		ssize_t n = simd_recv_timeout(s, &rep, sizeof(rep), rfds, SIMD_MAX_FDS, &rn, 2000);
		for (unsigned k = 0; k < rn; k++)
			close(rfds[k]);
		if (n <= 0)
			break;
	}
	close(s);
}

/* Offsets worth hitting: the doorbell blocks and rings, and anywhere at all. */
static uint32_t bar_offset(void)
{
	static const uint32_t hot[] = {SIM_HDR_PTR_OFF,	   SIM_CMD_OFF,	       SIM_HANDOFF_OFF,
				       SIM_DUMMY_RDMA_OFF, SIM_SEND_GO_OFF,    SIM_SEND_STOP_OFF,
				       SIM_SEND_RING_OFF,  SIM_SMALL_RING_OFF, SIM_BIG_RING_OFF,
				       SIM_CLAIM_OFF,	   SIM_DEASSERT_OFF,   SIM_COAL_OFF,
				       SIM_STAGING_OFF};
	uint64_t r = next();
	if (r & 1)
		return (uint32_t)(next() % (SIM_BAR0_LEN / 4)) * 4;
	return hot[(r >> 1) % (sizeof(hot) / sizeof(hot[0]))] + (uint32_t)(next() % 16) * 4;
}

static void bar_round(const char *sock)
{
	struct myrio_bus *bus;
	if (myrio_simd_bus_open("nic0", sock, &bus) < 0)
		return;
	struct myrio_dma_region r = {0};
	int fd = memfd_create("fuzz-dma", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && ftruncate(fd, 1 << 20) == 0) {
		r.va = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		r.len = 1 << 20;
		r.page_size = 4096;
		r.fd = fd;
		if (r.va != MAP_FAILED && bus->ops->dma_map(bus, &r) < 0)
			r.bus = NULL;
	}
	bus->ops->cfg_write(bus, 4, 2, 0x0006);
	for (unsigned i = 0; i < 5000; i++) {
		uint32_t off = bar_offset(), v = (uint32_t)next();
		if (next() % 4 == 0) /* an address in the registered region, as the driver would */
			v = (uint32_t)(r.iova + next() % (1 << 20));
		*(volatile uint32_t *)(bus->bar0 + off) = v;
		if (i % 500 == 0)
			usleep(1000);
	}
	if (next() & 1)
		bus->ops->reset(bus);
	bus->ops->close(bus); /* the daemon forgets the region with the attachment */
	if (r.va && r.va != MAP_FAILED)
		munmap(r.va, 1 << 20);
	if (fd >= 0)
		close(fd);
}

static void fuzz_live_daemon(void **state)
{
	(void)state;
	const char *seed_s = getenv("MYRIO_FUZZ_SEED"), *secs_s = getenv("MYRIO_FUZZ_SECONDS");
	uint64_t seed = seed_s ? strtoull(seed_s, NULL, 0) : 0x5eedf00dull;
	unsigned secs = secs_s ? (unsigned)atoi(secs_s) : 3;
	rng = seed | 1;
	printf("# simd live fuzz: seed 0x%llx, %u s\n", (unsigned long long)seed, secs);
	static const char *const args[] = {"--nic", "nic0,cable=nic1", "--nic", "nic1",
					   "--link", "unlimited", NULL};
	struct simd_daemon_proc d;
	assert_int_equal(simd_daemon_start(&d, "fuzz", args), 0);
	int mfd = memfd_create("fuzz-proto", MFD_CLOEXEC);
	assert_int_equal(ftruncate(mfd, 1 << 20), 0);
	uint64_t end = wall_ns() + (uint64_t)secs * 1000000000ull;
	unsigned rounds = 0;
	do {
		if (next() & 1)
			protocol_round(d.sock, mfd);
		else
			bar_round(d.sock);
		rounds++;
		assert_true(simd_daemon_alive(&d));
		struct myrio_bus *bus;
		assert_int_equal(myrio_simd_bus_open("nic1", d.sock, &bus), 0);
		uint32_t id = 0;
		assert_int_equal(bus->ops->cfg_read(bus, 0, 4, &id), 0);
		assert_int_equal(id & 0xFFFF, 0x14c1); /* Myricom */
		bus->ops->close(bus);
	} while (wall_ns() < end);
	printf("# %u rounds\n", rounds);
	close(mfd);
	assert_int_equal(simd_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(fuzz_live_daemon)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
