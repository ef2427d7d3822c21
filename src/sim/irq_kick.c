/* SPDX-License-Identifier: BSD-3-Clause */
/* Raising a host's interrupt eventfd, and emptying it at reset, without ever blocking.
 *
 * A host in another process (the model daemon's client) holds the same open file
 * description as the model: it may clear O_NONBLOCK on it and fill its counter to
 * 2^64 - 2, after which write(2) of 1 waits for a reader for ever, and a drain by read(2)
 * waits for a write. An eventfd cannot be opened a second time, so the model cannot keep
 * a description of its own. It does not write it then: a world whose hosts are in other
 * processes signals through the kernel's AIO completion path (IOCB_FLAG_RESFD), which
 * adds to the counter whatever the description's flags, saturating instead of waiting.
 * The request is an empty read of /dev/null, done within io_submit. The client keeps a
 * plain eventfd; it only loses interrupts it made itself miss.
 *
 * An in-process world (its host is the model's own process) writes the eventfd: one
 * system call, as cheap as a signal gets. */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sim/nic.h"
#include "util/log.h"

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008 /* Linux 4.14 */
#endif

#define KICK_RING 64u /* completions reaped at once after each request */

/* The head of the AIO completion ring that io_setup maps at the context's address; the
 * kernel counts free slots from `head`, which its user advances (as libaio does). */
struct aio_ring_head {
	unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
};

struct sim_irq_kick {
	aio_context_t ctx;
	int null_fd;
	struct iocb cb;
	unsigned failures; /* io_submit refusals, for the log's rate limit */
};

int sim_world_shared_irqs(struct myrio_sim *w)
{
	if (w->kick)
		return 0;
	struct sim_irq_kick *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (k->null_fd < 0 || syscall(SYS_io_setup, KICK_RING, &k->ctx) != 0) {
		int rc = -errno;
		log_err("model: no kernel AIO context for signalling other processes' interrupt "
			"eventfds (%s): a client could stop the model thread",
			strerror(-rc));
		if (k->null_fd >= 0)
			close(k->null_fd);
		free(k);
		return rc;
	}
	k->cb.aio_lio_opcode = IOCB_CMD_PREAD;
	k->cb.aio_fildes = (uint32_t)k->null_fd;
	k->cb.aio_flags = IOCB_FLAG_RESFD;
	w->kick = k;
	return 0;
}

void sim_irq_kick_close(struct myrio_sim *w)
{
	struct sim_irq_kick *k = w->kick;
	if (!k)
		return;
	syscall(SYS_io_destroy, k->ctx);
	close(k->null_fd);
	free(k);
	w->kick = NULL;
}

void sim_irq_kick(struct myrio_sim *w, int fd)
{
	struct sim_irq_kick *k = w->kick;
	if (!k) {
		uint64_t one = 1;
		/* EAGAIN only when the counter saturates: the host is behind anyway */
		(void)!write(fd, &one, sizeof(one));
		return;
	}
	k->cb.aio_resfd = (uint32_t)fd;
	struct iocb *list[1] = {&k->cb};
	if (syscall(SYS_io_submit, k->ctx, 1, list) != 1 && (k->failures++ & 4095) == 0)
		log_warn("model: an interrupt could not be signalled: %s", strerror(errno));
	/* The empty read completed within io_submit: its completion is not wanted. */
	struct aio_ring_head *ring = (struct aio_ring_head *)(uintptr_t)k->ctx;
	__atomic_store_n(&ring->head, __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

/* Interrupts pending from before a reset are dropped. A read the host's flags cannot make
 * blocking; on a kernel without RWF_NOWAIT for eventfds (before 5.12) they stay, and the
 * host sees one spurious wake-up. */
void sim_irq_drain(int fd)
{
	uint64_t v;
	struct iovec iov = {&v, sizeof(v)};
	while (preadv2(fd, &iov, 1, -1, RWF_NOWAIT) == sizeof(v))
		;
}
