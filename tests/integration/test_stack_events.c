/* The event model between two stacks on the pair port: WRITABLE after a dry transmit
 * pool, the stack's clock and application timers, the readiness set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stack_harness.h"

#define PORT 7100

/* ---- lost WRITABLE: many writers share a small transmit pool ---- */

#define NW 100
#define MSG (20u * 1000u)

struct writer {
	struct myrio_tcp_conn *c; /* on a (sender) */
	uint32_t sent;
	struct myrio_tcp_conn *rc; /* on b (receiver) */
	uint32_t rcvd;
	bool bad;
	unsigned writable;
};

static struct writer writers[NW];

/* The sender writes only when told it may: on CONNECTED and on WRITABLE. */
static void write_some(struct writer *w)
{
	static uint8_t buf[MSG];
	while (w->sent < MSG) {
		uint32_t n = MSG - w->sent;
		for (uint32_t i = 0; i < n; i++)
			buf[i] = pattern(w->sent + i + (uint64_t)(w - writers) * MSG);
		ssize_t k = myrio_tcp_write(w->c, buf, n);
		assert_true(k >= 0);
		if (k == 0)
			return;
		w->sent += (uint32_t)k;
	}
}

static void read_all(struct writer *w)
{
	uint8_t buf[4096];
	ssize_t k;
	while ((k = myrio_tcp_read(w->rc, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < k; i++)
			if (buf[i] !=
			    pattern(w->rcvd + (uint64_t)i + (uint64_t)(w - writers) * MSG))
				w->bad = true;
		w->rcvd += (uint32_t)k;
	}
}

static void accepted(struct myrio_tcp_conn *c)
{
	uint32_t lip, rip;
	uint16_t lport, rport, wport;
	myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
	for (unsigned i = 0; i < NW; i++) {
		myrio_tcp_addr(writers[i].c, &lip, &wport, &rip, &lport);
		if (wport == rport) {
			writers[i].rc = c;
			myrio_tcp_set_user(c, &writers[i]);
			read_all(&writers[i]);
			return;
		}
	}
	fail_msg("accepted a connection from no writer");
}

static void writers_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct writer *w = myrio_tcp_user(c);
	(void)arg;
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED: /* the writer whose local port is its remote one */
		accepted(c);
		break;
	case MYRIO_TCP_EV_CONNECTED:
		write_some(w);
		break;
	case MYRIO_TCP_EV_WRITABLE:
		w->writable++;
		write_some(w);
		break;
	case MYRIO_TCP_EV_READABLE:
		if (w)
			read_all(w);
		break;
	default:
		break;
	}
}

static void small_pool(struct myrio_stack_conf *c)
{
	c->tx_pool_size = 128;
	c->max_tcp_conns = 2 * NW;
	c->tcp_event = writers_event;
	c->delayed_ack_ms = 0;
}

static void writable_after_dry_pool(void **state)
{
	(void)state;
	struct harness h;
	assert_int_equal(h_open(&h, "ev_pool", NULL, NULL, small_pool), 0);
	memset(writers, 0, sizeof(writers));
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, PORT, NW, NULL, &l), 0);
	for (unsigned i = 0; i < NW; i++)
		assert_int_equal(myrio_tcp_connect(h.a, IP_B, PORT, &writers[i], &writers[i].c), 0);
	for (unsigned r = 0; r < 200000; r++) {
		h_round(&h);
		unsigned done = 0;
		for (unsigned i = 0; i < NW; i++)
			done += writers[i].rcvd == MSG;
		if (done == NW)
			break;
	}
	unsigned stalled = 0, refused = 0;
	for (unsigned i = 0; i < NW; i++) {
		stalled += writers[i].rcvd != MSG;
		refused += writers[i].writable > 0;
		assert_false(writers[i].bad);
	}
	print_message("writers: %u of %u stalled, %u were refused and told WRITABLE\n", stalled, NW,
		      refused);
	assert_int_equal(stalled, 0);
	assert_true(refused > 0); /* the pool did run dry */
	for (unsigned i = 0; i < NW; i++) {
		myrio_tcp_close(writers[i].c);
		myrio_tcp_close(writers[i].rc);
	}
	h_rounds(&h, 60000); /* past TIME_WAIT: nothing left to reset at destroy */
	h_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(writable_after_dry_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
