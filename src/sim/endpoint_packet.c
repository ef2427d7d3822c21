/* SPDX-License-Identifier: BSD-3-Clause */
/* A model cable that ends on an existing Linux interface (one end of a veth pair, a
 * bridge port...) through an AF_PACKET socket: what the driver sends leaves that
 * interface, what arrives at it reaches the driver.
 *
 * The socket is non-blocking, promiscuous, and ignores the frames it sends itself
 * (PACKET_IGNORE_OUTGOING, Linux 4.20). It asks for a virtio-net header on each frame
 * (PACKET_VNET_HDR) because veth and other virtual interfaces pass frames with the
 * checksum left for the hardware to fill: the header says where, and this endpoint
 * completes it, as the NIC on the other end of a real cable would have. Super-frames
 * (GSO) cannot cross a 10 GbE cable and are dropped and counted; turn segmentation off on
 * the interface (ip link set DEV gso_max_segs 1, or ethtool -K DEV tso off gso off).
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sim/endpoint.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define PKT_SLOT (sizeof(struct virtio_net_hdr) + SIM_EP_MAX_FRAME + 2)
#define PKT_BATCH 32 /* frames per recvmmsg: one system call for a whole burst */

struct packet_endpoint {
	struct sim_endpoint ep; /* first */
	int fd;
	int ifindex;
	bool vnet; /* frames carry a struct virtio_net_hdr in front */
	uint64_t csum_completed, gso_dropped;
	struct mmsghdr msgs[PKT_BATCH];
	struct iovec iovs[PKT_BATCH];
	uint8_t bufs[PKT_BATCH][PKT_SLOT];
};

