/* The Internet checksum (RFC 1071), shared by the stack, the driver's offload set-up and the
 * device model's receive sum (spec §4.6) and transmit offload (§5.5). */
#ifndef MYRIO_CSUM_H
#define MYRIO_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Adds the bytes of buf, read as big-endian 16-bit words, to sum (not folded). An odd
 * length pads with a zero byte. */
uint64_t csum_add(uint64_t sum, const void *buf, size_t len);

/* Folds to 16 bits; the ones'-complement sum, not inverted. */
static inline uint16_t csum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

/* The value that goes into a header's checksum field. */
static inline uint16_t csum_finish(uint64_t sum)
{
	return (uint16_t)~csum_fold(sum);
}

/* Ones'-complement 16-bit add and subtract, for adjusting sums (VLAN tags, RFC 1624). */
static inline uint16_t csum16_add(uint16_t a, uint16_t b)
{
	uint32_t s = (uint32_t)a + b;
	return (uint16_t)((s & 0xffffu) + (s >> 16));
}
static inline uint16_t csum16_sub(uint16_t a, uint16_t b)
{
	return csum16_add(a, (uint16_t)~b);
}

#endif
