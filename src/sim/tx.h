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

uint16_t sim_csum_frags(const struct sim_frag *fr, unsigned nf, uint32_t from);
/* Validates and segments a TSO chain (§5.6); 0 if sent, else the chain is dropped. */
int sim_tx_tso(struct sim_nic *nic, uint32_t idx, const struct sim_txd *d, unsigned n,
	       uint32_t total, uint64_t now);

/* Segments of a TSO request and the length of a full one (headers + MSS). */
uint32_t sim_tso_segments(const struct sim_txd *d, unsigned n, uint32_t total, uint32_t *seg_len);
/* Bytes on the wire for a TSO request: every segment repeats the headers. */
uint32_t sim_tso_wire_len(const struct sim_txd *d, unsigned n, uint32_t total);

#endif