static void packet_deliver(struct sim_endpoint *ep, const uint8_t *frame, uint32_t len)
{
	struct packet_endpoint *p = (struct packet_endpoint *)ep;
	struct virtio_net_hdr vh;
	struct iovec iov[2];
	int n = 0;
	if (len < SIM_EP_MIN_FRAME || len > SIM_EP_MAX_FRAME) {
		ep->drops++;
		return;
	}
	if (p->vnet) {
		memset(&vh, 0, sizeof(vh)); /* a complete frame: no offload requested */
		iov[n++] = (struct iovec){.iov_base = &vh, .iov_len = sizeof(vh)};
	}
	iov[n++] = (struct iovec){.iov_base = (void *)frame, .iov_len = len};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
	if (sendmsg(p->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		ep->tx_frames++;
	else
		ep->drops++; /* EAGAIN/ENOBUFS (queue full), ENETDOWN */
}

/* Fills in a checksum the sender left to the hardware (CHECKSUM_PARTIAL): the field at
 * start + offset already holds the pseudo-header sum. */
static bool complete_csum(uint8_t *frame, uint32_t len, const struct virtio_net_hdr *vh)
{
	uint32_t start = vh->csum_start, field = start + vh->csum_offset;
	if (start >= len || field + 2 > len)
		return false;
	uint16_t c = csum_finish(csum_add(0, frame + start, len - start));
	put_be16(frame + field, c);
	return true;
}

/* One received frame: checks, checksum completion, then up the cable. n is its length as
 * the kernel had it (MSG_TRUNC), header included. */
static bool take_frame(struct packet_endpoint *p, uint8_t *buf, size_t n, bool truncated,
		       sim_emit_fn emit, void *ctx)
{
	struct sim_endpoint *ep = &p->ep;
	size_t hl = p->vnet ? sizeof(struct virtio_net_hdr) : 0;
	if (truncated || n < hl + SIM_EP_MIN_FRAME || n > hl + SIM_EP_MAX_FRAME) {
		ep->drops++; /* runt, or longer than any frame the NIC takes */
		return false;
	}
	uint8_t *frame = buf + hl;
	uint32_t len = (uint32_t)(n - hl);
	if (p->vnet) {
		struct virtio_net_hdr vh;
		memcpy(&vh, buf, sizeof(vh));
		if (vh.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
			p->gso_dropped++;
			ep->drops++;
			return false;
		}
		if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
			if (!complete_csum(frame, len, &vh)) {
				ep->drops++;
				return false;
			}
			p->csum_completed++;
		}
	}
	ep->rx_frames++;
	emit(ctx, frame, len);
	return true;
}

static unsigned packet_poll(struct sim_endpoint *ep, sim_emit_fn emit, void *ctx, unsigned max)
{
	struct packet_endpoint *p = (struct packet_endpoint *)ep;
	unsigned done = 0, seen = 0; /* seen bounds the work, dropped frames included */
	while (seen < max) {
		unsigned want = max - seen < PKT_BATCH ? max - seen : PKT_BATCH;
		for (unsigned i = 0; i < want; i++) {
			p->iovs[i] = (struct iovec){.iov_base = p->bufs[i], .iov_len = PKT_SLOT};
			p->msgs[i].msg_hdr =
			    (struct msghdr){.msg_iov = &p->iovs[i], .msg_iovlen = 1};
		}
		int got = recvmmsg(p->fd, p->msgs, want, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			break; /* EAGAIN: nothing queued */
		}
		seen += (unsigned)got;
		for (int i = 0; i < got; i++) {
			const struct mmsghdr *m = &p->msgs[i];
			bool trunc = (m->msg_hdr.msg_flags & MSG_TRUNC) || m->msg_len > PKT_SLOT;
			done += take_frame(p, p->bufs[i], m->msg_len, trunc, emit, ctx);
		}
		if ((unsigned)got < want)
			break; /* the queue is empty */
	}
	return done;
}

static int packet_fd(struct sim_endpoint *ep)
{
	return ((struct packet_endpoint *)ep)->fd;
}

static void packet_destroy(struct sim_endpoint *ep)
{
	struct packet_endpoint *p = (struct packet_endpoint *)ep;
	if (p->gso_dropped)
		log_warn("%s: dropped %llu GSO super-frames: turn segmentation offload off on "
			 "the interface (ip link set DEV gso_max_segs 1)",
			 ep->name, (unsigned long long)p->gso_dropped);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

static const struct sim_endpoint_ops packet_ops = {
    .deliver = packet_deliver,
    .poll = packet_poll,
    .fd = packet_fd,
    .destroy = packet_destroy,
};

static int packet_setup(struct packet_endpoint *p, const char *ifname)
{
	int one = 1;
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET, .sll_protocol = be16(ETH_P_ALL), .sll_ifindex = p->ifindex};
	/* Before bind, so that no frame without a header is ever queued. */
	p->vnet = setsockopt(p->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) == 0;
	if (!p->vnet)
		log_warn("packet:%s: no PACKET_VNET_HDR (%s): frames with offloaded checksums "
			 "will reach the driver unfinished",
			 ifname, strerror(errno));
#ifdef PACKET_IGNORE_OUTGOING
	if (setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0)
		log_warn("packet:%s: no PACKET_IGNORE_OUTGOING (%s): the driver will also see "
			 "the frames it sends",
			 ifname, strerror(errno));
#endif
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		return -errno;
	struct packet_mreq mr = {.mr_ifindex = p->ifindex, .mr_type = PACKET_MR_PROMISC};
	if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) != 0)
		return -errno;
	return 0;
}

int sim_endpoint_packet_open(const char *ifname, struct sim_endpoint **out)
{
	*out = NULL;
	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE) {
		log_err("packet:%s: interface names are 1 to %d characters", ifname ? ifname : "",
			IF_NAMESIZE - 1);
		return -EINVAL;
	}
	unsigned idx = if_nametoindex(ifname);
	if (idx == 0) {
		int rc = -errno;
		log_err("packet:%s: no such interface (%s); create it first, e.g. "
			"ip link add %s type veth peer name %s-peer",
			ifname, strerror(-rc), ifname, ifname);
		return rc == 0 ? -ENODEV : rc;
	}
	struct packet_endpoint *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ep.ops = &packet_ops;
	snprintf(p->ep.name, sizeof(p->ep.name), "packet:%s", ifname);
	p->ifindex = (int)idx;
	/* Protocol 0: nothing is queued until bind has chosen the interface. */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int rc = p->fd < 0 ? -errno : packet_setup(p, ifname);
	if (rc < 0) {
		log_err("packet:%s: cannot open a raw socket on the interface: %s%s", ifname,
			strerror(-rc), rc == -EPERM ? " (run as root or with CAP_NET_RAW)" : "");
		packet_destroy(&p->ep);
		return rc;
	}
	*out = &p->ep;
	return 0;
}
