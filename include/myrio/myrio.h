/* SPDX-License-Identifier: BSD-3-Clause */
/* libmyrio: kernel-bypass packet I/O for Myri-10G NICs and a zero-copy TCP/UDP/IPv4 stack. */
#ifndef MYRIO_H
#define MYRIO_H

#include "myrio/log.h"
#include "myrio/pkt.h"
#include "myrio/port.h"
#include "myrio/publish.h"
#include "myrio/ready_set.h"
#include "myrio/sim.h"
#include "myrio/tcp_lite.h"
#include "myrio/version.h"

#endif
