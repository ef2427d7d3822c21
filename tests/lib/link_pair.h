/* SPDX-License-Identifier: BSD-3-Clause */
/* Two ports joined by a link: what the two-stack harness (stack_pair.h) and the tests of
 * bare ports stand on, the link named by a string:
 *   "pair:NAME"          the in-process pair link (src/port/pair_port.c); opts_a and
 *                        opts_b are each end's "?key=value&..." options
 *   "sim:SPEC"           two NICs of a stepped model world, cabled; SPEC is the model's
 *                        options ("stepped" is added), empty for its defaults
 *   "simd:A+B[@SOCKET]"  NICs A and B of a running model daemon, cabled by it
 * A stepped world only moves when stepped: link_pair_step. */
#ifndef MYRIO_TEST_LINK_PAIR_H
#define MYRIO_TEST_LINK_PAIR_H

#include "myrio/port.h"
#include "myrio/sim.h"

struct link_pair {
	struct myrio_port *a, *b;
	struct myrio_sim *sim; /* a sim: link's world, else NULL */
};

/* pc (may be NULL) configures both ports of a sim: or simd: link. 0 or a negative errno;
 * on failure whatever was opened is closed. */
int link_pair_open(struct link_pair *l, const char *link, const char *opts_a, const char *opts_b,
		   const struct myrio_port_conf *pc);
/* n iterations of a stepped world (1 us of model time each); nothing on other links. */
void link_pair_step(struct link_pair *l, unsigned n);
/* Closes both ports, then the world. */
void link_pair_close(struct link_pair *l);

#endif
