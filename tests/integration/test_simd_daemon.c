/* SPDX-License-Identifier: BSD-3-Clause */
/* The model daemon at the protocol level: attach and detach through the client bus, fd
 * passing, DMA registration, config space, hang-up detection (a client killed with
 * SIGKILL frees its NIC), and every kind of bad input refused with a clear error while
 * the daemon keeps serving. Runs the real myrio-simd binary from the build tree. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include "bus/bus.h"
#include "bus/simd_proto.h"
#include "mem/dma.h"
#include "sim/nic.h"
#include "simd_daemon.h"

struct fixture {
	struct simd_daemon_proc d;
	char *sock;
};

static int setup(void **state)
{
	static struct fixture f;
	static const char *const args[] = {"--nic",  "nic0,cable=nic1", "--nic", "nic1",
					   "--link", "unlimited",	NULL};
	if (simd_daemon_start(&f.d, "proto", args) < 0)
		return -1;
	f.sock = f.d.sock;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	/* Clean shutdown: exit status 0, socket file gone. */
	return simd_daemon_stop(&f->d);
}

static void daemon_alive(struct fixture *f)
{
	assert_true(simd_daemon_alive(&f->d));
}

/* A raw request: returns the reply's status (or a transport error). */
static int raw_rpc(int s, struct simd_msg *m, size_t len, const int *fds, unsigned nfds,
		   struct simd_msg *rep)
{
	int rfds[SIMD_MAX_FDS];
	unsigned rn;
	int rc = simd_send(s, m, len, fds, nfds);
	if (rc < 0)
		return rc;
	ssize_t n = simd_recv_timeout(s, rep, sizeof(*rep), rfds, SIMD_MAX_FDS, &rn, 5000);
	for (unsigned i = 0; i < rn; i++)
		close(rfds[i]);
	if (n < (ssize_t)sizeof(rep->h))
		return n < 0 ? (int)n : -EPROTO;
	assert_int_equal(rep->h.magic, SIMD_MAGIC);
	return rep->h.status;
}

static int raw_attach(int s, const char *nic)
{
	struct simd_msg m, rep;
	simd_hdr_init(&m.h, SIMD_ATTACH, 1);
	memset(&m.u.attach_req, 0, sizeof(m.u.attach_req));
	snprintf(m.u.attach_req.nic, sizeof(m.u.attach_req.nic), "%s", nic);
	return raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.attach_req), NULL, 0, &rep);
}

static int raw_dma(int s, uint16_t type, uint64_t iova, uint64_t len, int fd)
{
	struct simd_msg m, rep;
	simd_hdr_init(&m.h, type, 2);
	m.u.dma.iova = iova;
	m.u.dma.len = len;
	return raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.dma), &fd, fd >= 0 ? 1 : 0, &rep);
}

static void attach_map_config_detach(void **state)
{
	struct fixture *f = *state;
	struct myrio_bus *bus;
	assert_int_equal(myrio_simd_bus_open("nic0", f->sock, &bus), 0);
	assert_string_equal(bus->kind, "simd");
	assert_string_equal(bus->name, "simd:nic0");
	assert_non_null(bus->bar0);
	assert_true(bus->bar0_len >= 16u << 20);
	assert_true(bus->ops->irq_fd(bus) >= 0);
	/* PCI identity through config space (spec §1.1): 14C1:0008. */
	uint32_t id = 0;
	assert_int_equal(bus->ops->cfg_read(bus, 0, 4, &id), 0);
	assert_int_equal(id & 0xffff, 0x14c1);
	assert_int_equal(id >> 16, 0x0008);
	/* The BAR0 the daemon passed is the NIC's: a store is visible to a second mapping
	 * (the model watches the same memory). The firmware header pointer at 0x3C (§1.5)
	 * is non-zero in the power-on state. */
	uint32_t hdr_ptr;
	memcpy(&hdr_ptr, (const void *)(bus->bar0 + 0x3c), 4);
	assert_int_not_equal(hdr_ptr, 0);

	struct myrio_dma_region r, r2;
	assert_int_equal(myrio_dma_alloc(&r, 1 << 20), 0);
	assert_int_equal(myrio_dma_alloc(&r2, 64 << 10), 0);
	assert_int_equal(bus->ops->dma_map(bus, &r), 0);
	assert_int_equal(bus->ops->dma_map(bus, &r2), 0);
	assert_ptr_equal(r.bus, bus);
	assert_true(r.iova >= SIMD_IOVA_BASE);
	assert_false(simd_ranges_overlap(r.iova, r.len, r2.iova, r2.len));
	bus->ops->dma_unmap(bus, &r2);
	assert_null(r2.bus);
	assert_int_equal(bus->ops->reset(bus), 0);

	/* In use: a second process (connection) is refused with -EBUSY. */
	struct myrio_bus *other;
	assert_int_equal(myrio_simd_bus_open("nic0", f->sock, &other), -EBUSY);
	assert_int_equal(myrio_simd_bus_open("nic9", f->sock, &other), -ENODEV);
	/* The other NIC is free. */
	assert_int_equal(myrio_simd_bus_open("nic1", f->sock, &other), 0);
	other->ops->close(other);

	bus->ops->dma_unmap(bus, &r);
	bus->ops->close(bus);
	myrio_dma_free(&r);
	myrio_dma_free(&r2);
	/* The hang-up freed nic0. */
	assert_int_equal(myrio_simd_bus_open("nic0", f->sock, &bus), 0);
	bus->ops->close(bus);
	daemon_alive(f);
}

