/* SPDX-License-Identifier: BSD-3-Clause */
/* A threaded model running the RSS firmware, and a port of nq queues on its NIC sim0. */
#ifndef MYRIO_TEST_QUEUES_PORT_H
#define MYRIO_TEST_QUEUES_PORT_H

#include <stdint.h>

#include "myrio/myrio.h"

/* 0, or a negative errno (nothing left open). */
int queues_port_open(struct myrio_sim **w, struct myrio_port **p, uint16_t nq);
void queues_port_close(struct myrio_sim *w, struct myrio_port *p);

#endif
