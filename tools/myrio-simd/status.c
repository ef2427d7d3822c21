/* SPDX-License-Identifier: BSD-3-Clause */
/* `myrio-simd status`: the daemon's report (NICs, cables, attachments, counters) and the
 * small client that asks a running daemon for it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sim/endpoint.h"
#include "sim/model.h"
#include "sim/nic.h" /* sim_nic_get_stats, link state: read-only peeks */
#include "util/log.h"

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len = (size_t)n < o->cap - o->len ? o->len + (size_t)n : o->cap - 1;
}

int simd_status_report(struct simd_daemon *d, char *buf, size_t cap)
{
	struct out o = {.buf = buf, .cap = cap};
	buf[0] = '\0';
	unsigned attached = 0;
	for (unsigned i = 0; i < d->nnics; i++)
		attached += d->nics[i].owner != NULL;
	put(&o, "myrio-simd pid %d, socket %s, model %s\n", (int)getpid(), d->conf.socket_path,
	    d->conf.model_spec[0] ? d->conf.model_spec : "defaults (link=10g)");
	put(&o,
	    "%u NICs, %u attached, %llu requests refused, %llu clients dropped for shrinking "
	    "their DMA memory\n\n",
	    d->nnics, attached, (unsigned long long)d->bad_requests,
	    (unsigned long long)d->shrink_drops);
	put(&o, "%-10s %-17s %-16s %-9s %-8s %s\n", "NIC", "MAC", "CABLE", "ATTACHED", "DMA",
	    "ATTACHES/REFUSED");
	for (unsigned i = 0; i < d->nnics; i++) {
		struct simd_nic *n = &d->nics[i];
		const uint8_t *m = n->conf->mac;
		char who[24] = "-", dma[40] = "-";
		if (n->owner) {
			snprintf(who, sizeof(who), "pid %d", (int)n->owner->pid);
			snprintf(dma, sizeof(dma), "%u/%lluM", n->owner->nregions,
				 (unsigned long long)(n->owner->mapped_bytes >> 20));
		}
		put(&o, "%-10s %02x:%02x:%02x:%02x:%02x:%02x %-16s %-9s %-8s %llu/%llu\n",
		    n->conf->name, m[0], m[1], m[2], m[3], m[4], m[5],
		    n->conf->cable[0] ? n->conf->cable : "(unplugged)", who, dma,
		    (unsigned long long)n->attaches, (unsigned long long)n->refusals);
	}
	put(&o, "\n%-10s %-5s %12s %14s %12s %14s %8s %8s\n", "NIC", "LINK", "RX FRAMES",
	    "RX BYTES", "TX FRAMES", "TX BYTES", "DROPS", "DMA ERR");
	for (unsigned i = 0; i < d->nnics; i++) {
		struct sim_nic_stats st;
		struct sim_counters ctr;
		sim_nic_get_stats(d->nics[i].nic, &st);
		sim_nic_get_counters(d->nics[i].nic, &ctr);
		/* Every drop the status block counts (§6.1) plus frames that found the NIC
		 * down or not yet started. */
		uint64_t drops =
		    (uint64_t)ctr.dropped_pause + ctr.dropped_unicast_filtered +
		    ctr.dropped_bad_crc32 + ctr.dropped_bad_phy + ctr.dropped_multicast_filtered +
		    ctr.dropped_link_overflow + ctr.dropped_link_error_or_filtered +
		    ctr.dropped_runt + ctr.dropped_overrun + ctr.dropped_no_small_buffer +
		    ctr.dropped_no_big_buffer + st.rx_down + st.tx_link_down + st.tx_invalid;
		put(&o, "%-10s %-5s %12llu %14llu %12llu %14llu %8llu %8llu\n",
		    d->nics[i].conf->name, d->nics[i].nic->link_state ? "up" : "down",
		    (unsigned long long)st.rx_frames, (unsigned long long)st.rx_bytes,
		    (unsigned long long)st.tx_frames, (unsigned long long)st.tx_bytes,
		    (unsigned long long)drops, (unsigned long long)st.dma_faults);
	}
	bool eps = false;
	for (unsigned i = 0; i < d->nnics; i++) {
		struct sim_endpoint *ep = d->nics[i].ep;
		if (!ep)
			continue;
		if (!eps)
			put(&o, "\n%-10s %-20s %12s %12s %10s\n", "NIC", "KERNEL END", "TO KERNEL",
			    "FROM KERNEL", "DROPS");
		eps = true;
		put(&o, "%-10s %-20s %12llu %12llu %10llu\n", d->nics[i].conf->name, ep->name,
		    (unsigned long long)ep->tx_frames, (unsigned long long)ep->rx_frames,
		    (unsigned long long)ep->drops);
	}
	return (int)o.len;
}

int simd_status_client(const char *socket_path)
{
	static struct {
		struct simd_hdr h;
		char text[SIMD_STATUS_MAX + 1];
	} rep;
	struct simd_hdr req;
	int sock, fds[SIMD_MAX_FDS];
	unsigned nfds;
	const char *path = simd_socket_path(socket_path);
	int rc = simd_connect(path, &sock);
	if (rc < 0)
		return rc;
	simd_hdr_init(&req, SIMD_STATUS, 1);
	rc = simd_send(sock, &req, sizeof(req), NULL, 0);
	ssize_t n = rc < 0 ? rc
			   : simd_recv_timeout(sock, &rep, sizeof(rep) - 1, fds, SIMD_MAX_FDS,
					       &nfds, SIMD_REPLY_TIMEOUT_MS);
	close(sock);
	if (n > 0)
		for (unsigned i = 0; i < nfds; i++)
			close(fds[i]);
	if (n < (ssize_t)sizeof(rep.h) || rep.h.magic != SIMD_MAGIC || rep.h.type != SIMD_STATUS ||
	    rep.h.status != 0) {
		log_err("no status from the model daemon at %s: %s", path,
			n < 0 ? strerror((int)-n) : "bad reply");
		return n < 0 ? (int)n : -EPROTO;
	}
	size_t len = (size_t)n - sizeof(rep.h);
	rep.text[len] = '\0';
	fputs(rep.text, stdout);
	return 0;
}
