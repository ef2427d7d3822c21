#ifndef MYRIO_PORT_CAPTURE_H
#define MYRIO_PORT_CAPTURE_H

#include "myrio/port.h"

struct myrio_capture;
void myrio_capture_write(struct myrio_capture *c, struct myrio_pkt *const *pkts, uint16_t n);

#endif
