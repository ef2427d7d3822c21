/* SPDX-License-Identifier: BSD-3-Clause */
/* Ephemeral ports for active opens, RFC 6056 §3.3.4 (algorithm 4, double-hash port
 * selection): the search for a free port starts at a keyed hash of the destination plus
 * a counter picked by a second hash, so ports follow each other per destination (few
 * collisions with earlier incarnations of a tuple) while an observer of the ports we use
 * towards one host learns nothing about those towards another. */
#include "tcp_lite/stack.h"

/* A keyed 64-bit mix of the connection's remote end (the local address is the stack's). */
static uint64_t eph_hash(uint64_t key, uint32_t lip, uint32_t rip, uint16_t rport)
{
	uint64_t k = ((uint64_t)rip << 32 | lip) ^ key;
	k = (k ^ (k >> 33)) * 0xFF51AFD7ED558CCDULL;
	k ^= (uint64_t)rport + (key >> 17);
	k = (k ^ (k >> 33)) * 0xC4CEB9FE1A85EC53ULL;
	return k ^ (k >> 33);
}

uint16_t tcp_ephemeral_port(struct myrio_stack *s, uint32_t rip, uint16_t rport)
{
	const uint32_t offset = (uint32_t)eph_hash(s->port_key[0], s->conf.ip, rip, rport);
	uint16_t *counter =
	    &s->eph_table[eph_hash(s->port_key[1], s->conf.ip, rip, rport) % EPH_TABLE];
	/* RFC 6056 §3.3.4 step by step: each candidate tried moves the counter on. */
	return (uint16_t)(EPH_MIN + (offset + (*counter)++) % EPH_COUNT);
}