static void device_string_reaches_the_daemon(void **state)
{
	struct fixture *f = *state;
	char dev[160];
	struct myrio_bus *bus;
	snprintf(dev, sizeof(dev), "simd:nic1@%s", f->sock);
	assert_int_equal(myrio_bus_open(dev, NULL, NULL, &bus), 0);
	assert_string_equal(bus->kind, "simd");
	bus->ops->close(bus);
	/* The socket from the environment, as the daemon's default would be. */
	setenv(SIMD_SOCKET_ENV, f->sock, 1);
	assert_int_equal(myrio_bus_open("simd:nic1", NULL, NULL, &bus), 0);
	bus->ops->close(bus);
	unsetenv(SIMD_SOCKET_ENV);
}

static void killed_client_frees_its_nic(void **state)
{
	struct fixture *f = *state;
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	if (child == 0) {
		simd_die_with_parent();
		struct myrio_bus *bus;
		struct myrio_dma_region r;
		char ok = 0;
		if (myrio_simd_bus_open("nic0", f->sock, &bus) == 0 &&
		    myrio_dma_alloc(&r, 256 << 10) == 0 && bus->ops->dma_map(bus, &r) == 0)
			ok = 1;
		if (write(ready[1], &ok, 1) != 1)
			_exit(1);
		pause(); /* until SIGKILL: no close, no cleanup */
		_exit(0);
	}
	char ok = 0;
	assert_int_equal(read(ready[0], &ok, 1), 1);
	assert_int_equal(ok, 1);
	struct myrio_bus *bus;
	assert_int_equal(myrio_simd_bus_open("nic0", f->sock, &bus), -EBUSY);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* The daemon notices the hang-up as soon as the kernel closes the socket. */
	int rc = -EBUSY;
	for (int i = 0; i < 200 && rc == -EBUSY; i++) {
		rc = myrio_simd_bus_open("nic0", f->sock, &bus);
		if (rc == -EBUSY)
			usleep(5000);
	}
	assert_int_equal(rc, 0);
	bus->ops->close(bus);
	close(ready[0]);
	close(ready[1]);
	daemon_alive(f);
}

