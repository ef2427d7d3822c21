/* SPDX-License-Identifier: BSD-3-Clause */
/* The model daemon's wire protocol: request validation, DMA range checks, the client's
 * IOVA allocator and fd passing over a SEQPACKET socket pair. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include "bus/simd_proto.h"

static size_t make_req(struct simd_msg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	simd_hdr_init(&m->h, type, 7);
	return sizeof(m->h) + simd_request_len(type);
}

static void well_formed_requests_pass(void **state)
{
	(void)state;
	struct simd_msg m;
	const char *why;
	size_t len = make_req(&m, SIMD_ATTACH);
	strcpy(m.u.attach_req.nic, "nic0");
	assert_int_equal(simd_check_request(&m, len, 0, &why), 0);
	len = make_req(&m, SIMD_DMA_MAP);
	assert_int_equal(simd_check_request(&m, len, 1, &why), 0);
	len = make_req(&m, SIMD_CFG_READ);
	assert_int_equal(simd_check_request(&m, len, 0, &why), 0);
	len = make_req(&m, SIMD_STATUS);
	assert_int_equal(len, sizeof(struct simd_hdr));
	assert_int_equal(simd_check_request(&m, len, 0, &why), 0);
}

static void malformed_requests_fail_with_a_reason(void **state)
{
	(void)state;
	struct simd_msg m;
	const char *why = NULL;
	size_t len = make_req(&m, SIMD_ATTACH);
	strcpy(m.u.attach_req.nic, "nic0");
	assert_int_equal(simd_check_request(&m, 3, 0, &why), -EPROTO);
	assert_non_null(why);
	assert_int_equal(simd_check_request(&m, len - 1, 0, &why), -EBADMSG);
	assert_int_equal(simd_check_request(&m, len, 1, &why), -EBADMSG); /* stray fd */
	m.h.magic ^= 1;
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EPROTO);
	m.h.magic ^= 1;
	m.h.version = 99;
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EPROTONOSUPPORT);
	m.h.version = SIMD_VERSION;
	m.h.type = 0;
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EOPNOTSUPP);
	m.h.type = SIMD_TYPE_END;
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EOPNOTSUPP);
	m.h.type = SIMD_ATTACH;
	memset(m.u.attach_req.nic, 'x', sizeof(m.u.attach_req.nic)); /* no NUL */
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EINVAL);
	memset(m.u.attach_req.nic, 0, sizeof(m.u.attach_req.nic)); /* empty */
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EINVAL);
	len = make_req(&m, SIMD_DMA_MAP);
	assert_int_equal(simd_check_request(&m, len, 0, &why), -EBADMSG); /* fd missing */
	assert_int_equal(simd_check_request(&m, len, 2, &why), -EBADMSG);
}

static void dma_ranges_are_checked(void **state)
{
	(void)state;
	const char *why;
	assert_int_equal(simd_check_dma_range(1ull << 32, 4096, 4096, &why), 0);
	assert_int_equal(simd_check_dma_range(1ull << 32, 0, 4096, &why), -EINVAL);
	assert_int_equal(simd_check_dma_range((1ull << 32) + 1, 4096, 4096, &why), -EINVAL);
	assert_int_equal(simd_check_dma_range(1ull << 32, 100, 4096, &why), -EINVAL);
	assert_int_equal(simd_check_dma_range(1ull << 32, 4096, 3000, &why), -EINVAL);
	assert_int_equal(simd_check_dma_range(~0ull - 4095, 8192, 4096, &why), -EOVERFLOW);
	assert_int_equal(simd_check_dma_range(SIMD_IOVA_LIMIT - 4096, 8192, 4096, &why), -ERANGE);
	assert_int_equal(simd_check_dma_range(SIMD_IOVA_LIMIT - 4096, 4096, 4096, &why), 0);
}

static void overlap_is_exact(void **state)
{
	(void)state;
	assert_true(simd_ranges_overlap(0x1000, 0x1000, 0x1fff, 1));
	assert_false(simd_ranges_overlap(0x1000, 0x1000, 0x2000, 0x1000));
	assert_false(simd_ranges_overlap(0x2000, 0x1000, 0x1000, 0x1000));
	assert_true(simd_ranges_overlap(0x1000, 0x10000, 0x3000, 0x1000)); /* inside */
	assert_true(simd_ranges_overlap(0x3000, 0x1000, 0x1000, 0x10000)); /* around */
}

