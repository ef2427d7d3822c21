/* SPDX-License-Identifier: BSD-3-Clause */
/* The Toeplitz hash of Microsoft's RSS: the key slides over the input one bit at a time,
 * and for every 1 bit of the input the 32 key bits under it are XORed into the result.
 * Shared by the NIC model (it hashes as the firmware does, §7.3) and the driver (it
 * predicts where a flow lands, and hashes what the NIC did not deliver). */
#ifndef MYRIO_UTIL_TOEPLITZ_H
#define MYRIO_UTIL_TOEPLITZ_H

#include <stdint.h>

#define TOEPLITZ_KEY_LEN 40u

/* The key of Microsoft's RSS verification suite, which the model starts with and the
 * driver writes unless told otherwise. */
extern const uint8_t toeplitz_default_key[TOEPLITZ_KEY_LEN];

/* n <= TOEPLITZ_KEY_LEN - 4 bytes of input. */
uint32_t toeplitz_hash(const uint8_t key[TOEPLITZ_KEY_LEN], const uint8_t *in, unsigned n);

/* The same hash a byte at a time: for each input position and byte value, the XOR of the
 * key windows its 1 bits select. 12 input bytes (an IPv4 4-tuple). */
#define TOEPLITZ_TABLE_BYTES 12u
struct toeplitz_table {
	uint32_t t[TOEPLITZ_TABLE_BYTES][256];
};
void toeplitz_table_init(struct toeplitz_table *tt, const uint8_t key[TOEPLITZ_KEY_LEN]);
static inline uint32_t toeplitz_table_hash(const struct toeplitz_table *tt, const uint8_t *in,
					   unsigned n)
{
	uint32_t h = 0;
	/* n is a constant where it is inlined (rss_hash.h): 3 instructions a byte, no loop */
#pragma GCC unroll 12
	for (unsigned i = 0; i < n; i++)
		h ^= tt->t[i][in[i]];
	return h;
}

#endif