static void malformed_messages_are_refused(void **state)
{
	struct fixture *f = *state;
	int s, pfd[2];
	struct simd_msg m, rep;
	assert_int_equal(simd_connect(f->sock, &s), 0);
	assert_int_equal(pipe(pfd), 0);

	/* Garbage, short, bad magic, bad version, unknown type, wrong lengths. */
	assert_int_equal(raw_rpc(s, &m, 3, NULL, 0, &rep), -EPROTO);
	simd_hdr_init(&m.h, SIMD_ATTACH, 5);
	m.h.magic = 0xdeadbeef;
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + 32, NULL, 0, &rep), -EPROTO);
	simd_hdr_init(&m.h, SIMD_ATTACH, 5);
	m.h.version = 7;
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + 32, NULL, 0, &rep), -EPROTONOSUPPORT);
	simd_hdr_init(&m.h, 999, 5);
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h), NULL, 0, &rep), -EOPNOTSUPP);
	simd_hdr_init(&m.h, SIMD_ATTACH, 5);
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + 3, NULL, 0, &rep), -EBADMSG);
	memset(m.u.attach_req.nic, 'A', sizeof(m.u.attach_req.nic)); /* no NUL */
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.attach_req), NULL, 0, &rep),
			 -EINVAL);
	assert_int_equal(rep.h.seq, 5); /* the error reply answers the right request */
	/* An attach carrying fds: refused, and the fds are not kept. */
	snprintf(m.u.attach_req.nic, sizeof(m.u.attach_req.nic), "nic0");
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.attach_req), pfd, 2, &rep),
			 -EBADMSG);
	/* Too long a message. */
	static uint8_t big[SIMD_STATUS_MAX];
	memcpy(big, &m.h, sizeof(m.h));
	assert_int_equal(raw_rpc(s, (void *)big, sizeof(big), NULL, 0, &rep), -EMSGSIZE);
	/* Requests before attaching. */
	simd_hdr_init(&m.h, SIMD_CFG_READ, 6);
	memset(&m.u.cfg, 0, sizeof(m.u.cfg));
	m.u.cfg.size = 4;
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.cfg), NULL, 0, &rep), -ENOTCONN);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, SIMD_IOVA_BASE, 4096, pfd[0]), -ENOTCONN);

	/* Attached: bad DMA registrations and config accesses. */
	assert_int_equal(raw_attach(s, "nic1"), 0);
	assert_int_equal(raw_attach(s, "nic0"), -EISCONN);
	/* A plain memfd (not hugetlbfs) so that 4 KiB registrations are legal. */
	struct {
		int fd;
		size_t len;
	} r = {memfd_create("test-dma", MFD_CLOEXEC), 64 << 10};
	assert_int_equal(ftruncate(r.fd, (off_t)r.len), 0);
	uint64_t base = SIMD_IOVA_BASE;
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, r.len * 2, r.fd), -EINVAL); /* > file */
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, 0, r.fd), -EINVAL);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base + 1, 4096, r.fd), -EINVAL);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, 100, r.fd), -EINVAL);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, ~0ull - 4095, 8192, r.fd), -EOVERFLOW);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, SIMD_IOVA_LIMIT, 4096, r.fd), -ERANGE);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, 4096, pfd[0]), -EBADF); /* a pipe */
	/* A sparse file big enough for a mapping the daemon must not take. */
	int huge = memfd_create("test-huge", MFD_CLOEXEC);
	assert_int_equal(ftruncate(huge, 65ll << 30), 0);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, 65ull << 30, huge), -ENOSPC);
	close(huge);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, 4096, -1), -EBADMSG); /* no fd */
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base, r.len, r.fd), 0);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base + 4096, 4096, r.fd), -EEXIST);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base - 4096, 8192, r.fd), -EEXIST);
	assert_int_equal(raw_dma(s, SIMD_DMA_UNMAP, base, 4096, -1), -ENOENT);
	assert_int_equal(raw_dma(s, SIMD_DMA_UNMAP, base, r.len, -1), 0);
	assert_int_equal(raw_dma(s, SIMD_DMA_UNMAP, base, r.len, -1), -ENOENT);
	for (unsigned i = 0; i < SIMD_MAX_REGIONS; i++)
		assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base + i * 0x100000ull, 4096, r.fd), 0);
	assert_int_equal(raw_dma(s, SIMD_DMA_MAP, base + 0x10000000ull, 4096, r.fd), -ENOSPC);
	simd_hdr_init(&m.h, SIMD_CFG_READ, 7);
	m.u.cfg = (struct simd_cfg_req){.off = 4095, .size = 4};
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.cfg), NULL, 0, &rep), -EINVAL);
	m.u.cfg = (struct simd_cfg_req){.off = 0, .size = 3};
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.cfg), NULL, 0, &rep), -EINVAL);
	m.u.cfg = (struct simd_cfg_req){.off = 2, .size = 4};
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.cfg), NULL, 0, &rep), -EINVAL);
	m.u.cfg = (struct simd_cfg_req){.off = 0, .size = 2};
	assert_int_equal(raw_rpc(s, &m, sizeof(m.h) + sizeof(m.u.cfg), NULL, 0, &rep), 0);
	assert_int_equal(rep.u.cfg_rep.val, 0x14c1);
	close(s);
	close(r.fd);
	close(pfd[0]);
	close(pfd[1]);

	/* Still serving, and nic1 is free again. */
	daemon_alive(f);
	struct myrio_bus *bus;
	assert_int_equal(myrio_simd_bus_open("nic1", f->sock, &bus), 0);
	bus->ops->close(bus);
}

