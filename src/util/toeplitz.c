/* SPDX-License-Identifier: BSD-3-Clause */
#include "util/toeplitz.h"

const uint8_t toeplitz_default_key[TOEPLITZ_KEY_LEN] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint32_t toeplitz_hash(const uint8_t key[TOEPLITZ_KEY_LEN], const uint8_t *in, unsigned n)
{
	/* window: the 32 key bits aligned with the current input bit, then the next 8 */
	uint32_t window =
	    (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
	uint32_t h = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t next = key[i + 4];
		for (int b = 7; b >= 0; b--) {
			if (in[i] >> b & 1)
				h ^= window;
			window = window << 1 | (uint32_t)(next >> b & 1);
		}
	}
	return h;
}

void toeplitz_table_init(struct toeplitz_table *tt, const uint8_t key[TOEPLITZ_KEY_LEN])
{
	for (unsigned i = 0; i < TOEPLITZ_TABLE_BYTES; i++) {
		uint32_t bit[8]; /* the key window under bit b (7 = most significant) of byte i */
		for (int b = 7; b >= 0; b--) {
			unsigned pos =
			    i * 8 + (unsigned)(7 - b); /* key bit where the window starts */
			uint32_t w = 0;
			for (unsigned k = 0; k < 32; k++) {
				unsigned kb = pos + k;
				w = w << 1 | (uint32_t)(key[kb / 8] >> (7 - kb % 8) & 1);
			}
			bit[b] = w;
		}
		for (unsigned v = 0; v < 256; v++) {
			uint32_t h = 0;
			for (int b = 0; b < 8; b++)
				if (v >> b & 1)
					h ^= bit[b];
			tt->t[i][v] = h;
		}
	}
}
