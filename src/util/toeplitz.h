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

#endif
