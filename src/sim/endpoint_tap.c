/* SPDX-License-Identifier: BSD-3-Clause */
/* A model cable that ends in a TAP device: frames the driver sends enter the kernel's
 * stack on that interface, and what the kernel sends out of it reaches the driver.
 *
 * The device is created here (IFF_TAP | IFF_NO_PI, no virtio-net header, so the kernel
 * hands over complete frames with checksums filled in); bringing it up, addressing it or
 * moving it into a network namespace is left to the administrator (ip link / ip netns):
 * the open fd keeps working wherever the interface goes. The fd is non-blocking: a full
 * kernel queue drops the frame and counts it, the model never waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sim/endpoint.h"
#include "util/log.h"

/* The buffer takes the largest frame a TAP device can hand over, so that one longer than
 * SIM_EP_MAX_FRAME is seen whole and dropped, not truncated. */
#define TAP_BUF 65536

struct tap_endpoint {
	struct sim_endpoint ep; /* first */
	int fd;
	uint8_t buf[TAP_BUF];
};

static void tap_deliver(struct sim_endpoint *ep, const uint8_t *frame, uint32_t len)
{
	struct tap_endpoint *t = (struct tap_endpoint *)ep;
	if (len < SIM_EP_MIN_FRAME || len > SIM_EP_MAX_FRAME) {
		ep->drops++;
		return;
	}
	ssize_t n = write(t->fd, frame, len);
	if (n == (ssize_t)len)
		ep->tx_frames++;
	else
		ep->drops++; /* EAGAIN (queue full), EIO (interface down) */
}

static unsigned tap_poll(struct sim_endpoint *ep, sim_emit_fn emit, void *ctx, unsigned max)
{
	struct tap_endpoint *t = (struct tap_endpoint *)ep;
	unsigned done = 0;
	while (done < max) {
		ssize_t n = read(t->fd, t->buf, sizeof(t->buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break; /* EAGAIN: nothing queued */
		}
		if (n < SIM_EP_MIN_FRAME || n > SIM_EP_MAX_FRAME) {
			ep->drops++; /* runt or larger than any MTU the NIC takes */
			continue;
		}
		ep->rx_frames++;
		emit(ctx, t->buf, (uint32_t)n);
		done++;
	}
	return done;
}

static int tap_fd(struct sim_endpoint *ep)
{
	return ((struct tap_endpoint *)ep)->fd;
}

static void tap_destroy(struct sim_endpoint *ep)
{
	struct tap_endpoint *t = (struct tap_endpoint *)ep;
	if (t->fd >= 0)
		close(t->fd); /* a non-persistent TAP device disappears with its fd */
	free(t);
}

static const struct sim_endpoint_ops tap_ops = {
    .deliver = tap_deliver,
    .poll = tap_poll,
    .fd = tap_fd,
    .destroy = tap_destroy,
};

int sim_endpoint_tap_open(const char *ifname, struct sim_endpoint **out)
{
	struct ifreq ifr;
	*out = NULL;
	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ) {
		log_err("tap:%s: interface names are 1 to %d characters", ifname ? ifname : "",
			IFNAMSIZ - 1);
		return -EINVAL;
	}
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int rc = -errno;
		log_err("tap:%s: cannot open /dev/net/tun: %s (needs CAP_NET_ADMIN and the tun "
			"module: modprobe tun)",
			ifname, strerror(-rc));
		return rc;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
		int rc = -errno;
		log_err("tap:%s: cannot create the TAP device: %s%s", ifname, strerror(-rc),
			rc == -EPERM   ? " (run as root or with CAP_NET_ADMIN)"
			: rc == -EBUSY ? " (a device of that name is in use)"
				       : "");
		close(fd);
		return rc;
	}
	struct tap_endpoint *t = calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return -ENOMEM;
	}
	t->ep.ops = &tap_ops;
	snprintf(t->ep.name, sizeof(t->ep.name), "tap:%s", ifr.ifr_name);
	t->fd = fd;
	*out = &t->ep;
	return 0;
}
