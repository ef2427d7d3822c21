/* SPDX-License-Identifier: BSD-3-Clause */
/* The Intel 82574 (e1000e) as the driver sees it: registers, their bits, and the legacy
 * descriptors (82574 datasheet, chapters 7 and 10). The one home of these facts. */
#ifndef MYRIO_E1000E_REGS_H
#define MYRIO_E1000E_REGS_H

#include <stdint.h>

#define E1000E_PCI_VENDOR_INTEL 0x8086
#define E1000E_PCI_DEVICE_82574L 0x10d3

/* Register offsets in BAR0 (82574 datasheet §10.2) */
enum {
	E1000E_CTRL = 0x0000,
	E1000E_STATUS = 0x0008,
	E1000E_EERD = 0x0014,
	E1000E_ICR = 0x00c0,
	E1000E_IMS = 0x00d0,
	E1000E_IMC = 0x00d8,
	E1000E_IVAR = 0x00e4,
	E1000E_RCTL = 0x0100,
	E1000E_TCTL = 0x0400,
	E1000E_RDBAL = 0x2800,
	E1000E_RDBAH = 0x2804,
	E1000E_RDLEN = 0x2808,
	E1000E_RDH = 0x2810,
	E1000E_RDT = 0x2818,
	E1000E_TDBAL = 0x3800,
	E1000E_TDBAH = 0x3804,
	E1000E_TDLEN = 0x3808,
	E1000E_TDH = 0x3810,
	E1000E_TDT = 0x3818,
	/* statistics, cleared when read (82574 datasheet §10.2.6) */
	E1000E_CRCERRS = 0x4000,
	E1000E_MPC = 0x4010,
	E1000E_GPRC = 0x4074,
	E1000E_GPTC = 0x4080,
	E1000E_RNBC = 0x40a0,
	E1000E_RAL0 = 0x5400,
	E1000E_RAH0 = 0x5404,
};

#define E1000E_CTRL_SLU (1u << 6)
#define E1000E_CTRL_RST (1u << 26)
#define E1000E_STATUS_LU (1u << 1)
#define E1000E_EERD_START 1u
#define E1000E_EERD_DONE (1u << 1)
#define E1000E_RCTL_EN (1u << 1)
#define E1000E_RCTL_UPE (1u << 3) /* unicast promiscuous */
#define E1000E_RCTL_MPE (1u << 4) /* multicast promiscuous */
#define E1000E_RCTL_BAM (1u << 15)
#define E1000E_RCTL_SECRC (1u << 26)
#define E1000E_TCTL_EN (1u << 1)
#define E1000E_TCTL_PSP (1u << 3)
#define E1000E_TCTL_CT (0x0fu << 4)
#define E1000E_TCTL_COLD (0x3fu << 12)
#define E1000E_RAH_AV (1u << 31)
#define E1000E_TXD_EOP 0x01
#define E1000E_TXD_IFCS 0x02
#define E1000E_TXD_RS 0x08
#define E1000E_DESC_DD 0x01
#define E1000E_RXD_EOP 0x02
#define E1000E_ICR_RXT0 (1u << 7)
#define E1000E_ICR_RXQ0 (1u << 20)
#define E1000E_IVAR_RXQ0_VEC0 0x8u /* valid bit, vector 0 */

/* Receive buffers of RCTL.BSIZE = 00 (the reset value): 2048 bytes. */
#define E1000E_RX_BUF 2048u

struct e1000e_tx_desc {
	uint64_t addr;
	uint16_t length;
	uint8_t cso;
	uint8_t cmd;
	uint8_t status;
	uint8_t css;
	uint16_t special;
};

struct e1000e_rx_desc {
	uint64_t addr;
	uint16_t length;
	uint16_t csum;
	uint8_t status;
	uint8_t errors;
	uint16_t special;
};

#endif