static void iova_allocator_aligns_and_never_overlaps(void **state)
{
	(void)state;
	struct simd_iova_alloc a;
	simd_iova_init(&a);
	uint64_t x, y, z;
	assert_int_equal(simd_iova_get(&a, 4096, 4096, &x), 0);
	assert_int_equal(simd_iova_get(&a, 3 << 21, 1 << 21, &y), 0);
	assert_int_equal(simd_iova_get(&a, 8192, 4096, &z), 0);
	assert_true(x >= SIMD_IOVA_BASE);
	assert_int_equal(y % (1 << 21), 0);
	assert_false(simd_ranges_overlap(x, 4096, y, 3 << 21));
	assert_false(simd_ranges_overlap(y, 3 << 21, z, 8192));
	assert_int_equal(simd_iova_get(&a, 0, 4096, &x), -EINVAL);
	assert_int_equal(simd_iova_get(&a, 4096, 3, &x), -EINVAL);
	assert_int_equal(simd_iova_get(&a, SIMD_IOVA_LIMIT, 4096, &x), -ENOSPC);
	assert_int_equal(simd_iova_get(&a, ~0ull, 4096, &x), -ENOSPC);
}

static void fds_travel_with_the_message(void **state)
{
	(void)state;
	int sv[2], fds[SIMD_MAX_FDS], pipefd[2];
	unsigned nfds;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(pipe(pipefd), 0);
	struct simd_msg m, r;
	size_t len = make_req(&m, SIMD_DMA_MAP);
	m.u.dma.iova = 0x123456789000ull;
	assert_int_equal(simd_send(sv[0], &m, len, pipefd, 2), 0);
	assert_int_equal(simd_recv(sv[1], &r, sizeof(r), fds, SIMD_MAX_FDS, &nfds), (ssize_t)len);
	assert_int_equal(nfds, 2);
	assert_int_equal(r.u.dma.iova, 0x123456789000ull);
	/* The received write end feeds the original read end. */
	assert_int_equal(write(fds[1], "x", 1), 1);
	char c = 0;
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);
	close(fds[1]);

	/* More fds than the receiver takes: all closed, -EMSGSIZE. */
	assert_int_equal(simd_send(sv[0], &m, len, pipefd, 2), 0);
	assert_int_equal(simd_recv(sv[1], &r, sizeof(r), fds, 1, &nfds), -EMSGSIZE);
	assert_int_equal(nfds, 0);

	/* A message longer than the buffer is truncated: refused. */
	assert_int_equal(simd_send(sv[0], &m, len, NULL, 0), 0);
	assert_int_equal(simd_recv(sv[1], &r, 8, fds, SIMD_MAX_FDS, &nfds), -EMSGSIZE);

	/* Hang-up reads as 0; a silent peer times out. */
	assert_int_equal(simd_recv_timeout(sv[1], &r, sizeof(r), fds, SIMD_MAX_FDS, &nfds, 10),
			 -ETIMEDOUT);
	close(sv[0]);
	assert_int_equal(simd_recv(sv[1], &r, sizeof(r), fds, SIMD_MAX_FDS, &nfds), 0);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
}

static void socket_path_precedence(void **state)
{
	(void)state;
	unsetenv(SIMD_SOCKET_ENV);
	assert_string_equal(simd_socket_path(NULL), SIMD_DEFAULT_SOCKET);
	setenv(SIMD_SOCKET_ENV, "/tmp/x.sock", 1);
	assert_string_equal(simd_socket_path(NULL), "/tmp/x.sock");
	assert_string_equal(simd_socket_path("/tmp/y.sock"), "/tmp/y.sock");
	unsetenv(SIMD_SOCKET_ENV);
}

static void connect_to_missing_daemon_fails_cleanly(void **state)
{
	(void)state;
	int s;
	assert_int_equal(simd_connect("/nonexistent/myrio-simd.sock", &s), -ENOENT);
	assert_int_equal(s, -1);
	char longp[200];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(simd_connect(longp, &s), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(well_formed_requests_pass),
	    cmocka_unit_test(malformed_requests_fail_with_a_reason),
	    cmocka_unit_test(dma_ranges_are_checked),
	    cmocka_unit_test(overlap_is_exact),
	    cmocka_unit_test(iova_allocator_aligns_and_never_overlaps),
	    cmocka_unit_test(fds_travel_with_the_message),
	    cmocka_unit_test(socket_path_precedence),
	    cmocka_unit_test(connect_to_missing_daemon_fails_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
