/* Receive-side scaling (§7.3): the slice a received frame goes to. The hash of the type
 * SET_RSS_ENABLE chose picks an entry of the indirection table (hash mod table size), a
 * byte in SRAM holding a slice number.
 *
 * Hash types, the model's definitions where nothing public gives them [I]:
 *   1  IPv4: Toeplitz over source and destination address
 *   2  TCP/IPv4: Toeplitz over addresses and ports; other frames to table entry 0
 *   3  both (Microsoft's RSS): TCP by the 4-tuple, other IPv4 by the addresses
 *   4  source port: the TCP/UDP source port as a number
 *   5  source and destination port: the two ports XORed (the same for both directions)
 * Non-IPv4 frames, IPv4 fragments (for the port types) and non-TCP/UDP frames (types 4, 5)
 * use table entry 0; a table entry naming a slice beyond those enabled means slice 0. */
#include <string.h>

#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/toeplitz.h"

enum { HASH_IPV4 = 1, HASH_TCP_IPV4, HASH_BOTH, HASH_SRC_PORT, HASH_SRC_DST_PORT };

void sim_rss_reset(struct sim_nic *nic)
{
	memcpy(nic->rss_key, toeplitz_default_key, SIM_RSS_KEY_LEN);
	memcpy(nic->bar + SIM_RSS_KEY_OFF, toeplitz_default_key, SIM_RSS_KEY_LEN);
	memset(nic->bar + SIM_RSS_TABLE_OFF, 0, 256);
}

/* The hash of frame bytes fr[0, len): 0 when the type does not cover the frame. */
static uint32_t frame_hash(const struct sim_nic *nic, const uint8_t *fr, uint32_t len)
{
	if (len < 34 || get_be16(fr + 12) != 0x0800)
		return 0;
	const uint8_t *ip = fr + 14;
	uint32_t ihl = (ip[0] & 0x0Fu) * 4;
	if (ip[0] >> 4 != 4 || ihl < 20)
		return 0;
	uint8_t proto = ip[9];
	bool frag = get_be16(ip + 6) & 0x3FFF;
	bool ports = !frag && (proto == 6 || proto == 17) && 14 + ihl + 4 <= len;
	const uint8_t *l4 = ip + ihl;
	uint8_t tuple[12];
	memcpy(tuple, ip + 12, 8);
	if (ports)
		memcpy(tuple + 8, l4, 4);
	switch (nic->rss_hash) {
	case HASH_IPV4:
		return toeplitz_hash(nic->rss_key, tuple, 8);
	case HASH_TCP_IPV4:
		return ports && proto == 6 ? toeplitz_hash(nic->rss_key, tuple, 12) : 0;
	case HASH_BOTH:
		return toeplitz_hash(nic->rss_key, tuple, ports && proto == 6 ? 12 : 8);
	case HASH_SRC_PORT:
		return ports ? get_be16(l4) : 0;
	default: /* HASH_SRC_DST_PORT */
		return ports ? (uint32_t)(get_be16(l4) ^ get_be16(l4 + 2)) : 0;
	}
}

unsigned sim_rss_slice(struct sim_nic *nic, const uint8_t *fr, uint32_t len)
{
	uint32_t h = frame_hash(nic, fr, len);
	uint8_t s = nic->bar[SIM_RSS_TABLE_OFF + h % nic->rss_table_size];
	return s < nic->slices ? s : 0;
}
