/* SPDX-License-Identifier: BSD-3-Clause */
/* CUBIC congestion avoidance (RFC 9438): after a loss the window grows along a cubic
 * curve centred on the window where the loss happened, so it recovers quickly, probes
 * gently around the old maximum, and is independent of the round-trip time; in short
 * round trips it behaves like Reno (the "Reno-friendly" estimate, §4.3). */
#include "tcp_lite/stack.h"

#define CUBIC_BETA 0.7
#define CUBIC_C 0.4 /* segments / s^3 */

static double cube_root(double x)
{
	if (x <= 0)
		return 0;
	double r = x > 1 ? x / 3 : 1;
	for (int i = 0; i < 60; i++) {
		double n = (2 * r + x / (r * r)) / 3;
		if (n == r)
			break;
		r = n;
	}
	return r;
}

void cubic_on_loss(struct myrio_tcp_conn *c)
{
	double cwnd = (double)c->cwnd / c->mss; /* segments */
	/* Fast convergence (§4.7): give up bandwidth sooner when the maximum shrinks. */
	if (cwnd < c->cub_wmax)
		c->cub_wmax = cwnd * (1 + CUBIC_BETA) / 2;
	else
		c->cub_wmax = cwnd;
	double ss = cwnd * CUBIC_BETA * c->mss;
	c->ssthresh = ss > 2.0 * c->mss ? (uint32_t)ss : 2u * c->mss;
	c->cub_epoch_ms = 0;
}

void cubic_on_ack(struct myrio_tcp_conn *c, uint32_t acked)
{
	uint64_t now = c->s->now_ms;
	double mss = c->mss;
	double cwnd = c->cwnd / mss;
	if (c->cub_epoch_ms == 0) {
		c->cub_epoch_ms = now;
		c->cub_west = cwnd;
		if (cwnd < c->cub_wmax) {
			c->cub_k = cube_root((c->cub_wmax - cwnd) / CUBIC_C);
			c->cub_origin = c->cub_wmax;
		} else {
			c->cub_k = 0;
			c->cub_origin = cwnd;
		}
	}
	double t = (double)(now - c->cub_epoch_ms) / 1000.0 + c->srtt_us / 1e6;
	double d = t - c->cub_k;
	double target = c->cub_origin + CUBIC_C * d * d * d;
	if (target < cwnd)
		target = cwnd;
	if (target > 1.5 * cwnd)
		target = 1.5 * cwnd;
	/* Reno-friendly estimate: alpha = 3 (1 - beta) / (1 + beta) segments per RTT. */
	double alpha = 3 * (1 - CUBIC_BETA) / (1 + CUBIC_BETA);
	c->cub_west += alpha * (acked / mss) / cwnd;
	double next;
	if (c->cub_west > target)
		next = c->cub_west;
	else
		next = cwnd + (target - cwnd) * (acked / mss) / cwnd;
	double bytes = next * mss;
	if (bytes > (double)(1u << 30))
		bytes = (double)(1u << 30);
	if (bytes > c->cwnd)
		c->cwnd = (uint32_t)bytes;
}
