/* SPDX-License-Identifier: BSD-3-Clause */
/* The command channel (§3): the 64-byte block at BAR0 + 0xF80000, acted on when its word
 * 15 changes from the poison value; one command at a time; the 8-byte response is DMA'd
 * with `data` before `result`. Every opcode drivers use (§10 list) with its argument checks;
 * everything else answers UNKNOWN. */
#include <inttypes.h>
#include <string.h>

#include "sim/fw_abi.h"
#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

#define DMA_TEST_TRANSFERS 256u
#define DMA_TEST_MBPS 2000u /* modelled PCIe DMA bandwidth for the benchmark's ticks */
/* [I] how long ETHERNET_DOWN may spend finishing posted sends (a peer's PAUSE can hold them
 * for seconds): inside the 15 ms Linux gives a command (§3.1) */
#define DOWN_FLUSH_MAX_NS 10000000ull
#define ANSWER_LATER UINT32_MAX /* a handler's result: the command is answered later */

struct cmd {
	uint32_t op, d0, d1, d2;
	uint64_t resp;
};

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* DMA_TEST / UNALIGNED_TEST (§3.3 #25/#32): really reads and writes the host page. */
static uint32_t dma_test(struct sim_nic *nic, const struct cmd *c, uint32_t *data)
{
	uint64_t a = (uint64_t)c->d1 << 32 | c->d0;
	uint32_t rlen = c->d2 >> SIM_DMA_TEST_READ_SHIFT, wlen = c->d2 & SIM_DMA_TEST_WRITE_MASK;
	if ((rlen == 0 && wlen == 0) || rlen > 4096 || wlen > 4096)
		return SIM_ERR_RANGE;
	uint32_t len = rlen > wlen ? rlen : wlen;
	uint8_t *p = sim_dma(nic, a, len, "DMA test page");
	if (!p)
		return SIM_ERR_RANGE;
	volatile uint32_t sink = 0;
	for (uint32_t i = 0; i + 4 <= rlen; i += 64)
		sink += *(volatile uint32_t *)(p + i);
	(void)sink;
	for (uint32_t i = 0; i < wlen; i++)
		p[i] = (uint8_t)(i ^ 0xA5);
	uint32_t both = (rlen ? 1 : 0) + (wlen ? 1 : 0);
	uint64_t ticks = (uint64_t)DMA_TEST_TRANSFERS * len * 2 * both / DMA_TEST_MBPS;
	if (ticks == 0)
		ticks = 1;
	if (ticks > 0xFFFF)
		ticks = 0xFFFF;
	*data = DMA_TEST_TRANSFERS << 16 | (uint32_t)ticks;
	return SIM_OK;
}

static void mac_from(uint8_t m[6], uint32_t hi4, uint32_t lo2_high16)
{
	m[0] = (uint8_t)(hi4 >> 24);
	m[1] = (uint8_t)(hi4 >> 16);
	m[2] = (uint8_t)(hi4 >> 8);
	m[3] = (uint8_t)hi4;
	m[4] = (uint8_t)(lo2_high16 >> 24);
	m[5] = (uint8_t)(lo2_high16 >> 16);
}

static int mcast_find(const struct sim_nic *nic, const uint8_t m[6])
{
	for (unsigned i = 0; i < nic->n_mcast; i++)
		if (!memcmp(nic->mcast[i], m, 6))
			return (int)i;
	return -1;
}

static char media_char(const struct sim_nic *nic)
{
	const char *pc =
	    nic->world->conf.product_code[0] ? nic->world->conf.product_code : "10G-PCIE-8B-S";
	int dashes = 0;
	for (const char *p = pc; *p; p++)
		if (*p == '-' && ++dashes == 3) {
			char ch = p[1];
			return ch == '2' && p[2] ? p[2] : ch;
		}
	return 'S';
}

static void sfp_table(struct sim_nic *nic)
{
	memset(nic->sfp, 0, sizeof(nic->sfp));
	if (media_char(nic) == 'R') { /* XFP */
		nic->sfp[0] = 0x06;
		nic->sfp[131] = 0x80; /* 10GBASE-SR */
	} else {
		nic->sfp[0] = 0x03; /* SFP/SFP+ */
		nic->sfp[1] = 0x04;
		nic->sfp[2] = 0x07; /* LC */
		nic->sfp[3] = 0x10; /* 10GBASE-SR */
	}
}

static uint32_t op_reset(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	sim_nic_logical_reset(nic);
	*data = nic->rx_entries * 8; /* [I] 2 x rx entries x 4 (§3.3 #1) */
	return SIM_OK;
}

/* GET_MCP_VERSION (§3.3 #2): the running firmware's version, one byte per number [I]. */
static uint32_t op_get_mcp_version(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				   uint64_t now)
{
	*data = (nic->fw.major & 0xff) << 16 | (nic->fw.minor & 0xff) << 8 | (nic->fw.tiny & 0xff);
	return SIM_OK;
}

static uint32_t op_set_intrq_dma(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				 uint64_t now)
{
	if (c->d2 >= nic->slices)
		return SIM_ERR_RANGE; /* s > 0 before ENABLE_RSS_QUEUES too (§7.2) */
	struct sim_slice *q = &nic->sl[c->d2];
	q->intrq_iova = (uint64_t)c->d1 << 32 | c->d0;
	q->intrq_dma_set = true;
	q->intrq_idx = 0;
	q->intrq_va = NULL;
	return SIM_OK;
}

/* SET_BIG_BUFFER_SIZE / SET_SMALL_BUFFER_SIZE (§3.3 #4, #5): a big buffer holds at least a
 * minimum frame. */
static uint32_t op_set_buffer_size(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				   uint64_t now)
{
	bool big = c->op == SIM_CMD_SET_BIG_BUFFER_SIZE;
	if (c->d0 < (big ? 64u : 1u) || c->d0 > 16384)
		return SIM_ERR_RANGE;
	*(big ? &nic->big_size : &nic->small_size) = c->d0;
	return SIM_OK;
}

/* GET_*_OFFSET (§3.3): where the model put a ring or an interrupt word; the rings are per
 * slice, so their slice (data0) must exist. */
static uint32_t op_get_offset(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
			      uint64_t now)
{
	bool per_slice = c->op == SIM_CMD_GET_SEND_OFFSET || c->op == SIM_CMD_GET_SMALL_RX_OFFSET ||
			 c->op == SIM_CMD_GET_BIG_RX_OFFSET;
	if (per_slice && c->d0 >= nic->slices)
		return SIM_ERR_RANGE;
	switch (c->op) {
	case SIM_CMD_GET_SEND_OFFSET:
		*data = nic->sl[c->d0].tx_off;
		break;
	case SIM_CMD_GET_SMALL_RX_OFFSET:
		*data = nic->sl[c->d0].small.off;
		break;
	case SIM_CMD_GET_BIG_RX_OFFSET:
		*data = nic->sl[c->d0].big.off;
		break;
	case SIM_CMD_GET_IRQ_ACK_OFFSET:
		*data = nic->rings_at + SIM_CLAIM_OFF;
		break;
	default: /* SIM_CMD_GET_IRQ_DEASSERT_OFFSET */
		*data = nic->rings_at + SIM_DEASSERT_OFF;
	}
	return SIM_OK;
}

/* data fields ignored: F sends garbage (§10) */
static uint32_t op_get_send_ring_size(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				      uint64_t now)
{
	*data = nic->tx_entries * 16;
	return SIM_OK;
}

static uint32_t op_get_rx_ring_size(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				    uint64_t now)
{
	*data = nic->rx_entries * 8;
	return SIM_OK;
}

static uint32_t op_set_intrq_size(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				  uint64_t now)
{
	bool relaxed = c->d0 & 0x80000000u;
	uint32_t bytes = c->d0 & 0x7FFFFFFFu;
	if (bytes % 4 || !is_pow2(bytes / 4) || bytes / 4 > (1u << 20))
		return SIM_ERR_RANGE;
	if (!relaxed && bytes != 2 * nic->rx_entries * 4)
		return SIM_ERR_RANGE;
	nic->intrq_bytes = bytes;
	nic->intrq_mask = bytes / 4 - 1;
	nic->intrq_size_set = true;
	for (unsigned s = 0; s < SIM_MAX_SLICES; s++) {
		nic->sl[s].intrq_idx = 0;
		nic->sl[s].intrq_va = NULL;
	}
	return SIM_OK;
}

static bool slices_have_rings(const struct sim_nic *nic)
{
	for (unsigned s = 0; s < nic->slices; s++)
		if (!nic->sl[s].intrq_dma_set || (nic->multi_tx && !nic->sl[s].stats_set))
			return false;
	return true;
}

static uint32_t op_ethernet_up(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
			       uint64_t now)
{
	if (!nic->intrq_size_set || !slices_have_rings(nic) || !nic->sl[0].stats_set ||
	    !nic->small_size || !nic->big_size) {
		if (sim_nic_ratelimit(nic, SIM_DIAG_CTRL))
			log_warn("%s: ETHERNET_UP refused: set the interrupt queue size and "
				 "every slice's address, the stats DMA and both buffer sizes first "
				 "(§10)",
				 nic->name);
		return SIM_ERR_RANGE; /* [I] §11, question 6 */
	}
	if (!nic->running) {
		nic->running = true;
		nic->stats_pending = true;
		for (unsigned s = 0; s < SIM_MAX_SLICES; s++)
			nic->sl[s].tx_idle_at = now;
		sim_irq_event(nic, now);
	}
	return SIM_OK;
}

/* Stops the NIC; a "down" status update follows the answer (§6.3). */
static void ethernet_down(struct sim_nic *nic, uint64_t now)
{
	nic->running = false;
	if (nic->link_down_events < 255)
		nic->link_down_events++;
	nic->stats_pending = true;
	sim_irq_event(nic, now);
}

/* Whether the send engine can take what is posted: not once it hung or lost every tag. */
static bool tx_can_finish(const struct sim_nic *nic)
{
	return !nic->fault_tx_hang && nic->rdma_tags && sim_tx_in_hand(nic);
}

/* ETHERNET_DOWN finishes the work in hand before it answers (§10): frames the host posted
 * before it still leave, at the link's pace. Nothing else is buffered inside the model. */
static uint32_t op_ethernet_down(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				 uint64_t now)
{
	if (!nic->running)
		return SIM_OK;
	if (tx_can_finish(nic)) {
		nic->down_pending = true;
		nic->down_resp = c->resp;
		nic->down_until = now + DOWN_FLUSH_MAX_NS;
		return ANSWER_LATER;
	}
	ethernet_down(nic, now);
	return SIM_OK;
}

static uint32_t op_set_mtu(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	if (c->d0 > 9400 || c->d0 < 60)
		return SIM_ERR_RANGE;
	nic->mtu = c->d0;
	return SIM_OK;
}

static uint32_t op_get_intr_coal_delay_offset(struct sim_nic *nic, const struct cmd *c,
					      uint32_t *data, uint64_t now)
{
	*data = nic->rings_at + SIM_COAL_OFF;
	return SIM_OK;
}

static uint32_t op_set_stats_interval(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				      uint64_t now)
{
	if (c->d0 > 10000000)
		return SIM_ERR_RANGE;
	nic->stats_interval_us = c->d0;
	return SIM_OK;
}

static uint32_t op_set_stats_dma_obsolete(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
					  uint64_t now)
{
	struct sim_slice *q = &nic->sl[0];
	q->stats_iova = (uint64_t)c->d1 << 32 | c->d0;
	q->stats_host_size = 40;
	q->stats_set = true;
	return SIM_OK;
}

static uint32_t op_promisc(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	nic->promisc = c->op == SIM_CMD_ENABLE_PROMISC;
	return SIM_OK;
}

static uint32_t op_set_mac_address(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				   uint64_t now)
{
	mac_from(nic->mac, c->d0, c->d1 << 16);
	return SIM_OK;
}

static uint32_t op_flow_control(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				uint64_t now)
{
	nic->flow_control = c->op == SIM_CMD_ENABLE_FLOW_CONTROL;
	return SIM_OK;
}

static uint32_t op_dma_test(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	return dma_test(nic, c, data);
}

static uint32_t op_unaligned_test(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				  uint64_t now)
{
	if (nic->fault_unaligned || nic->world->conf.unaligned_rc)
		return SIM_ERR_UNALIGNED;
	return dma_test(nic, c, data);
}

static uint32_t op_allmulti(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	nic->allmulti = c->op == SIM_CMD_ENABLE_ALLMULTI;
	return SIM_OK;
}

void sim_nic_set_mcast_capacity(struct sim_nic *nic, unsigned groups)
{
	nic->mcast_capacity = groups < SIM_MCAST_MAX ? groups : 0;
}

static uint32_t op_join_multicast_group(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
					uint64_t now)
{
	uint8_t m[6];
	mac_from(m, c->d0, c->d1);
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	if (!(m[0] & 1) || !memcmp(m, bcast, 6))
		return SIM_ERR_MULTICAST;
	if (mcast_find(nic, m) >= 0)
		return SIM_OK;
	if (nic->n_mcast >= (nic->mcast_capacity ? nic->mcast_capacity : SIM_MCAST_MAX))
		return SIM_ERR_MULTICAST;
	memcpy(nic->mcast[nic->n_mcast++], m, 6);
	return SIM_OK;
}

static uint32_t op_leave_multicast_group(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
					 uint64_t now)
{
	uint8_t m[6];
	mac_from(m, c->d0, c->d1);
	int i = mcast_find(nic, m);
	if (i < 0)
		return SIM_ERR_MULTICAST;
	memmove(nic->mcast[i], nic->mcast[i + 1], (nic->n_mcast - (unsigned)i - 1) * 6);
	nic->n_mcast--;
	return SIM_OK;
}

static uint32_t op_leave_all_multicast_groups(struct sim_nic *nic, const struct cmd *c,
					      uint32_t *data, uint64_t now)
{
	nic->n_mcast = 0;
	return SIM_OK;
}

static uint32_t op_set_stats_dma_v2(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				    uint64_t now)
{
	uint32_t size = c->d2 & 0xFFFF, s = c->d2 >> 16;
	if (s >= nic->slices || size < 4 || size > 4096)
		return SIM_ERR_RANGE;
	if (s > 0 && !nic->multi_tx)
		return SIM_ERR_RANGE; /* a receive-only slice has no status block (§6.2) */
	struct sim_slice *q = &nic->sl[s];
	q->stats_iova = (uint64_t)c->d1 << 32 | c->d0;
	q->stats_host_size = size;
	q->stats_set = true;
	return SIM_OK;
}

static uint32_t op_always_use_n_big_buffers(struct sim_nic *nic, const struct cmd *c,
					    uint32_t *data, uint64_t now)
{
	if (c->d0 != 0 && (!is_pow2(c->d0) || c->d0 > 16))
		return SIM_ERR_RANGE;
	nic->always_n = c->d0;
	return SIM_OK;
}

static uint32_t op_get_max_rss_queues(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				      uint64_t now)
{
	if (!nic->fw.rss)
		return SIM_ERR_UNKNOWN;
	if (!nic->intrq_size_set)
		return SIM_ERR_RANGE; /* it sizes the slices' queues: after SET_INTRQ_SIZE (§7.2) */
	nic->max_rss_queried = true;
	*data = SIM_MAX_SLICES;
	return SIM_OK;
}

static uint32_t op_enable_rss_queues(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				     uint64_t now)
{
	if (!nic->fw.rss)
		return SIM_ERR_UNKNOWN;
	if (!nic->max_rss_queried || c->d0 < 1 || c->d0 > SIM_MAX_SLICES)
		return SIM_ERR_RANGE;
	if ((c->d1 & 2) && !nic->fw.multi_tx)
		return SIM_ERR_RANGE;
	if (c->d0 > 1 && !(c->d1 & 1))
		return SIM_ERR_RANGE; /* [I] the shared-interrupt mode (37/38) is not modelled */
	if (nic->running && c->d0 != nic->slices)
		return SIM_ERR_BUSY;
	/* Again with the same count (L does it at open) keeps the slices' queues. */
	if (c->d0 != nic->slices)
		for (unsigned s = 1; s < SIM_MAX_SLICES; s++) {
			nic->sl[s].intrq_dma_set = nic->sl[s].stats_set = false;
			if (s < c->d0)
				sim_slice_clear_rings(nic, s);
		}
	nic->slices = c->d0;
	nic->multi_tx = c->d1 & 2;
	nic->vec_per_slice = c->d1 & 1;
	for (unsigned s = 0; s < SIM_MAX_SLICES; s++)
		nic->sl[s].tx_active = false;
	return SIM_OK;
}

static uint32_t op_get_rss_table_offset(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
					uint64_t now)
{
	if (!nic->fw.rss)
		return SIM_ERR_UNKNOWN;
	if (!nic->max_rss_queried)
		return SIM_ERR_RANGE;
	*data = SIM_RSS_TABLE_OFF;
	return SIM_OK;
}

static uint32_t op_set_rss_table_size(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				      uint64_t now)
{
	if (!nic->fw.rss)
		return SIM_ERR_UNKNOWN;
	if (!nic->max_rss_queried || c->d0 < 1 || c->d0 > 256)
		return SIM_ERR_RANGE;
	nic->rss_table_size = c->d0;
	return SIM_OK;
}

static uint32_t op_set_rss_enable(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				  uint64_t now)
{
	if (!nic->fw.rss)
		return SIM_ERR_UNKNOWN;
	if (!nic->max_rss_queried || c->d0 > 1 ||
	    (c->d0 && (c->d1 < 1 || c->d1 > 5 || !nic->rss_table_size)))
		return SIM_ERR_RANGE;
	nic->rss_enabled = c->d0;
	nic->rss_hash = c->d1;
	return SIM_OK;
}

/* Only the RSS image knows these commands, and only after GET_MAX_RSS_QUEUES (§7.2). */
static uint32_t rss_ready(const struct sim_nic *nic)
{
	return !nic->fw.rss ? SIM_ERR_UNKNOWN : !nic->max_rss_queried ? SIM_ERR_RANGE : SIM_OK;
}

static uint32_t op_get_rss_key_offset(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				      uint64_t now)
{
	uint32_t r = rss_ready(nic);
	if (r == SIM_OK)
		*data = SIM_RSS_KEY_OFF;
	return r;
}

/* The key is read from SRAM here, not per frame: a half-written key is never used. */
static uint32_t op_rss_key_updated(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				   uint64_t now)
{
	uint32_t r = rss_ready(nic);
	if (r == SIM_OK)
		sim_rss_key_updated(nic);
	return r;
}

static uint32_t op_get_max_tso6_hdr_size(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
					 uint64_t now)
{
	if (nic->fw.tiny < 25)
		return SIM_ERR_UNKNOWN;
	*data = 256;
	return SIM_OK;
}

static uint32_t op_set_tso_mode(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				uint64_t now)
{
	if (c->d0 > 1)
		return SIM_ERR_RANGE;
	nic->tso_mode = c->d0;
	return SIM_OK;
}

static uint32_t op_i2c_read(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	uint32_t bus = (c->d1 >> 16) & 0xFF;
	char m = media_char(nic);
	if (c->d0 > 1 || bus > 1)
		return SIM_ERR_RANGE;
	if (m != 'S' && m != 'R')
		return SIM_ERR_I2C_ABSENT;
	sfp_table(nic);
	nic->i2c_busy_until = now + (c->d0 ? 8000000ull : 1000000ull);
	return SIM_OK;
}

static uint32_t op_i2c_byte(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	if (c->d0 > 255)
		return SIM_ERR_RANGE;
	if (now < nic->i2c_busy_until)
		return SIM_ERR_BUSY;
	*data = nic->sfp[c->d0];
	return SIM_OK;
}

static uint32_t op_set_rss_mcp_slot_type(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
					 uint64_t now)
{
	return c->d0 == 0 ? SIM_OK : SIM_ERR_RANGE; /* 8-byte entries not modelled */
}

static uint32_t op_set_throttle_factor(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				       uint64_t now)
{
	uint32_t max = nic->tx_boundary == SIM_TX_BOUNDARY_UNALIGNED ? 8191 : 4095;
	if (c->d0 == 0 || c->d0 > max)
		return SIM_ERR_RANGE;
	nic->throttle = c->d0;
	return SIM_OK;
}

static uint32_t op_relax_rxbuffer_alignment(struct sim_nic *nic, const struct cmd *c,
					    uint32_t *data, uint64_t now)
{
	nic->relax_align = true;
	return SIM_OK;
}

typedef uint32_t (*cmd_handler)(struct sim_nic *nic, const struct cmd *c, uint32_t *data,
				uint64_t now);

/* Opcode -> handler; an opcode without one answers UNKNOWN. */
static const cmd_handler handlers[] = {
    [SIM_CMD_RESET] = op_reset,
    [SIM_CMD_GET_MCP_VERSION] = op_get_mcp_version,
    [SIM_CMD_SET_INTRQ_DMA] = op_set_intrq_dma,
    [SIM_CMD_SET_BIG_BUFFER_SIZE] = op_set_buffer_size,
    [SIM_CMD_SET_SMALL_BUFFER_SIZE] = op_set_buffer_size,
    [SIM_CMD_GET_SEND_OFFSET] = op_get_offset,
    [SIM_CMD_GET_SMALL_RX_OFFSET] = op_get_offset,
    [SIM_CMD_GET_BIG_RX_OFFSET] = op_get_offset,
    [SIM_CMD_GET_IRQ_ACK_OFFSET] = op_get_offset,
    [SIM_CMD_GET_IRQ_DEASSERT_OFFSET] = op_get_offset,
    [SIM_CMD_GET_SEND_RING_SIZE] = op_get_send_ring_size,
    [SIM_CMD_GET_RX_RING_SIZE] = op_get_rx_ring_size,
    [SIM_CMD_SET_INTRQ_SIZE] = op_set_intrq_size,
    [SIM_CMD_ETHERNET_UP] = op_ethernet_up,
    [SIM_CMD_ETHERNET_DOWN] = op_ethernet_down,
    [SIM_CMD_SET_MTU] = op_set_mtu,
    [SIM_CMD_GET_INTR_COAL_DELAY_OFFSET] = op_get_intr_coal_delay_offset,
    [SIM_CMD_SET_STATS_INTERVAL] = op_set_stats_interval,
    [SIM_CMD_SET_STATS_DMA_OBSOLETE] = op_set_stats_dma_obsolete,
    [SIM_CMD_ENABLE_PROMISC] = op_promisc,
    [SIM_CMD_DISABLE_PROMISC] = op_promisc,
    [SIM_CMD_SET_MAC_ADDRESS] = op_set_mac_address,
    [SIM_CMD_ENABLE_FLOW_CONTROL] = op_flow_control,
    [SIM_CMD_DISABLE_FLOW_CONTROL] = op_flow_control,
    [SIM_CMD_DMA_TEST] = op_dma_test,
    [SIM_CMD_UNALIGNED_TEST] = op_unaligned_test,
    [SIM_CMD_ENABLE_ALLMULTI] = op_allmulti,
    [SIM_CMD_DISABLE_ALLMULTI] = op_allmulti,
    [SIM_CMD_JOIN_MULTICAST_GROUP] = op_join_multicast_group,
    [SIM_CMD_LEAVE_MULTICAST_GROUP] = op_leave_multicast_group,
    [SIM_CMD_LEAVE_ALL_MULTICAST_GROUPS] = op_leave_all_multicast_groups,
    [SIM_CMD_SET_STATS_DMA_V2] = op_set_stats_dma_v2,
    [SIM_CMD_ALWAYS_USE_N_BIG_BUFFERS] = op_always_use_n_big_buffers,
    [SIM_CMD_GET_MAX_RSS_QUEUES] = op_get_max_rss_queues,
    [SIM_CMD_ENABLE_RSS_QUEUES] = op_enable_rss_queues,
    [SIM_CMD_GET_RSS_TABLE_OFFSET] = op_get_rss_table_offset,
    [SIM_CMD_SET_RSS_TABLE_SIZE] = op_set_rss_table_size,
    [SIM_CMD_SET_RSS_ENABLE] = op_set_rss_enable,
    [SIM_CMD_GET_RSS_KEY_OFFSET] = op_get_rss_key_offset,
    [SIM_CMD_RSS_KEY_UPDATED] = op_rss_key_updated,
    [SIM_CMD_GET_MAX_TSO6_HDR_SIZE] = op_get_max_tso6_hdr_size,
    [SIM_CMD_SET_TSO_MODE] = op_set_tso_mode,
    [SIM_CMD_I2C_READ] = op_i2c_read,
    [SIM_CMD_I2C_BYTE] = op_i2c_byte,
    [SIM_CMD_SET_RSS_MCP_SLOT_TYPE] = op_set_rss_mcp_slot_type,
    [SIM_CMD_SET_THROTTLE_FACTOR] = op_set_throttle_factor,
    [SIM_CMD_RELAX_RXBUFFER_ALIGNMENT] = op_relax_rxbuffer_alignment,
};

static uint32_t execute(struct sim_nic *nic, const struct cmd *c, uint32_t *data, uint64_t now)
{
	*data = 0;
	if (c->op >= sizeof(handlers) / sizeof(handlers[0]) || !handlers[c->op])
		return SIM_ERR_UNKNOWN;
	return handlers[c->op](nic, c, data, now);
}

static void respond(struct sim_nic *nic, uint64_t resp, uint32_t data, uint32_t result)
{
	uint8_t *p = sim_dma(nic, resp, 8, "command response");
	if (!p)
		return;
	__atomic_store_n((uint32_t *)p, be32(data), __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(p + 4), be32(result), __ATOMIC_RELEASE);
}

unsigned sim_cmd_poll(struct sim_nic *nic, uint64_t now)
{
	if (__builtin_expect(!sim_block_written(nic, SIM_CMD_OFF), 1))
		return 0;
	struct cmd c;
	c.op = sim_rd32(nic, SIM_CMD_OFF + 0);
	c.d0 = sim_rd32(nic, SIM_CMD_OFF + 4);
	c.d1 = sim_rd32(nic, SIM_CMD_OFF + 8);
	c.d2 = sim_rd32(nic, SIM_CMD_OFF + 12);
	c.resp = (uint64_t)sim_rd32(nic, SIM_CMD_OFF + 16) << 32 | sim_rd32(nic, SIM_CMD_OFF + 20);
	/* Re-arm the trigger before answering: the host writes the next command only after
	 * it has seen this response. */
	sim_wr32_raw(nic, SIM_CMD_OFF + 60, SIM_POISON);
	nic->st.cmds++;
	if (nic->fault_cmd_timeout) {
		nic->fault_cmd_timeout = false;
		log_info("%s: injected fault: command %u gets no response", nic->name, c.op);
		return 1;
	}
	uint32_t data = 0, result;
	if (nic->fault_cmd_error) {
		nic->fault_cmd_error = false;
		result = nic->fault_cmd_error_val;
	} else {
		result = execute(nic, &c, &data, now);
	}
	if (result == ANSWER_LATER)
		return 1;
	if (result != SIM_OK) {
		nic->st.cmd_errors++;
		log_debug("%s: command %u (0x%x 0x%x 0x%x) -> result %u", nic->name, c.op, c.d0,
			  c.d1, c.d2, result);
	}
	respond(nic, c.resp, data, result);
	return 1;
}

unsigned sim_cmd_down_poll(struct sim_nic *nic, uint64_t now)
{
	/* while the frames go out the loop keeps running: they are bounded by the limit */
	if (tx_can_finish(nic) && now < nic->down_until)
		return 1;
	nic->down_pending = false;
	ethernet_down(nic, now);
	respond(nic, nic->down_resp, 0, SIM_OK);
	return 1;
}
