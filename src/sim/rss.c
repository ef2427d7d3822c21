/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive-side scaling (§7.3): the slice a received frame goes to. The hash of the type
 * SET_RSS_ENABLE chose (util/rss_hash.h defines them) picks an entry of the indirection
 * table (hash mod table size), a byte in SRAM holding a slice number; an entry naming a
 * slice beyond those enabled means slice 0. The key is the one RSS_KEY_UPDATED took, held
 * as its lookup table: built here, on the model's loop (or with the loop halted), so a
 * frame never meets half a table. */
#include <string.h>

#include "sim/nic.h"
#include "util/rss_hash.h"

void sim_rss_reset(struct sim_nic *nic)
{
	memcpy(nic->bar + SIM_RSS_KEY_OFF, toeplitz_default_key, SIM_RSS_KEY_LEN);
	toeplitz_table_init(&nic->rss_tt, toeplitz_default_key);
	memset(nic->bar + SIM_RSS_TABLE_OFF, 0, 256);
}

void sim_rss_key_updated(struct sim_nic *nic)
{
	uint8_t key[SIM_RSS_KEY_LEN];
	memcpy(key, nic->bar + SIM_RSS_KEY_OFF, sizeof(key));
	toeplitz_table_init(&nic->rss_tt, key);
}

unsigned sim_rss_slice(struct sim_nic *nic, const uint8_t *fr, uint32_t len)
{
	uint32_t h = rss_frame_hash(nic->rss_hash, fr, len, rss_table_toeplitz, &nic->rss_tt);
	uint8_t s = nic->bar[SIM_RSS_TABLE_OFF + h % nic->rss_table_size];
	return s < nic->slices ? s : 0;
}
