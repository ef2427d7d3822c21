/* SPDX-License-Identifier: BSD-3-Clause */
/* A readiness set: many TCP connections, listeners and UDP sockets of one stack, and one
 * call that returns those ready, as epoll or TCPDirect's zf_muxer do. Its cost is in the
 * objects that are ready: an object is listed when the stack raises an event for it (data
 * arrived, a send became possible, a connection was accepted or ended), and a wait looks
 * only at the listed ones, so 100,000 idle registered connections cost nothing.
 *
 *   myrio_ready_create(s, &set);
 *   myrio_ready_add_listener(set, l, MYRIO_READY_IN, l);
 *   for (;;) {
 *           myrio_stack_poll(s);
 *           int n = myrio_ready_wait(set, ev, 64);   (never blocks; see myrio_stack_fd
 *           for (int i = 0; i < n; i++) ...              in tcp_lite.h to sleep)
 *   }
 *
 * Level-triggered by default: an object is returned by every wait while it is ready (a
 * connection with unread data, a listener with a connection to accept); objects returned
 * go to the back, so a wait with a small max visits all in turn. With MYRIO_READY_ET it is
 * returned once per event (new data, room after a refused send), as EPOLLET: read until
 * empty, write until refused. Ask for MYRIO_READY_OUT only while there is something to
 * send: a connection with room to send is ready, and stays listed, for as long as that lasts.
 *
 * An object is in one set at most. Closing it (myrio_tcp_close, myrio_tcp_abort,
 * myrio_tcp_listener_close, myrio_udp_close) removes it. A listener in a set keeps the
 * connections it accepts for myrio_tcp_accept instead of announcing them with
 * MYRIO_TCP_EV_ACCEPTED. The stack's event callbacks keep running for those who set them,
 * for every connection, those still waiting for myrio_tcp_accept included (their user is
 * the listener's), and a wait for OUT that finds no room makes the stack raise
 * MYRIO_TCP_EV_WRITABLE when room comes, as a refused send does.
 * A set and its stack may be destroyed in either order: destroying the stack empties its
 * sets, which then return nothing and take nothing (-EINVAL) until myrio_ready_destroy.
 */
#ifndef MYRIO_READY_SET_H
#define MYRIO_READY_SET_H

#include <stdint.h>

#include "myrio/tcp_lite.h"

#ifdef __cplusplus
extern "C" {
#endif

struct myrio_ready_set;

/* Interest and readiness. IN: in-order data or the end of the stream to read (TCP), a
 * connection to accept (listener), a datagram or an error (UDP). OUT: a send would be
 * taken (TCP: room in the send queue and the transmit pool). HUP: the connection is over
 * (closed, reset, timed out; no more data will come); ERR: it ended with an error
 * (myrio_tcp_error). HUP and ERR are reported whatever the interest. */
#define MYRIO_READY_IN 0x1u
#define MYRIO_READY_OUT 0x2u
#define MYRIO_READY_HUP 0x4u
#define MYRIO_READY_ERR 0x8u
#define MYRIO_READY_ET 0x100u /* edge-triggered (interest only) */

struct myrio_ready_event {
	uint32_t events; /* MYRIO_READY_ bits */
	void *user;	 /* as given when the object was added */
};

int myrio_ready_create(struct myrio_stack *s, struct myrio_ready_set **out);
/* Removes every object from the set and frees it. */
void myrio_ready_destroy(struct myrio_ready_set *set);

/* -EBUSY when the object is in a set already, -EINVAL for another stack's object. */
int myrio_ready_add_tcp(struct myrio_ready_set *set, struct myrio_tcp_conn *c, uint32_t interest,
			void *user);
int myrio_ready_add_listener(struct myrio_ready_set *set, struct myrio_tcp_listener *l,
			     uint32_t interest, void *user);
int myrio_ready_add_udp(struct myrio_ready_set *set, struct myrio_udp_sock *u, uint32_t interest,
			void *user);
/* A new interest (e.g. OUT while data waits to be sent); -ENOENT when not in the set. */
int myrio_ready_mod_tcp(struct myrio_ready_set *set, struct myrio_tcp_conn *c, uint32_t interest);
int myrio_ready_mod_listener(struct myrio_ready_set *set, struct myrio_tcp_listener *l,
			     uint32_t interest);
int myrio_ready_mod_udp(struct myrio_ready_set *set, struct myrio_udp_sock *u, uint32_t interest);
int myrio_ready_del_tcp(struct myrio_ready_set *set, struct myrio_tcp_conn *c);
int myrio_ready_del_listener(struct myrio_ready_set *set, struct myrio_tcp_listener *l);
int myrio_ready_del_udp(struct myrio_ready_set *set, struct myrio_udp_sock *u);

/* Fills up to max events for the objects ready now and returns how many; 0 when none.
 * Never polls the stack and never blocks. */
int myrio_ready_wait(struct myrio_ready_set *set, struct myrio_ready_event *ev, unsigned max);

/* The next connection a listener in a readiness set accepted (ESTABLISHED, or already
 * ended: check myrio_tcp_error), or NULL. Its user starts as the listener's. */
struct myrio_tcp_conn *myrio_tcp_accept(struct myrio_tcp_listener *l);

#ifdef __cplusplus
}
#endif
#endif
