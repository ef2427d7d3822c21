/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stack harness on its third link: two NICs of a running model daemon (the real
 * myrio-simd), a byte-checked TCP transfer through the daemon's cable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simd_daemon.h"
#include "stack_xfer.h"

static void transfer_through_the_daemon(void **state)
{
	struct simd_daemon_proc d;
	assert_int_equal(simd_daemon_start(&d, "stack", NULL), 0);
	char link[160];
	snprintf(link, sizeof(link), "simd:nic0+nic1@%s", d.sock);
	struct stack_pair h;
	assert_int_equal(sp_open(&h, link, NULL), 0);
	struct xfer x = {.total = 4u << 20, .zero_copy = true};
	xfer_run(&h, &x, 50000000);
	xfer_report("through myrio-simd", &h, &x);
	sp_close(&h);
	assert_int_equal(simd_daemon_stop(&d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(transfer_through_the_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
