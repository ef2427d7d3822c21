/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI addresses: "DDDD:BB:DD.F" (or "BB:DD.F", domain 0) parsed and printed canonically. */
#ifndef MYRIO_PCI_ADDR_H
#define MYRIO_PCI_ADDR_H

#include <stdint.h>

struct myrio_pci_addr {
	uint16_t domain;
	uint8_t bus;
	uint8_t dev;  /* 0..31 */
	uint8_t func; /* 0..7 */
};

/* Canonical form, as sysfs names devices: "0000:03:00.0". */
#define MYRIO_PCI_ADDR_STRLEN 12

/* 0, or -EINVAL when s is not a PCI address. */
int myrio_pci_addr_parse(const char *s, struct myrio_pci_addr *a);
/* buf holds at least MYRIO_PCI_ADDR_STRLEN + 1 bytes; returns buf. */
char *myrio_pci_addr_str(const struct myrio_pci_addr *a, char *buf);

#endif
