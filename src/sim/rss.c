/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive-side scaling (§7.3): the slice a received frame goes to. The hash of the type
 * SET_RSS_ENABLE chose (util/rss_hash.h defines them) picks an entry of the indirection
 * table (hash mod table size), a byte in SRAM holding a slice number; an entry naming a
 * slice beyond those enabled means slice 0. The key is the one RSS_KEY_UPDATED took. */
#include <string.h>

#include "sim/nic.h"
#include "util/rss_hash.h"
#include "util/toeplitz.h"

void sim_rss_reset(struct sim_nic *nic)
{
	memcpy(nic->rss_key, toeplitz_default_key, SIM_RSS_KEY_LEN);
	memcpy(nic->bar + SIM_RSS_KEY_OFF, toeplitz_default_key, SIM_RSS_KEY_LEN);
	memset(nic->bar + SIM_RSS_TABLE_OFF, 0, 256);
}

static uint32_t key_hash(const void *key, const uint8_t *in, unsigned n)
{
	return toeplitz_hash(key, in, n);
}

unsigned sim_rss_slice(struct sim_nic *nic, const uint8_t *fr, uint32_t len)
{
	uint32_t h = rss_frame_hash(nic->rss_hash, fr, len, key_hash, nic->rss_key);
	uint8_t s = nic->bar[SIM_RSS_TABLE_OFF + h % nic->rss_table_size];
	return s < nic->slices ? s : 0;
}
