/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs inside the QEMU guest: opens two e1000e functions through libmyrio's VFIO bus
 * (src/pci/), maps hugepage DMA memory through the IOMMU, moves frames from NIC A to NIC B
 * and checks them byte for byte, and shows that a descriptor pointing at an unmapped IOVA
 * is blocked by the IOMMU. Prints one line "MYRIO-VFIO-RESULT: PASS|FAIL ..." at the end.
 *
 * usage: vfio_e1000e_test ADDR_A ADDR_B
 *        vfio_e1000e_test port ADDR_A ADDR_B   the same NICs through the port API
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/pci_regs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "e1000e.h"
#include "myrio/log.h"
#include "myrio/port.h"
#include "pci/vfio.h"

#define NFRAMES 8
#define ETHERTYPE_TEST 0x88b5	   /* IEEE local experimental */
#define ETHERTYPE_PORT_TEST 0x88b6 /* the second one: the port test's frames, told apart */

struct result {
	int fails;
	char why[256];
};

static void fail(struct result *r, const char *fmt, const char *arg, long v)
{
	r->fails++;
	if (!r->why[0])
		snprintf(r->why, sizeof(r->why), fmt, arg, v);
	fprintf(stderr, "FAIL: ");
	fprintf(stderr, fmt, arg, v);
	fputc('\n', stderr);
}

static const char *mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

/* Frame i: distinct length and payload, so that a swapped, stale or truncated frame fails. */
static uint16_t build_frame(uint8_t *f, const uint8_t *dst, const uint8_t *src, unsigned i)
{
	static const uint16_t lens[NFRAMES] = {60, 64, 128, 333, 512, 1000, 1500, 1514};
	uint16_t len = lens[i % NFRAMES];
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETHERTYPE_TEST >> 8;
	f[13] = ETHERTYPE_TEST & 0xff;
	uint32_t x = 0x9e3779b9u * (i + 1);
	for (uint16_t k = 14; k < len; k++) {
		x = x * 1103515245u + 12345u;
		f[k] = (uint8_t)(x >> 16);
	}
	f[14] = (uint8_t)i;
	return len;
}

/* The capability walk the drivers use (§1.8), through the VFIO config region: find the PCI
 * Express capability, set the maximum read request size, and find MSI-X. */
static void check_capabilities(struct myrio_bus *bus, struct result *r)
{
	uint32_t ctl;
	unsigned pcie = myrio_bus_find_cap(bus, PCI_CAP_ID_EXP);
	unsigned msix = myrio_bus_find_cap(bus, PCI_CAP_ID_MSIX);
	if (pcie) {
		unsigned at = pcie + PCI_EXP_DEVCTL;
		if (bus->ops->cfg_read(bus, at, 2, &ctl) == 0 &&
		    bus->ops->cfg_write(bus, at, 2,
					(ctl & ~PCI_EXP_DEVCTL_READRQ) |
					    PCI_EXP_DEVCTL_READRQ_4096B) == 0 &&
		    bus->ops->cfg_read(bus, at, 2, &ctl) == 0)
			printf("%s: PCIe capability at 0x%02x, max read request %u bytes\n",
			       bus->name, pcie, 128u << ((ctl & PCI_EXP_DEVCTL_READRQ) >> 12));
	}
	uint32_t v;
	if (bus->ops->cfg_read(bus, 0x1000, 4, &v) != -EINVAL ||
	    bus->ops->cfg_read(bus, 2, 4, &v) != -EINVAL)
		fail(r, "%s: out-of-range or misaligned config access not refused (%ld)", bus->name,
		     0);
	if (!pcie || !msix)
		fail(r, "%s: capability walk found no PCIe or no MSI-X capability (%ld)", bus->name,
		     (long)(!!pcie * 2 + !!msix));
}

