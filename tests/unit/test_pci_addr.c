/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI address parsing: canonical form, short form, and everything that must be refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pci/pci_addr.h"

static void parses_full_and_short_forms(void **state)
{
	(void)state;
	struct myrio_pci_addr a;
	char buf[MYRIO_PCI_ADDR_STRLEN + 1];
	assert_int_equal(myrio_pci_addr_parse("0000:03:00.0", &a), 0);
	assert_int_equal(a.domain, 0);
	assert_int_equal(a.bus, 3);
	assert_int_equal(a.dev, 0);
	assert_int_equal(a.func, 0);
	assert_int_equal(myrio_pci_addr_parse("abcd:fe:1f.7", &a), 0);
	assert_int_equal(a.domain, 0xabcd);
	assert_int_equal(a.bus, 0xfe);
	assert_int_equal(a.dev, 0x1f);
	assert_int_equal(a.func, 7);
	assert_string_equal(myrio_pci_addr_str(&a, buf), "abcd:fe:1f.7");
	assert_int_equal(myrio_pci_addr_parse("0A:1B.3", &a), 0);
	assert_string_equal(myrio_pci_addr_str(&a, buf), "0000:0a:1b.3");
}

static void refuses_malformed_addresses(void **state)
{
	(void)state;
	static const char *bad[] = {
	    "",
	    "0000:03:00",
	    "0000:03:00.8",
	    "0000:03:20.0",
	    "0000:3:00.0",
	    "000:03:00.0",
	    "0000:03:00.0 ",
	    " 03:00.0",
	    "0x00:03:00.0",
	    "+000:03:00.0",
	    "00000:03:00.0",
	    "03:00.0.0",
	    "0000-03-00.0",
	    "gggg:03:00.0",
	    "sim:a",
	};
	struct myrio_pci_addr a;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(myrio_pci_addr_parse(bad[i], &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_full_and_short_forms),
	    cmocka_unit_test(refuses_malformed_addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
