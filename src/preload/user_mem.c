/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a program's buffers may be read or written, so that a bad pointer gives the
 * kernel's EFAULT instead of a crash in the copy. A range not known is probed with
 * process_vm_readv (and process_vm_writev of the same bytes, for a buffer to receive into)
 * on this process: one system call per 64 pages, which fails where the copy would fault.
 * A range found good is remembered per thread, widened to whole pages (a page is mapped and
 * protected whole): programs send from and receive into the same few buffers, and pass
 * lengths and addresses from the same stack page, so the common call costs a few compares,
 * the newest range first. munmap, mprotect and mremap
 * forget every range (a generation count), so a buffer unmapped since is probed again. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload.h"

#define PROBE_PAGES 64
#define KNOWN_RANGES 8
#define PAGE_SIZE_MIN 4096 /* probing every 4 KiB touches each page whatever its size */

uint64_t user_mem_generation;
__thread struct user_range user_mem_recent;

static __thread struct user_range known[KNOWN_RANGES];
static __thread unsigned known_next;

/* One byte per page of [lo, hi), read (and written back when writable is asked). */
static bool probe(uintptr_t lo, uintptr_t hi, bool writable)
{
	pid_t self = getpid();
	uintptr_t at = lo;
	while (at < hi) {
		struct iovec remote[PROBE_PAGES];
		uint8_t bytes[PROBE_PAGES];
		int k = 0;
		for (; k < PROBE_PAGES && at < hi; k++) {
			remote[k] = (struct iovec){(void *)at, 1};
			at = (at | (PAGE_SIZE_MIN - 1)) + 1;
		}
		struct iovec local = {bytes, (size_t)k};
		ssize_t got = process_vm_readv(self, &local, 1, remote, (unsigned long)k, 0);
		if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
			preload_log_once("process_vm_readv is not allowed: bad buffers are not "
					 "checked (a fault instead of EFAULT)");
			return true;
		}
		if (got != k)
			return false;
		if (writable &&
		    process_vm_writev(self, &local, 1, remote, (unsigned long)k, 0) != k)
			return false;
	}
	return true;
}

bool user_mem_check(const void *buf, size_t len, bool writable)
{
	if (!len)
		return true;
	uintptr_t lo = (uintptr_t)buf;
	if (!lo || len > UINTPTR_MAX - lo)
		return false;
	uintptr_t hi = lo + len;
	uint64_t gen = __atomic_load_n(&user_mem_generation, __ATOMIC_ACQUIRE);
	for (unsigned k = 1; k <= KNOWN_RANGES; k++) {
		const struct user_range *r = &known[(known_next - k) % KNOWN_RANGES];
		if (r->lo <= lo && hi <= r->hi && r->generation == gen &&
		    (r->writable || !writable)) {
			user_mem_recent = *r;
			return true;
		}
	}
	if (!probe(lo, hi, writable))
		return false;
	uintptr_t page_hi = hi > UINTPTR_MAX - (PAGE_SIZE_MIN - 1)
				? hi
				: (hi + PAGE_SIZE_MIN - 1) & ~(uintptr_t)(PAGE_SIZE_MIN - 1);
	struct user_range *r = &known[known_next++ % KNOWN_RANGES];
	*r = (struct user_range){lo & ~(uintptr_t)(PAGE_SIZE_MIN - 1), page_hi, gen, writable};
	user_mem_recent = *r;
	return true;
}

bool user_iov_ok(const struct iovec *iov, int n, bool writable)
{
	for (int i = 0; i < n; i++)
		if (!user_mem_ok(iov[i].iov_base, iov[i].iov_len, writable))
			return false;
	return true;
}

int user_addr_in(const void *addr, socklen_t len)
{
	if (len > sizeof(struct sockaddr_storage))
		return -EINVAL;
	return user_mem_ok(addr, len, false) ? 0 : -EFAULT;
}

int user_addr_out(void *addr, socklen_t *len)
{
	if (!user_mem_ok(len, sizeof *len, true))
		return -EFAULT;
	if ((int)*len < 0)
		return -EINVAL;
	size_t n = *len < sizeof(struct sockaddr_in) ? *len : sizeof(struct sockaddr_in);
	return user_mem_ok(addr, n, true) ? 0 : -EFAULT;
}

static void mappings_changed(void)
{
	__atomic_add_fetch(&user_mem_generation, 1, __ATOMIC_RELEASE);
}

/* The generation moves after the change: a range probed while it was under way and
 * remembered under the old generation is forgotten too. */
EXPORT int munmap(void *addr, size_t len)
{
	int rc = (int)syscall(SYS_munmap, addr, len);
	mappings_changed();
	return rc;
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	int rc = (int)syscall(SYS_mprotect, addr, len, prot);
	mappings_changed();
	return rc;
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	void *new_addr = (flags & MREMAP_FIXED) ? va_arg(ap, void *) : NULL;
	va_end(ap);
	void *rc = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	mappings_changed();
	return rc;
}