static int open_nic(const char *addr, struct myrio_bus **bus, struct e1000e *n, struct result *r)
{
	int rc = myrio_vfio_bus_open(addr, NULL, bus);
	if (rc < 0) {
		fail(r, "%s: myrio_vfio_bus_open failed (%ld)", addr, rc);
		return rc;
	}
	uint32_t vendor = 0, device = 0, cmd = 0;
	(*bus)->ops->cfg_read(*bus, 0, 2, &vendor);
	(*bus)->ops->cfg_read(*bus, 2, 2, &device);
	(*bus)->ops->cfg_read(*bus, 4, 2, &cmd);
	printf("%s: %04x:%04x, IOMMU group %d, BAR0 %zu bytes, command 0x%04x\n", addr, vendor,
	       device, myrio_vfio_group_id(*bus), (*bus)->bar0_len, cmd);
	if (vendor != 0x8086 || device != 0x10d3)
		fail(r, "%s: config space reads %ld, expected 8086:10d3", addr,
		     (long)(vendor << 16 | device));
	if ((cmd & 0x6) != 0x6)
		fail(r, "%s: memory space / bus master not enabled (command %ld)", addr, (long)cmd);
	check_capabilities(*bus, r);
	/* The reset must succeed and leave the function usable. Whether registers return to
	 * their defaults depends on the reset method: the kernel picks a power-management
	 * reset for this NIC, which QEMU's e1000e model does not act on, so RDLEN is only
	 * reported. */
	volatile uint32_t *rdlen = (volatile uint32_t *)((*bus)->bar0 + E1000E_RDLEN);
	*rdlen = 0x400;
	uint32_t before = *rdlen;
	rc = (*bus)->ops->reset(*bus);
	uint32_t after = *rdlen, cmd_after = 0;
	(*bus)->ops->cfg_read(*bus, 4, 2, &cmd_after);
	printf("%s: function reset: %s (RDLEN 0x%x -> 0x%x, command 0x%04x)\n", addr,
	       rc == 0 ? "done" : strerror(-rc), before, after, cmd_after);
	if (rc < 0 && rc != -ENOTSUP)
		fail(r, "%s: reset failed (%ld)", addr, rc);
	if (rc == 0 && (before != 0x400 || (cmd_after & 0x6) != 0x6))
		fail(r, "%s: the reset left memory space or bus mastering disabled (%ld)", addr,
		     (long)cmd_after);
	rc = e1000e_open(n, *bus);
	if (rc < 0) {
		fail(r, "%s: e1000e bring-up failed (%ld)", addr, rc);
		return rc;
	}
	char m[18];
	printf("%s: STATUS 0x%08x, MAC %s (RAL/RAH %s the EEPROM), DMA region %zu bytes at IOVA "
	       "0x%" PRIx64 " (%s)\n",
	       addr, e1000e_rd(&n->hw, E1000E_STATUS), mac_str(n->hw.mac, m),
	       n->hw.mac_from_eeprom_matches ? "match" : "differ from", n->mem.len, n->mem.iova,
	       n->mem.hugepages ? "hugepages" : "NOT hugepages");
	printf("MAC %s %s\n", addr, m);
	if (!n->mem.hugepages)
		fail(r, "%s: DMA memory is not in hugepages (%ld)", addr, 0);
	return 0;
}

