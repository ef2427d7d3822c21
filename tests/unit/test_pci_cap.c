/* SPDX-License-Identifier: BSD-3-Clause */
/* The one PCI capability walk (src/util/pci_cap.c) on config spaces built here, hostile
 * ones included: a list that loops or points into the standard header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "util/pci_cap.h"

struct cfg {
	uint8_t b[256];
	unsigned reads;
};

static int cfg_read(void *ctx, unsigned off, unsigned size, uint32_t *val)
{
	struct cfg *c = ctx;
	c->reads++;
	if (off + size > sizeof(c->b))
		return -ERANGE;
	*val = 0;
	for (unsigned i = 0; i < size; i++)
		*val |= (uint32_t)c->b[off + i] << (8 * i);
	return 0;
}

/* Status says "capabilities", the list starts at first. */
static void with_list(struct cfg *c, uint8_t first)
{
	memset(c, 0, sizeof(*c));
	c->b[0x06] = 0x10;
	c->b[0x34] = first;
}

static void cap(struct cfg *c, uint8_t at, uint8_t id, uint8_t next)
{
	c->b[at] = id;
	c->b[at + 1] = next;
}

static void finds_each_capability_of_a_chain(void **state)
{
	(void)state;
	struct cfg c;
	with_list(&c, 0x40);
	cap(&c, 0x40, 0x01, 0x50); /* power management */
	cap(&c, 0x50, 0x05, 0x70); /* MSI */
	cap(&c, 0x70, 0x10, 0x00); /* PCI Express, last */
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x01), 0x40);
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x05), 0x50);
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0x70);
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x11), 0);
}

static void no_list_without_the_status_bit(void **state)
{
	(void)state;
	struct cfg c;
	with_list(&c, 0x40);
	cap(&c, 0x40, 0x10, 0x00);
	c.b[0x06] = 0;
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0);
	memset(c.b, 0xff, sizeof(c.b)); /* a device gone from the bus reads all ones */
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0);
}

static void a_looping_list_ends(void **state)
{
	(void)state;
	struct cfg c;
	with_list(&c, 0x40);
	cap(&c, 0x40, 0x01, 0x48);
	cap(&c, 0x48, 0x05, 0x40); /* back to the first */
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0);
	assert_true(c.reads < 60);
}

static void pointers_into_the_header_end_the_walk(void **state)
{
	(void)state;
	struct cfg c;
	with_list(&c, 0x20); /* inside the standard header */
	cap(&c, 0x20, 0x10, 0x00);
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0);
	with_list(&c, 0x40);
	cap(&c, 0x40, 0x01, 0xfe); /* masked to the last dword of the 256 bytes */
	cap(&c, 0xfc, 0x10, 0x00);
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0xfc);
	with_list(&c, 0x43); /* low bits are reserved: masked */
	cap(&c, 0x40, 0x10, 0x00);
	assert_int_equal(pci_cap_find(cfg_read, &c, 0x10), 0x40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(finds_each_capability_of_a_chain),
	    cmocka_unit_test(no_list_without_the_status_bit),
	    cmocka_unit_test(a_looping_list_ends),
	    cmocka_unit_test(pointers_into_the_header_end_the_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
