/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP_STREAM, TCP_SENDFILE and UDP_STREAM: A sends as fast as it may, B receives.
 *
 * TCP_STREAM sends pool buffers as they are (netperf also sends whatever its buffers
 * hold); TCP_SENDFILE reads a file with one preadv(2) per burst straight into the packet
 * buffers the NIC will read, so the payload is copied once, by the kernel, from the page
 * cache into DMA memory. With --verify the receiver compares every byte with the file
 * (or, for UDP, the sequence of datagrams). With --copy, TCP_STREAM copies as a socket
 * program does: myrio_tcp_write from an application buffer, myrio_tcp_read into one; the
 * stream's byte at offset k is k % COPY_PERIOD, which --verify checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "perf.h"

#define BURST 32
#define COPY_PERIOD 251u /* prime: a shifted copy never matches by accident */

struct stream {
	uint32_t seg;	    /* payload bytes per packet */
	int fd;		    /* TCP_SENDFILE source */
	const uint8_t *map; /* its contents, for --verify */
	uint64_t file_len, file_off, recv_off;
	uint64_t udp_seq, udp_next;
	bool stop_sending;
};

static int tcp_send_work(struct perf *pf)
{
	struct stream *st = pf->test;
	struct myrio_tcp_conn *c = pf->a.conn;
	if (st->stop_sending)
		return 0;
	uint32_t room = myrio_tcp_send_space(c);
	unsigned n = room < BURST ? room : BURST;
	struct myrio_pkt *p[BURST];
	unsigned got = 0;
	for (; got < n; got++)
		if (!(p[got] = myrio_stack_pkt_alloc(pf->a.stack)))
			break;
	if (!got)
		return 0;
	for (unsigned i = 0; i < got; i++)
		p[i]->len = st->seg;
	if (st->fd >= 0) { /* TCP_SENDFILE: one system call fills the burst */
		struct iovec iov[BURST];
		unsigned k = 0;
		uint64_t off = st->file_off;
		for (; k < got && off < st->file_len; k++) {
			uint64_t left = st->file_len - off;
			p[k]->len = left < st->seg ? (uint32_t)left : st->seg;
			iov[k] = (struct iovec){myrio_pkt_data(p[k]), p[k]->len};
			off += p[k]->len;
		}
		ssize_t r = preadv(st->fd, iov, (int)k, (off_t)st->file_off);
		if (r != (ssize_t)(off - st->file_off)) {
			fprintf(stderr, "myrio-perf: short read from the file\n");
			st->stop_sending = true;
			k = 0;
		}
		for (unsigned i = k; i < got; i++)
			myrio_pkt_free(p[i]);
		got = k;
	}
	unsigned sent = 0;
	for (; sent < got; sent++) {
		uint32_t len = p[sent]->len; /* send puts the headers in front */
		if (myrio_tcp_send(c, p[sent]) < 0)
			break;
		pf->r.bytes_sent += len;
	}
	for (unsigned i = sent; i < got; i++) /* refused: read those bytes again next time */
		myrio_pkt_free(p[i]);
	if (st->fd >= 0)
		st->file_off = pf->r.bytes_sent % st->file_len;
	pf->r.msgs_sent += sent;
	return (int)sent;
}

static uint8_t copy_src[COPY_MAX + COPY_PERIOD], copy_dst[COPY_MAX];

/* --copy: one write of a message, from the application's buffer. */
static int tcp_copy_send_work(struct perf *pf)
{
	struct stream *st = pf->test;
	if (st->stop_sending)
		return 0;
	uint64_t off = pf->r.bytes_sent % COPY_PERIOD;
	ssize_t w = myrio_tcp_write(pf->a.conn, copy_src + off, st->seg);
	if (w <= 0)
		return 0;
	pf->r.bytes_sent += (uint64_t)w;
	pf->r.msgs_sent++;
	return 1;
}

/* --copy: reads into the application's buffer while there is data. */
static int tcp_copy_recv_work(struct perf *pf)
{
	struct stream *st = pf->test;
	int n = 0;
	ssize_t r;
	while ((r = myrio_tcp_read(pf->b.conn, copy_dst, sizeof(copy_dst))) > 0) {
		if (pf->o.verify)
			for (ssize_t i = 0; i < r; i++)
				if (copy_dst[i] != (st->recv_off + (uint64_t)i) % COPY_PERIOD)
					pf->r.bad++;
		st->recv_off += (uint64_t)r;
		pf->r.bytes_recv += (uint64_t)r;
		pf->r.msgs_recv++;
		n++;
	}
	return n;
}