/* Waits up to 200 ms for the eventfd; returns how many interrupts it had counted. */
static uint64_t wait_irq(int efd)
{
	uint64_t v = 0;
	struct pollfd p = {.fd = efd, .events = POLLIN};
	if (efd >= 0 && poll(&p, 1, 200) == 1 && read(efd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	return v;
}

/* A -> B, NFRAMES distinct frames, each checked byte for byte. With efd >= 0, each frame
 * must also raise an interrupt on B, acknowledged by clearing ICR; *irqs counts them. */
static int exchange(struct e1000e *a, struct e1000e *b, unsigned base, int efd, uint64_t *irqs,
		    struct result *r)
{
	uint8_t tx[E1000E_BUF], rx[E1000E_BUF];
	int ok = 0;
	for (unsigned i = 0; i < NFRAMES; i++) {
		uint16_t len = build_frame(tx, b->hw.mac, a->hw.mac, base + i);
		int idx = e1000e_send(a, tx, len);
		if (idx < 0 || e1000e_tx_wait(a, idx, 2000) < 0) {
			fail(r, "%s: frame not transmitted (%ld)", a->bus->name, idx);
			continue;
		}
		int got = e1000e_recv(b, rx, sizeof(rx), 2000);
		if (got < 0) {
			fail(r, "%s: frame not received (%ld)", b->bus->name, got);
			continue;
		}
		if (got != len || memcmp(rx, tx, len) != 0) {
			fail(r, "%s: received frame differs (length %ld)", b->bus->name, got);
			continue;
		}
		if (efd >= 0) {
			uint64_t n = wait_irq(efd);
			e1000e_wr(&b->hw, E1000E_ICR, ~0u); /* write-1-to-clear acknowledges */
			*irqs += n;
			if (n == 0)
				fail(r, "%s: frame without an interrupt (%ld)", b->bus->name, i);
		}
		ok++;
	}
	printf("%s -> %s: %d/%d frames byte-exact\n", a->bus->name, b->bus->name, ok, NFRAMES);
	return ok;
}

/* Maps a buffer, writes a valid frame into it, unmaps it, then hands its IOVA to the NIC:
 * the IOMMU must refuse the read, so nothing reaches B. Then the ring must still work. */
static int blocked_dma(struct e1000e *a, struct e1000e *b, struct result *r)
{
	struct myrio_dma_region stray;
	uint8_t tx[E1000E_BUF], rx[E1000E_BUF];
	int rc = myrio_dma_alloc(&stray, 4096);
	if (rc < 0) {
		fail(r, "cannot allocate the stray region (%s%ld)", "", rc);
		return 0;
	}
	rc = a->bus->ops->dma_map(a->bus, &stray);
	if (rc < 0) {
		myrio_dma_free(&stray);
		fail(r, "cannot map the stray region (%s%ld)", "", rc);
		return 0;
	}
	uint64_t iova = stray.iova;
	uint16_t len = build_frame(stray.va, b->hw.mac, a->hw.mac, 0x55);
	a->bus->ops->dma_unmap(a->bus, &stray);
	printf("negative test: descriptor at unmapped IOVA 0x%" PRIx64 " (%u bytes)\n", iova, len);
	int idx = e1000e_send_iova(a, iova, len);
	if (idx >= 0)
		(void)e1000e_tx_wait(a, idx, 500); /* the NIC may or may not write back */
	int got = e1000e_recv(b, rx, sizeof(rx), 1000);
	int blocked = got == -ETIMEDOUT;
	printf("negative test: %s\n",
	       blocked ? "frame blocked by the IOMMU (not received)" : "FRAME WENT THROUGH");
	if (!blocked)
		fail(r, "unmapped IOVA was not blocked (recv %s%ld)", "", got);
	/* Still alive: one more normal frame. */
	len = build_frame(tx, b->hw.mac, a->hw.mac, 99);
	a->tx_clean = a->tx_tail; /* the blocked descriptor may never complete */
	idx = e1000e_send(a, tx, len);
	got = idx < 0 || e1000e_tx_wait(a, idx, 2000) < 0 ? -EIO
							  : e1000e_recv(b, rx, sizeof(rx), 2000);
	if (got != len || memcmp(rx, tx, len) != 0)
		fail(r, "ring dead after the blocked descriptor (%s%ld)", "", got);
	else
		printf("after the negative test: next frame byte-exact\n");
	myrio_dma_free(&stray);
	return blocked;
}

/* A receive descriptor pointing at an unmapped IOVA: the NIC gets the frame, but the IOMMU
 * must stop the write, so the memory that used to be mapped there keeps its pattern. */
static int blocked_rx(struct e1000e *a, struct e1000e *b, struct result *r)
{
	struct myrio_dma_region stray;
	uint8_t tx[E1000E_BUF], rx[E1000E_BUF];
	int rc = myrio_dma_alloc(&stray, 4096);
	if (rc == 0 && (rc = b->bus->ops->dma_map(b->bus, &stray)) < 0)
		myrio_dma_free(&stray);
	if (rc < 0) {
		fail(r, "cannot set up the receive negative test (%s%ld)", "", rc);
		return 0;
	}
	uint64_t iova = stray.iova;
	memset(stray.va, 0xa5, E1000E_BUF);
	b->bus->ops->dma_unmap(b->bus, &stray);
	unsigned idx = e1000e_rx_point_next(b, iova);
	uint16_t len = build_frame(tx, b->hw.mac, a->hw.mac, 0x66);
	int t = e1000e_send(a, tx, len);
	if (t < 0 || e1000e_tx_wait(a, t, 2000) < 0)
		fail(r, "receive negative test: frame not sent (%s%ld)", "", t);
	int got = e1000e_recv(b, rx, sizeof(rx), 2000);
	e1000e_rx_restore(b, idx);
	int untouched = 1;
	for (unsigned k = 0; k < E1000E_BUF; k++)
		untouched &= ((uint8_t *)stray.va)[k] == 0xa5;
	printf("negative test: receive descriptor at unmapped IOVA 0x%" PRIx64
	       ": descriptor %s, memory behind the old mapping %s\n",
	       iova, got >= 0 || got == -EBADMSG ? "completed" : "not completed",
	       untouched ? "untouched (write blocked by the IOMMU)" : "WRITTEN");
	if (!untouched)
		fail(r, "receive DMA to an unmapped IOVA was not blocked (%s%ld)", "", got);
	/* Still alive. */
	len = build_frame(tx, b->hw.mac, a->hw.mac, 98);
	t = e1000e_send(a, tx, len);
	got = t < 0 || e1000e_tx_wait(a, t, 2000) < 0 ? -EIO : e1000e_recv(b, rx, sizeof(rx), 2000);
	if (got != len || memcmp(rx, tx, len) != 0)
		fail(r, "receive ring dead after the blocked write (%s%ld)", "", got);
	myrio_dma_free(&stray);
	return untouched;
}

/* Closing a bus that still has a region mapped unmaps it, so that the region's owner never
 * calls into a closed bus. */
static void close_with_region_mapped(struct myrio_bus *bus, struct result *r)
{
	struct myrio_dma_region left;
	if (myrio_dma_alloc(&left, 4096) < 0) {
		bus->ops->close(bus);
		return;
	}
	int rc = bus->ops->dma_map(bus, &left);
	bus->ops->close(bus);
	printf("close with a region still mapped: map %s, region afterwards %s\n",
	       rc == 0 ? "ok" : strerror(-rc), left.bus ? "STILL MAPPED" : "unmapped");
	if (rc < 0 || left.bus || left.iova)
		fail(r, "%s: close left a region mapped (%ld)", "", rc);
	myrio_dma_free(&left);
}

/* Takes a capability away from this process (effective and permitted), as if it were an
 * ordinary user in that respect. */
static int drop_cap(unsigned cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	d[cap / 32].permitted &= ~(1u << (cap % 32));
	return syscall(SYS_capset, &h, d) == 0 ? 0 : -errno;
}

static char logged[4096];

static void capture(enum myrio_log_level level, const char *msg, void *arg)
{
	size_t n = strlen(logged);
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
	fprintf(stderr, "myrio: %s\n", msg);
}

/* Without CAP_IPC_LOCK and with a 64 KiB memlock limit, pinning 2 MiB must fail, saying how
 * to raise the limit. */
static int expect_memlock_refusal(const char *addr)
{
	struct myrio_bus *bus = NULL;
	struct myrio_dma_region reg;
	struct rlimit rl = {64 << 10, 64 << 10};
	myrio_log_set(capture, NULL, MYRIO_LOG_WARN);
	int rc = myrio_vfio_bus_open(addr, NULL, &bus);
	if (rc == 0 && (rc = myrio_dma_alloc(&reg, 2u << 20)) == 0) {
		if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 || drop_cap(CAP_IPC_LOCK) != 0)
			rc = -EPERM;
		else
			rc = bus->ops->dma_map(bus, &reg);
		if (reg.bus)
			bus->ops->dma_unmap(bus, &reg);
		myrio_dma_free(&reg);
	}
	if (bus)
		bus->ops->close(bus);
	int ok = rc == -ENOMEM && strstr(logged, "ulimit -l unlimited") != NULL;
	printf("MYRIO-VFIO-MEMLOCK: %s %s dma_map=%d\n", ok ? "PASS" : "FAIL", addr, rc);
	return ok ? 0 : 1;
}

/* With /dev/vfio/N mode 000 and no DAC override, the open must fail naming the fix. */
static int expect_permission_refusal(const char *addr)
{
	struct myrio_bus *bus = NULL;
	myrio_log_set(capture, NULL, MYRIO_LOG_WARN);
	int rc = drop_cap(CAP_DAC_OVERRIDE);
	if (rc == 0)
		rc = drop_cap(CAP_DAC_READ_SEARCH);
	if (rc == 0)
		rc = myrio_vfio_bus_open(addr, NULL, &bus);
	if (bus)
		bus->ops->close(bus);
	int ok = rc == -EACCES && strstr(logged, "no permission to open") != NULL &&
		 strstr(logged, "chown") != NULL;
	printf("MYRIO-VFIO-NOPERM: %s %s open=%d\n", ok ? "PASS" : "FAIL", addr, rc);
	return ok ? 0 : 1;
}

/* Before binding: the open must refuse a device held by its kernel driver, saying why. */
static int expect_refused(const char *addr)
{
	struct myrio_bus *bus = NULL;
	int rc = myrio_vfio_bus_open(addr, NULL, &bus);
	if (bus)
		bus->ops->close(bus);
	int ok = rc == -EBUSY;
	printf("MYRIO-VFIO-REFUSED: %s %s open=%d\n", ok ? "PASS" : "FAIL", addr, rc);
	return ok ? 0 : 1;
}

static uint16_t port_frame(uint8_t *f, const uint8_t *dst, const uint8_t *src, unsigned i)
{
	uint16_t len = build_frame(f, dst, src, i);
	f[12] = ETHERTYPE_PORT_TEST >> 8;
	f[13] = ETHERTYPE_PORT_TEST & 0xff;
	return len;
}

/* The e1000e as a port (src/e1000e/): opened by myrio_port_open from its PCI address
 * through the driver table, with link state, info, bursts of frames checked byte for
 * byte, the counters that say so, and the refusals of what the driver cannot do. */
static int port_phase(const char *addr_a, const char *addr_b)
{
	struct result r = {0};
	struct myrio_port_conf conf;
	struct myrio_port *a = NULL, *b = NULL, *big = NULL;
	myrio_port_conf_init(&conf);
	conf.mtu = 9000;
	if (myrio_port_open(&big, addr_a, &conf) != -EINVAL)
		fail(&r, "%s: MTU 9000 not refused (%ld)", addr_a, 0);
	conf.mtu = 1500;
	if (myrio_port_open(&a, addr_a, &conf) < 0 || myrio_port_open(&b, addr_b, &conf) < 0) {
		fail(&r, "%s: myrio_port_open failed (%ld)", a ? addr_b : addr_a, 0);
		goto out;
	}
	struct myrio_port_info ia, ib;
	myrio_port_info(a, &ia);
	myrio_port_info(b, &ib);
	char m[18];
	printf("port %s: bus %s, MAC %s, MTU %u, rings %u/%u, link %s\n", ia.device, ia.bus,
	       mac_str(ia.mac, m), ia.mtu, ia.tx_ring_entries, ia.rx_ring_entries,
	       myrio_port_link(a) == MYRIO_LINK_UP ? "up" : "not up");
	if (myrio_port_link(a) != MYRIO_LINK_UP || myrio_port_link(b) != MYRIO_LINK_UP)
		fail(&r, "%s: link not up through the port API (%ld)", addr_a, 0);
	if (strcmp(ia.bus, "vfio") != 0 || ia.mtu != 1500)
		fail(&r, "%s: info wrong (MTU %ld)", addr_a, ia.mtu);
	struct myrio_pool *pool;
	if (myrio_port_pool_create(a, 1024, MYRIO_PKT_HEADROOM + 1514, &pool) < 0) {
		fail(&r, "%s: no transmit pool (%ld)", addr_a, 0);
		goto out;
	}
	/* 600 frames in bursts, more than twice around both rings. */
	enum { N = 600 };
	unsigned sent = 0, got = 0, bad = 0;
	uint8_t want[1514];
	for (int idle = 0; got < N && idle < 2000;) {
		struct myrio_pkt *out[32], *in[32];
		unsigned k = 0;
		while (k < 32 && sent + k < N) {
			struct myrio_pkt *p = myrio_pkt_alloc(pool);
			if (!p)
				break;
			p->len = port_frame(myrio_pkt_data(p), ib.mac, ia.mac, sent + k);
			out[k++] = p;
		}
		uint16_t took = myrio_tx_burst(a, out, (uint16_t)k);
		myrio_pkt_free_bulk(out + took, k - took);
		sent += took;
		uint16_t n = myrio_rx_burst(b, in, 32);
		for (uint16_t i = 0; i < n; i++, got++) {
			uint16_t len = port_frame(want, ib.mac, ia.mac, got);
			bad += in[i]->len != len || memcmp(myrio_pkt_data(in[i]), want, len) != 0;
		}
		myrio_pkt_free_bulk(in, n);
		idle = n ? 0 : idle + 1;
		if (!n)
			usleep(1000);
	}
	/* A checksum offload request and a runt: refused and counted, the ring unharmed. */
	struct myrio_pkt *odd[2] = {myrio_pkt_alloc(pool), myrio_pkt_alloc(pool)};
	if (!odd[0] || !odd[1]) {
		fail(&r, "%s: transmit pool empty (%ld)", addr_a, 0);
		goto out;
	}
	odd[0]->len = build_frame(myrio_pkt_data(odd[0]), ib.mac, ia.mac, 1);
	odd[0]->ol_flags = MYRIO_PKT_TX_CSUM;
	odd[1]->len = 10;
	uint16_t took = myrio_tx_burst(a, odd, 2);
	struct myrio_port_stats sa, sb;
	myrio_port_stats(a, &sa);
	myrio_port_stats(b, &sb);
	printf("port %s -> %s: %u/%u frames byte-exact; tx_packets %llu, rx_packets %llu, "
	       "tx_dropped_bad %llu, rx_bad_completion %llu, link_up %u\n",
	       addr_a, addr_b, got - bad, N, (unsigned long long)sa.tx_packets,
	       (unsigned long long)sb.rx_packets, (unsigned long long)sa.tx_dropped_bad,
	       (unsigned long long)sb.rx_bad_completion, sb.link_up);
	if (got != N || bad)
		fail(&r, "%s: frames lost or damaged through the port (%ld bad)", addr_b, bad);
	if (sa.tx_packets != N || sb.rx_packets != N || sa.tx_dropped_bad != 2 || took != 2 ||
	    sb.rx_bad_completion || sa.tx_bytes != sb.rx_bytes || !sb.link_up)
		fail(&r, "%s: counters disagree with the traffic (%ld)", addr_a,
		     (long)sb.rx_packets);
	/* The transmit buffers come back once the NIC has read them. */
	for (int i = 0; i < 2000 && myrio_pool_free_count(pool) < pool->count; i++) {
		myrio_tx_burst(a, NULL, 0);
		usleep(1000);
	}
	if (myrio_pool_free_count(pool) != pool->count)
		fail(&r, "%s: transmit buffers not returned (%ld missing)", addr_a,
		     (long)(pool->count - myrio_pool_free_count(pool)));
	myrio_pool_destroy(pool);
out:
	myrio_port_close(a);
	myrio_port_close(b);
	printf("MYRIO-VFIO-PORT: %s%s%s\n", r.fails ? "FAIL" : "PASS", r.fails ? " reason: " : "",
	       r.why);
	return r.fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "port") == 0)
		return port_phase(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "expect-refused") == 0)
		return expect_refused(argv[2]);
	if (argc == 3 && strcmp(argv[1], "expect-memlock-refusal") == 0)
		return expect_memlock_refusal(argv[2]);
	if (argc == 3 && strcmp(argv[1], "expect-permission-refusal") == 0)
		return expect_permission_refusal(argv[2]);
	if (argc != 3) {
		fprintf(stderr,
			"usage: %s ADDR_A ADDR_B | port ADDR_A ADDR_B | expect-refused ADDR | "
			"expect-memlock-refusal ADDR | expect-permission-refusal ADDR\n",
			argv[0]);
		return 2;
	}
	struct result r = {0};
	struct myrio_bus *ba = NULL, *bb = NULL;
	struct e1000e a = {0}, b = {0};
	int ab = 0, ba_ok = 0, blocked = 0, blocked_w = 0;
	uint64_t irqs = 0, irqs_x = 0;
	if (open_nic(argv[1], &ba, &a, &r) == 0 && open_nic(argv[2], &bb, &b, &r) == 0) {
		/* B through the bus op (MSI), A through MSI-X vector 0. */
		int efd = bb->ops->irq_fd(bb);
		if (efd < 0)
			fail(&r, "%s: no interrupt eventfd (%ld)", argv[2], efd);
		else
			e1000e_enable_rx_irq(&b);
		ab = exchange(&a, &b, 0, efd, &irqs, &r);
		printf("%s: %" PRIu64 " MSI interrupts through the eventfd for %d frames\n",
		       argv[2], irqs, NFRAMES);
		int efd_x = myrio_vfio_irq_fd_msix(ba);
		if (efd_x < 0)
			fail(&r, "%s: no MSI-X eventfd (%ld)", argv[1], efd_x);
		else
			e1000e_enable_rx_irq(&a);
		ba_ok = exchange(&b, &a, 100, efd_x, &irqs_x, &r);
		printf("%s: %" PRIu64 " MSI-X interrupts through the eventfd for %d frames\n",
		       argv[1], irqs_x, NFRAMES);
		blocked = blocked_dma(&a, &b, &r);
		blocked_w = blocked_rx(&a, &b, &r);
		struct myrio_bus *again = NULL;
		int rc = myrio_vfio_bus_open(argv[1], NULL, &again);
		printf("second open of %s while in use: %s\n", argv[1],
		       rc == -EBUSY ? "refused (busy)" : strerror(-rc));
		if (rc != -EBUSY)
			fail(&r, "%s: second open not refused as busy (%ld)", argv[1], rc);
		if (again)
			again->ops->close(again);
		printf("counters: %s sent %u, %s received %u\n", argv[1],
		       e1000e_rd(&a.hw, E1000E_GPTC), argv[2], e1000e_rd(&b.hw, E1000E_GPRC));
	}
	e1000e_close(&a);
	e1000e_close(&b);
	if (ba)
		ba->ops->close(ba);
	if (bb)
		bb->ops->close(bb);
	if (ba) {
		/* close must have released the group: it opens again at once. */
		int rc = myrio_vfio_bus_open(argv[1], NULL, &ba);
		printf("reopen of %s after close: %s\n", argv[1], rc == 0 ? "ok" : strerror(-rc));
		if (rc < 0)
			fail(&r, "%s: cannot reopen after close (%ld)", argv[1], rc);
		else
			close_with_region_mapped(ba, &r);
	}
	printf("MYRIO-VFIO-RESULT: %s a2b=%d/%d b2a=%d/%d blocked_read=%d blocked_write=%d "
	       "irqs_msi=%" PRIu64 " irqs_msix=%" PRIu64 "%s%s\n",
	       r.fails ? "FAIL" : "PASS", ab, NFRAMES, ba_ok, NFRAMES, blocked, blocked_w, irqs,
	       irqs_x, r.fails ? " reason: " : "", r.why);
	return r.fails ? 1 : 0;
}
