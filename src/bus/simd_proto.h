/* SPDX-License-Identifier: BSD-3-Clause */
/* The model daemon's wire protocol, shared by the daemon (tools/myrio-simd) and its client
 * bus (simd_bus.c).
 *
 * Transport: a UNIX SOCK_SEQPACKET socket, so every message arrives whole or not at all
 * and a hang-up (the application exiting or crashing) is seen at once. One request, one
 * reply, in order; the reply echoes type and seq. Both ends live on one machine, so the
 * integers are fixed-width in host byte order.
 *
 * File descriptors travel as SCM_RIGHTS: the reply to ATTACH carries the NIC's BAR0 memfd,
 * its interrupt eventfd, the model thread's wake page and the attach's own wake eventfd
 * (model.h: sim_world_sleeping, sim_nic_wake_fd); a DMA_MAP request carries the region's backing fd (mapped
 * from offset 0); the reply to IRQ_VECTORS carries an eventfd per MSI-X vector. Nothing either side receives is trusted: simd_check_request validates
 * every request before the daemon looks at it, and the client checks every reply.
 */
#ifndef MYRIO_BUS_SIMD_PROTO_H
#define MYRIO_BUS_SIMD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SIMD_DEFAULT_SOCKET "/run/myrio/simd.sock"
#define SIMD_SOCKET_ENV "MYRIO_SIMD_SOCKET" /* overrides the default path */
#define SIMD_MAGIC 0x4453594du		    /* "MYSD" */
#define SIMD_VERSION 2 /* 2: ATTACH passes the wake page and eventfd */
#define SIMD_NAME_MAX 32      /* NIC names, NUL included */
#define SIMD_MAX_FDS 16	      /* most fds any message carries: IRQ_VECTORS' */
#define SIMD_MAX_REGIONS 64   /* DMA regions per attachment */
#define SIMD_STATUS_MAX 16384 /* status report text */
/* IOVAs handed to the daemon stay below 2^48, like a real IOMMU's address width; the
 * client allocator starts at 4 GiB so that a stray 32-bit address is never mapped. */
#define SIMD_IOVA_BASE (1ull << 32)
#define SIMD_IOVA_LIMIT (1ull << 48)
#define SIMD_REPLY_TIMEOUT_MS 5000

enum simd_type {
	SIMD_ATTACH = 1,      /* attach_req -> attach_rep + the four fds above */
	SIMD_DMA_MAP = 2,     /* dma_req + fd {region} -> status */
	SIMD_DMA_UNMAP = 3,   /* dma_req -> status */
	SIMD_CFG_READ = 4,    /* cfg_req -> cfg_rep */
	SIMD_CFG_WRITE = 5,   /* cfg_req -> status */
	SIMD_RESET = 6,	      /* -> status: NIC back to power-on state, DMA regions kept */
	SIMD_STATUS = 7,      /* -> text (no attachment needed) */
	SIMD_IRQ_VECTORS = 8, /* vectors_req -> status + n eventfds, MSI-X vector i's the i-th */
	SIMD_TYPE_END
};

struct simd_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	int32_t status; /* replies: 0 or a negative errno; requests: 0 */
};

struct simd_attach_req {
	char nic[SIMD_NAME_MAX]; /* NUL-terminated */
};

struct simd_attach_rep {
	uint64_t bar0_len;
	uint8_t mac[6];
	uint8_t pad[2];
};

struct simd_vectors_req {
	uint32_t n; /* 1..SIMD_MAX_FDS */
	uint32_t pad;
};

struct simd_dma_req {
	uint64_t iova;
	uint64_t len;
};

struct simd_cfg_req {
	uint32_t off;
	uint32_t size; /* 1, 2 or 4 */
	uint32_t val;  /* CFG_WRITE */
	uint32_t pad;
};

struct simd_cfg_rep {
	uint32_t val;
	uint32_t pad;
};

/* Every fixed-size message. A STATUS reply is a header followed by text instead. */
struct simd_msg {
	struct simd_hdr h;
	union {
		struct simd_attach_req attach_req;
		struct simd_attach_rep attach_rep;
		struct simd_dma_req dma;
		struct simd_cfg_req cfg;
		struct simd_cfg_rep cfg_rep;
		struct simd_vectors_req vectors;
	} u;
};

/* Payload size and fd count each request type must have exactly. */
size_t simd_request_len(uint16_t type);
unsigned simd_request_fds(uint16_t type);
const char *simd_type_name(uint16_t type);

/* Validates a request as received (len bytes, nfds descriptors). Returns 0, or a negative
 * errno with *why set to a message for the error reply and the log. */
int simd_check_request(const void *buf, size_t len, unsigned nfds, const char **why);

/* Validates a DMA range: non-empty, page aligned, no wrap, below SIMD_IOVA_LIMIT. */
int simd_check_dma_range(uint64_t iova, uint64_t len, uint64_t page, const char **why);
bool simd_ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen);

/* Message I/O. simd_send never raises SIGPIPE. simd_recv returns the message length, 0 on
 * hang-up, or a negative errno; a truncated message or too many fds is -EMSGSIZE, and any
 * fds it received but cannot return are closed. Received fds are close-on-exec. */
int simd_send(int sock, const void *msg, size_t len, const int *fds, unsigned nfds);
ssize_t simd_recv(int sock, void *buf, size_t cap, int *fds, unsigned max_fds, unsigned *nfds);
/* simd_recv after waiting at most timeout_ms for the message (-ETIMEDOUT). */
ssize_t simd_recv_timeout(int sock, void *buf, size_t cap, int *fds, unsigned max_fds,
			  unsigned *nfds, int timeout_ms);

void simd_hdr_init(struct simd_hdr *h, uint16_t type, uint32_t seq);

/* Client-side IOVA allocator: hands out aligned, never-overlapping ranges. */
struct simd_iova_alloc {
	uint64_t next;
};
void simd_iova_init(struct simd_iova_alloc *a);
int simd_iova_get(struct simd_iova_alloc *a, uint64_t len, uint64_t align, uint64_t *iova);

/* Socket path: explicit, else $MYRIO_SIMD_SOCKET, else SIMD_DEFAULT_SOCKET. */
const char *simd_socket_path(const char *explicit_path);
/* Connects to the daemon's socket; clear messages when it is not running. */
int simd_connect(const char *path, int *sock);

#endif