static int tcp_recv_work(struct perf *pf)
{
	struct stream *st = pf->test;
	struct myrio_tcp_conn *c = pf->b.conn;
	struct myrio_pkt *p;
	int n = 0;
	while ((p = myrio_tcp_recv(c)) != NULL) {
		if (st->map) { /* the stream is the file over and over */
			const uint8_t *d = myrio_pkt_data(p);
			for (uint32_t done = 0; done < p->len;) {
				uint64_t off = st->recv_off % st->file_len;
				uint32_t k = p->len - done;
				if (k > st->file_len - off)
					k = (uint32_t)(st->file_len - off);
				if (memcmp(d + done, st->map + off, k))
					pf->r.bad += k;
				done += k;
				st->recv_off += k;
			}
		}
		pf->r.bytes_recv += p->len;
		pf->r.msgs_recv++;
		myrio_tcp_release(c, p);
		n++;
	}
	return n;
}

static int udp_send_work(struct perf *pf)
{
	struct stream *st = pf->test;
	struct myrio_pkt *p[BURST];
	unsigned got = 0;
	for (; got < BURST; got++)
		if (!(p[got] = myrio_stack_pkt_alloc(pf->a.stack)))
			break;
	for (unsigned i = 0; i < got; i++) {
		p[i]->len = st->seg;
		memcpy(myrio_pkt_data(p[i]), &st->udp_seq, sizeof(st->udp_seq));
		int rc = myrio_udp_sendto(pf->a.udp, p[i], PERF_IP_B, PERF_PORT);
		if (rc == -EAGAIN) { /* the send ring and batch are full: the rest after a poll */
			myrio_pkt_free_bulk(p + i, got - i);
			break;
		}
		if (rc < 0) {
			myrio_pkt_free(p[i]);
			pf->r.send_errors++;
			continue;
		}
		st->udp_seq++;
		pf->r.msgs_sent++;
		pf->r.bytes_sent += st->seg;
	}
	return (int)got;
}

static int udp_recv_work(struct perf *pf)
{
	struct stream *st = pf->test;
	struct myrio_pkt *p;
	int n = 0;
	while ((p = myrio_udp_recv(pf->b.udp, NULL, NULL)) != NULL) {
		uint64_t seq;
		if (p->len == st->seg) {
			memcpy(&seq, myrio_pkt_data(p), sizeof(seq));
			if (seq < st->udp_next) /* duplicated or reordered */
				pf->r.bad++;
			else
				st->udp_next = seq + 1;
			pf->r.msgs_recv++;
			pf->r.bytes_recv += p->len;
		}
		myrio_pkt_free(p);
		n++;
	}
	return n;
}

/* The TCP_SENDFILE source: the given file, or 8 MiB of random bytes in a temporary one. */
static int open_file(struct perf *pf, struct stream *st)
{
	if (pf->o.file) {
		st->fd = open(pf->o.file, O_RDONLY);
	} else {
		char path[] = "/tmp/myrio-perf.XXXXXX";
		st->fd = mkstemp(path);
		if (st->fd >= 0) {
			unlink(path);
			uint64_t x = 0x9E3779B97F4A7C15ull;
			static uint64_t buf[8192];
			for (int k = 0; k < 128; k++) { /* 128 x 64 KiB */
				for (unsigned i = 0; i < 8192; i++) {
					x ^= x << 13, x ^= x >> 7, x ^= x << 17;
					buf[i] = x;
				}
				if (write(st->fd, buf, sizeof(buf)) != sizeof(buf))
					return -EIO;
			}
		}
	}
	struct stat sb;
	if (st->fd < 0 || fstat(st->fd, &sb) < 0 || sb.st_size == 0) {
		fprintf(stderr, "myrio-perf: cannot read the file %s: %s\n",
			pf->o.file ? pf->o.file : "(temporary)", strerror(errno));
		return -EIO;
	}
	st->file_len = (uint64_t)sb.st_size;
	if (pf->o.verify) {
		void *m = mmap(NULL, st->file_len, PROT_READ, MAP_PRIVATE, st->fd, 0);
		if (m == MAP_FAILED)
			return -errno;
		st->map = m;
	}
	return 0;
}

static bool all_acked(struct perf *pf)
{
	return myrio_tcp_unacked(pf->a.conn) == 0;
}