/* Random garbage: any length, any type, any fds, headers half right. The daemon answers
 * or ignores each message and keeps serving. Seeded, so a failure can be replayed. */
static void random_garbage_does_not_hurt(void **state)
{
	struct fixture *f = *state;
	int s, pfd[2], mfd = memfd_create("garbage", MFD_CLOEXEC);
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(ftruncate(mfd, 1 << 20), 0);
	int fdpool[3] = {pfd[0], pfd[1], mfd};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	assert_int_equal(simd_connect(f->sock, &s), 0);
	for (int i = 0; i < 3000; i++) {
		uint8_t buf[256];
		for (size_t j = 0; j < sizeof(buf); j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[j] = (uint8_t)x;
		}
		size_t len = x % sizeof(buf);
		/* Half the time a valid header, so the checks behind it get exercised. */
		if (x & (1ull << 40)) {
			struct simd_hdr h;
			simd_hdr_init(&h, (uint16_t)(1 + (x >> 20) % (SIMD_TYPE_END + 1)),
				      (uint32_t)i);
			memcpy(buf, &h, sizeof(h));
			if (x & (1ull << 41))
				len = sizeof(h) + simd_request_len(h.type);
			if (h.type == SIMD_ATTACH && (x & (1ull << 42)))
				memcpy(buf + sizeof(h), "nic0", 5);
		}
		unsigned nfds = (unsigned)((x >> 33) % 4);
		if (simd_send(s, buf, len, fdpool, nfds > 2 ? 2 : nfds) < 0) {
			close(s); /* the daemon may not answer a zero-length message: reconnect */
			assert_int_equal(simd_connect(f->sock, &s), 0);
			continue;
		}
		struct simd_msg rep;
		int rfds[SIMD_MAX_FDS];
		unsigned rn;
		ssize_t n = simd_recv_timeout(s, &rep, sizeof(rep), rfds, SIMD_MAX_FDS, &rn,
					      len == 0 ? 50 : 2000);
		for (unsigned k = 0; k < rn; k++)
			close(rfds[k]);
		if (n == 0) { /* hung up on: fine, as long as the daemon lives */
			close(s);
			assert_int_equal(simd_connect(f->sock, &s), 0);
		}
	}
	close(s);
	close(pfd[0]);
	close(pfd[1]);
	close(mfd);
	daemon_alive(f);
	struct myrio_bus *bus;
	assert_int_equal(myrio_simd_bus_open("nic0", f->sock, &bus), 0);
	bus->ops->close(bus);
}

/* More connections than the daemon serves: the excess are closed, nothing else changes. */
static void connection_flood_is_contained(void **state)
{
	struct fixture *f = *state;
	int socks[80];
	for (unsigned i = 0; i < 80; i++)
		assert_int_equal(simd_connect(f->sock, &socks[i]), 0);
	usleep(100000);
	for (unsigned i = 0; i < 80; i++)
		close(socks[i]);
	usleep(100000);
	daemon_alive(f);
	struct myrio_bus *bus;
	assert_int_equal(myrio_simd_bus_open("nic1", f->sock, &bus), 0);
	bus->ops->close(bus);
}

