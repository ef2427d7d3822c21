/* SPDX-License-Identifier: BSD-3-Clause */
/* Robustness: a stack with a listener, an established connection and a UDP socket gets
 * hundreds of thousands of mutated frames (bytes flipped, lengths cut, header fields set
 * to extremes, checksums fixed up or not). It must not crash, leak or corrupt memory
 * (run under AddressSanitizer), must keep its pool whole, and must still accept a clean
 * connection afterwards. Seeded, so any failure repeats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void fix_checksums(uint8_t *f, uint32_t len)
{
	if (len < 34 || get_be16(f + 12) != 0x0800)
		return;
	uint8_t *ip = f + 14;
	unsigned ihl = (ip[0] & 15) * 4u;
	if (ihl < 20 || 14 + ihl > len)
		return;
	put_be16(ip + 10, 0);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, ihl)));
	uint16_t tot = get_be16(ip + 2);
	if (tot < ihl || 14u + tot > len)
		return;
	uint8_t *l4 = ip + ihl;
	uint16_t l4len = (uint16_t)(tot - ihl);
	unsigned field = ip[9] == 6 ? 16 : ip[9] == 17 ? 6 : ip[9] == 1 ? 2 : 0;
	if (!field || l4len < field + 2)
		return;
	put_be16(l4 + field, 0);
	uint16_t c = ip[9] == 1 ? csum_finish(csum_add(0, l4, l4len))
				: l4_csum(get_be32(ip + 12), get_be32(ip + 16), ip[9], l4, l4len);
	put_be16(l4 + field, c);
}

static void mutated_frames_do_no_harm(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "fz1", NULL, NULL, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 8, NULL, &l), 0);
	struct myrio_udp_sock *u;
	assert_int_equal(myrio_udp_open(r.s, 53, NULL, &u), 0);
	struct peer p;
	peer_connect(&r, &p, 40000, 80, 1000, true);
	assert_non_null(p.c);

	/* Seeds: a data segment with options of every kind, a SYN, UDP, ICMP echo, ARP. */
	uint8_t seeds[5][200];
	uint32_t slen[5];
	memset(seeds, 0, sizeof(seeds));
	uint8_t opts[40] = {1, 1, 8, 10, 0, 0, 0, 1,  0, 0, 0, 1,  1, 1, 5, 18,	  0, 0, 0, 5,
			    0, 0, 0, 9,	 0, 0, 0, 20, 0, 0, 0, 30, 2, 4, 5, 0xb4, 1, 3, 3, 9};
	struct tcpf t = {.sport = 40000,
			 .dport = 80,
			 .seq = p.snd_nxt,
			 .ack = p.rcv_nxt,
			 .flags = F_ACK | F_PSH,
			 .win = 500,
			 .opts = opts,
			 .optlen = 40,
			 .data = (const uint8_t *)"fuzzing!",
			 .len = 8};
	slen[0] = build_tcp(seeds[0], &t);
	t.flags = F_SYN;
	t.sport = 40001;
	t.len = 0;
	slen[1] = build_tcp(seeds[1], &t);
	uint8_t *f = seeds[2];
	slen[2] = build_eth(f, NULL, 0x0800);
	slen[2] += build_ip(f + 14, 17, PEER_IP, STACK_IP, 20);
	put_be16(f + 34, 1234);
	put_be16(f + 36, 53);
	put_be16(f + 38, 20);
	memset(f + 42, 'q', 12);
	put_be16(f + 40, l4_csum(PEER_IP, STACK_IP, 17, f + 34, 20));
	slen[2] += 20;
	f = seeds[3];
	slen[3] = build_eth(f, NULL, 0x0800);
	slen[3] += build_ip(f + 14, 1, PEER_IP, STACK_IP, 16);
	memset(f + 34, 0, 16);
	f[34] = 8;
	put_be16(f + 36, csum_finish(csum_add(0, f + 34, 16)));
	slen[3] += 16;
	f = seeds[4];
	slen[4] = build_eth(f, NULL, 0x0806);
	put_be16(f + 14, 1);
	put_be16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put_be16(f + 20, 1);
	memcpy(f + 22, peer_mac, 6);
	put_be32(f + 28, PEER_IP);
	memset(f + 32, 0, 6);
	put_be32(f + 38, STACK_IP);
	slen[4] = 60;
	for (int i = 0; i < 5; i++)
		memcpy(seeds[i], r.smac, 6);

	for (int i = 0; i < 200000; i++) {
		unsigned k = rnd() % 5;
		uint8_t g[256];
		uint32_t len = slen[k];
		memcpy(g, seeds[k], len);
		memset(g + len, (int)(rnd() & 0xff), sizeof(g) - len);
		unsigned nmut = 1 + rnd() % 4;
		for (unsigned m = 0; m < nmut; m++) {
			switch (rnd() % 6) {
			case 0: /* random byte anywhere after the MACs */
				g[12 + rnd() % (len - 12)] = (uint8_t)rnd();
				break;
			case 1: /* a header byte to an extreme */
				g[14 + rnd() % 60] = (rnd() & 1) ? 0xff : 0;
				break;
			case 2: /* cut the frame */
				len = 14 + rnd() % (len - 13);
				break;
			case 3: /* grow it */
				len += rnd() % 64;
				if (len > sizeof(g))
					len = sizeof(g);
				break;
			case 4: /* IP or TCP/UDP length fields */
				put_be16(g + ((rnd() & 1) ? 16 : 38), (uint16_t)rnd());
				break;
			case 5: /* TCP data offset / flags */
				g[46 + (rnd() & 1)] = (uint8_t)rnd();
				break;
			}
		}
		if (rnd() % 4)
			fix_checksums(g, len);
		raw_send(&r, g, len);
		if (i % 32 == 31) {
			raw_poll(&r);
			struct myrio_pkt *q;
			while ((q = myrio_tcp_recv(p.c)) != NULL)
				myrio_tcp_release(p.c, q);
			while ((q = myrio_udp_recv(u, NULL, NULL)) != NULL)
				myrio_pkt_free(q);
			if (myrio_tcp_state(p.c) == MYRIO_TCP_CLOSED) {
				myrio_tcp_close(p.c);
				p.c = NULL;
				peer_connect(&r, &p, (uint16_t)(41000 + i % 1000), 80, 1000, true);
				if (!p.c) /* the listener may be busy with fuzzed SYNs */
					break;
			}
			if (i % 4096 == 4095)
				raw_advance_ms(&r, 50);
		}
	}
	/* Let every half-open fuzz connection time out. */
	if (p.c)
		myrio_tcp_abort(p.c);
	for (int i = 0; i < 300; i++) {
		raw_advance_ms(&r, 1000);
		raw_poll(&r);
	}
	raw_poll(&r);
	assert_int_equal(myrio_pool_free_count(r.s->pool), r.s->pool->count);
	struct peer q;
	peer_connect(&r, &q, 50000, 80, 77, true);
	assert_non_null(q.c);
	assert_int_equal(myrio_tcp_state(q.c), MYRIO_TCP_ESTABLISHED);
	struct myrio_stack_stats st;
	myrio_stack_stats(r.s, &st);
	print_message("fuzz: %llu frames in, drops: ip csum %llu len %llu, tcp csum %llu off %llu, "
		      "udp csum %llu short %llu, challenge acks %llu\n",
		      (unsigned long long)st.rx_frames, (unsigned long long)st.drop_ip_hdr_csum,
		      (unsigned long long)st.drop_ip_len, (unsigned long long)st.drop_tcp_csum,
		      (unsigned long long)st.drop_tcp_bad_off, (unsigned long long)st.drop_udp_csum,
		      (unsigned long long)st.drop_udp_short,
		      (unsigned long long)st.tcp_challenge_acks);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mutated_frames_do_no_harm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
