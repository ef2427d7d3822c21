/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MYRIO_PORT_CAPTURE_H
#define MYRIO_PORT_CAPTURE_H

#include "myrio/port.h"

struct myrio_capture;
/* Received frames, as the NIC wrote them. */
void myrio_capture_rx(struct myrio_capture *c, struct myrio_pkt *const *pkts, uint16_t n);
/* myrio_tx_burst while capture is on: the frames the driver took, as the NIC sends them. */
uint16_t myrio_capture_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);

#endif
