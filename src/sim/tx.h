/* SPDX-License-Identifier: BSD-3-Clause */
/* Send descriptors as the model reads them (§5.2, §5.3), shared by tx.c and tx_tso.c. */
#ifndef MYRIO_SIM_TX_H
#define MYRIO_SIM_TX_H

#include <stdint.h>

#include "sim/nic.h"

#define TXF_SMALL 0x01u
#define TXF_TSO_HDR 0x01u
#define TXF_FIRST 0x02u
#define TXF_ALIGN_ODD 0x04u
#define TXF_CKSUM 0x08u
#define TXF_TSO_LAST 0x08u
#define TXF_NO_TSO 0x10u
#define TXF_TSO_CHOP 0x10u
#define TXF_TSO_PLD 0x20u

struct sim_txd {
	uint64_t addr;
	uint16_t pho, len;
	uint8_t rdma, cko, flags;
};

/* A send-buffer read that failed (an IOMMU refused it): counted, and one of the send
 * engine's RDMA tags is lost until the next reset, whether the frame was plain or TSO. */
void sim_tx_read_failed(struct sim_nic *nic);

/* TSO (§5.6). begin validates the chain at idx and gathers it (0, else it is dropped);
 * then the segments go out one at a time, each when the wire has room for it: next_len is
 * the next one's length, send_next sends it. */
int sim_tso_begin(struct sim_nic *nic, uint32_t idx, const struct sim_txd *d, unsigned n,
		  uint32_t total);
uint32_t sim_tso_next_len(const struct sim_nic *nic);
void sim_tso_send_next(struct sim_nic *nic, uint64_t now);

/* Segments of a TSO request and the length of a full one (headers + MSS). */
uint32_t sim_tso_segments(const struct sim_txd *d, unsigned n, uint32_t total, uint32_t *seg_len);

#endif
