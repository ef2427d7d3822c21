/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI address parsing: strict, so that a typo never names some other device. */
#include "pci/pci_addr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int myrio_pci_addr_parse(const char *s, struct myrio_pci_addr *a)
{
	unsigned d = 0, b, dev, f;
	int n = 0;
	size_t len = strlen(s);

	/* sscanf alone would accept signs, spaces and 0x prefixes. */
	if (strspn(s, "0123456789abcdefABCDEF:.") != len)
		return -EINVAL;

	if (sscanf(s, "%4x:%2x:%2x.%1x%n", &d, &b, &dev, &f, &n) == 4 && (size_t)n == len &&
	    len == MYRIO_PCI_ADDR_STRLEN)
		goto ok;
	d = 0;
	n = 0;
	if (sscanf(s, "%2x:%2x.%1x%n", &b, &dev, &f, &n) == 3 && (size_t)n == len && len == 7)
		goto ok;
	return -EINVAL;
ok:
	if (dev > 31 || f > 7)
		return -EINVAL;
	a->domain = (uint16_t)d;
	a->bus = (uint8_t)b;
	a->dev = (uint8_t)dev;
	a->func = (uint8_t)f;
	return 0;
}

char *myrio_pci_addr_str(const struct myrio_pci_addr *a, char *buf)
{
	snprintf(buf, MYRIO_PCI_ADDR_STRLEN + 1, "%04x:%02x:%02x.%x", a->domain, a->bus, a->dev,
		 a->func & 7u);
	return buf;
}
