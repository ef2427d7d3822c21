/* SPDX-License-Identifier: BSD-3-Clause */
/* Checking a received frame against the checksum its NIC reported (§4.6). The stack asks
 * only for frames that already failed a transport checksum, so the software sum is off the
 * fast path: it tells a frame damaged before the NIC (the sums agree: drop it) from a
 * buffer that does not hold what the NIC described (a misbehaving NIC: the receive rings
 * are out of step), which the back-end answers with a reset. */
#include <errno.h>

#include "port/port_ops.h"
#include "util/csum.h"

#define ETH_HLEN 14u

/* Ones'-complement sums have two zeros. */
static uint16_t csum_canon(uint16_t s)
{
	return s == 0xffff ? 0 : s;
}

int myrio_rx_verify(struct myrio_port *port, const struct myrio_pkt *p)
{
	if (!(p->ol_flags & MYRIO_PKT_RX_CSUM_PARTIAL) || p->len < ETH_HLEN)
		return 0;
	uint16_t sum = csum_fold(csum_add(0, myrio_pkt_data(p) + ETH_HLEN, p->len - ETH_HLEN));
	if (csum_canon(sum) == csum_canon(p->rx_csum))
		return 1;
	if (port->ops->rx_mismatch)
		port->ops->rx_mismatch(port);
	return -EIO;
}