static void missing_daemon_is_a_clear_error(void **state)
{
	(void)state;
	struct myrio_bus *bus;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/myrio-simd-none-%d.sock", (int)getpid());
	assert_int_equal(myrio_simd_bus_open("nic0", path, &bus), -ENOENT);
	assert_null(bus);
	/* A stale socket file with nobody listening. */
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un {
		sa_family_t f;
		char p[108];
	} sa = {.f = AF_UNIX};
	snprintf(sa.p, sizeof(sa.p), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
	assert_int_equal(myrio_simd_bus_open("nic0", path, &bus), -ECONNREFUSED);
	unlink(path);
	assert_int_equal(myrio_simd_bus_open("", path, &bus), -EINVAL);
}

/* A daemon of the test's own that answers one ATTACH with a wake page whose size is not
 * sealed: it could shrink the page under the client's mapping. */
struct fake_daemon {
	int listener;
	int page; /* the wake page it sends, kept to shrink it */
};

static void *fake_daemon_attach(void *arg)
{
	struct fake_daemon *fd = arg;
	int s = accept4(fd->listener, NULL, NULL, SOCK_CLOEXEC);
	struct simd_msg m, rep;
	int in[SIMD_MAX_FDS];
	unsigned nin = 0;
	if (s < 0 || simd_recv_timeout(s, &m, sizeof(m), in, SIMD_MAX_FDS, &nin, 5000) <= 0)
		return NULL;
	int bar = memfd_create("fake-bar0", MFD_CLOEXEC);
	if (ftruncate(bar, SIM_BAR0_LEN) < 0 || ftruncate(fd->page, 4096) < 0)
		return NULL;
	simd_hdr_init(&rep.h, SIMD_ATTACH, m.h.seq);
	rep.h.status = 0;
	memset(&rep.u.attach_rep, 0, sizeof(rep.u.attach_rep));
	rep.u.attach_rep.bar0_len = SIM_BAR0_LEN;
	const int fds[4] = {bar, eventfd(0, EFD_CLOEXEC), fd->page, eventfd(0, EFD_CLOEXEC)};
	simd_send(s, &rep, sizeof(rep.h) + sizeof(rep.u.attach_rep), fds, 4);
	close(bar);
	close(fds[1]);
	close(fds[3]);
	usleep(200000); /* the client's reply is read before the hang-up */
	close(s);
	return NULL;
}

static void unsealed_wake_page_is_refused(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/myrio-simd-fake-%d.sock", (int)getpid());
	unlink(path);
	struct fake_daemon fd = {socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0),
				 memfd_create("fake-wake", MFD_CLOEXEC)};
	struct sockaddr_un {
		sa_family_t f;
		char p[108];
	} sa = {.f = AF_UNIX};
	snprintf(sa.p, sizeof(sa.p), "%s", path);
	assert_int_equal(bind(fd.listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd.listener, 1), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, fake_daemon_attach, &fd), 0);
	struct myrio_bus *bus = (void *)1;
	int rc = myrio_simd_bus_open("nic0", path, &bus);
	pthread_join(t, NULL);
	if (rc == 0) /* what the daemon could then do: the client's next post would fault */
		myrio_bus_close(bus);
	assert_int_equal(rc, -EPROTO);
	assert_null(bus);
	close(fd.page);
	close(fd.listener);
	unlink(path);
}

static void status_lists_nics_and_attachments(void **state)
{
	struct fixture *f = *state;
	struct myrio_bus *bus;
	assert_int_equal(myrio_simd_bus_open("nic1", f->sock, &bus), 0);
	char exe[PATH_MAX + 32], cmd[PATH_MAX + 200], out[4096];
	simd_daemon_path(exe, sizeof(exe));
	snprintf(cmd, sizeof(cmd), "%s status --socket %s", exe, f->sock);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	char want[64];
	snprintf(want, sizeof(want), "pid %d", (int)getpid());
	assert_non_null(strstr(out, "nic0"));
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "2 NICs, 1 attached"));
	bus->ops->close(bus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(attach_map_config_detach),
	    cmocka_unit_test(device_string_reaches_the_daemon),
	    cmocka_unit_test(killed_client_frees_its_nic),
	    cmocka_unit_test(malformed_messages_are_refused),
	    cmocka_unit_test(random_garbage_does_not_hurt),
	    cmocka_unit_test(connection_flood_is_contained),
	    cmocka_unit_test(missing_daemon_is_a_clear_error),
	    cmocka_unit_test(unsealed_wake_page_is_refused),
	    cmocka_unit_test(status_lists_nics_and_attachments),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
