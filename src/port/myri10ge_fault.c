/* SPDX-License-Identifier: BSD-3-Clause */
/* Test-only fault injection: MYRIO_FAULT_TX_IOVA=N in the environment makes the Nth frame
 * sent after the port opens go out on a send descriptor whose address was never mapped
 * for DMA, once. The NIC's read is refused (by the IOMMU on hardware and under QEMU, by
 * the model's DMA table in process), the frame is lost and the watchdog must bring the
 * port back (watchdog.c, tags_lost). Never set outside tests (docs/driver.md). */
#include <stdlib.h>

#include "bus/bus.h"
#include "port/myri10ge_port.h"
#include "util/log.h"

/* Below the lowest IOVA any bus hands out (pci/iova.h: MYRIO_IOVA_FLOOR, the model's DMA
 * table registers nothing there either): never mapped. */
#define FAULT_IOVA 0x80000ull

void myri10ge_fault_init(struct myri10ge_port *p)
{
	const char *e = getenv("MYRIO_FAULT_TX_IOVA");
	p->fault_tx_in = e ? strtoul(e, NULL, 10) : 0;
	if (p->fault_tx_in)
		log_warn("%s: MYRIO_FAULT_TX_IOVA=%lu: frame %lu goes out at an unmapped IOVA "
			 "(a test's fault injection)",
			 p->nic.bus->name, p->fault_tx_in, p->fault_tx_in);
}

uint16_t myri10ge_fault_tx(struct myri10ge_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	struct myri_rings *r = &p->nic.rings;
	if (p->fault_tx_in > n) {
		p->fault_tx_in -= n;
		return rings_tx_burst(r, pkts, n);
	}
	uint16_t k = (uint16_t)(p->fault_tx_in - 1), sent = rings_tx_burst(r, pkts, k);
	if (sent < k)
		return sent;
	struct myrio_pkt *bad = pkts[k];
	uint64_t iova = bad->iova;
	bad->iova = FAULT_IOVA; /* only the descriptor sees it: restored before the pool does */
	uint16_t one = rings_tx_burst(r, &bad, 1);
	bad->iova = iova;
	if (!one)
		return sent;
	p->fault_tx_in = 0;
	log_warn("%s: a frame went out at unmapped IOVA 0x%llx (MYRIO_FAULT_TX_IOVA)",
		 p->nic.bus->name, FAULT_IOVA);
	return (uint16_t)(sent + 1 + rings_tx_burst(r, pkts + k + 1, (uint16_t)(n - k - 1)));
}