int perf_stream(struct perf *pf)
{
	static struct stream st;
	memset(&st, 0, sizeof(st));
	st.fd = -1;
	pf->test = &st;
	int rc;
	if (pf->o.test == UDP_STREAM) {
		uint32_t max = pf->o.mtu - 28;
		st.seg = pf->o.msg_size ? pf->o.msg_size : max;
		if (st.seg > max || st.seg < 8) {
			fprintf(stderr, "myrio-perf: UDP message size must be 8..%u\n", max);
			return -EINVAL;
		}
		if ((rc = myrio_udp_open(pf->a.stack, 0, NULL, &pf->a.udp)) < 0 ||
		    (rc = myrio_udp_open(pf->b.stack, PERF_PORT, NULL, &pf->b.udp)) < 0)
			return rc;
		/* Resolve B's MAC before timing (the first datagram waits in the ARP queue). */
		uint8_t mac[6];
		struct myrio_pkt *p = myrio_stack_pkt_alloc(pf->a.stack);
		if (p) {
			p->len = 8;
			memset(myrio_pkt_data(p), 0xff, 8);
			if (myrio_udp_sendto(pf->a.udp, p, PERF_IP_B, PERF_PORT) < 0)
				myrio_pkt_free(p); /* refused: still ours */
		}
		for (uint64_t end = perf_now_ns() + 2000000000ull;
		     myrio_arp_lookup(pf->a.stack, PERF_IP_B, mac) < 0 && perf_now_ns() < end;)
			perf_settle(pf, NULL, 0.001);
		perf_settle(pf, NULL, 0.01);
		pf->work_a = udp_send_work;
		pf->work_b = udp_recv_work;
		pf->r.snd_sock = pf->r.rcv_sock = 0;
	} else {
		if ((rc = perf_tcp_connect(pf)) < 0)
			return rc;
		uint32_t mss = myrio_tcp_mss(pf->a.conn);
		st.seg = pf->o.msg_size && pf->o.msg_size < mss ? pf->o.msg_size : mss;
		if (pf->o.test == TCP_SENDFILE && (rc = open_file(pf, &st)) < 0)
			return rc;
		struct myrio_tcp_conn_stats cs;
		myrio_tcp_conn_stats(pf->b.conn, &cs);
		pf->r.rcv_sock = cs.rcv_wnd;
		pf->r.snd_sock = myrio_tcp_send_space(pf->a.conn) * mss;
		pf->work_a = tcp_send_work;
		pf->work_b = tcp_recv_work;
		if (pf->o.copy) {
			st.seg = pf->o.msg_size ? pf->o.msg_size : COPY_MAX;
			for (uint32_t i = 0; i < sizeof(copy_src); i++)
				copy_src[i] = (uint8_t)(i % COPY_PERIOD);
			pf->work_a = tcp_copy_send_work;
			pf->work_b = tcp_copy_recv_work;
		}
	}
	pf->r.bytes_sent = pf->r.bytes_recv = pf->r.msgs_sent = pf->r.msgs_recv = 0;
	st.udp_next = 0;
	rc = perf_run(pf, pf->o.seconds, NULL, perf_test_name(pf->o.test));
	/* What was received within the time counts; drain the rest so the close is clean. */
	st.stop_sending = true;
	pf->work_a = NULL;
	uint64_t recv = pf->r.bytes_recv, msgs = pf->r.msgs_recv;
	if (pf->o.test != UDP_STREAM)
		perf_settle(pf, all_acked, 10.0); /* ends as soon as all is acknowledged */
	else
		perf_settle(pf, NULL, 0.01);
	uint64_t late = pf->r.bytes_recv - recv;
	pf->r.bytes_recv = recv;
	pf->r.msgs_recv = msgs;
	if (pf->o.test != UDP_STREAM) {
		struct myrio_tcp_conn_stats cs;
		myrio_tcp_conn_stats(pf->a.conn, &cs);
		pf->r.retransmits = cs.retransmits;
		if (recv + late != pf->r.bytes_sent) {
			fprintf(stderr, "myrio-perf: sent %llu bytes but %llu arrived\n",
				(unsigned long long)pf->r.bytes_sent,
				(unsigned long long)(recv + late));
			rc = -EIO;
		}
	}
	if (st.map)
		munmap((void *)st.map, st.file_len);
	if (st.fd >= 0)
		close(st.fd);
	return rc;
}
