/* SPDX-License-Identifier: BSD-3-Clause */
/* DMA regions: hugetlbfs files when hugepages are reserved, memfd otherwise. */
#include "mem/dma.h"

#include <errno.h>
#include <hugetlbfs.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/log.h"

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) / align * align;
}

static int map_fd(struct myrio_dma_region *r, int fd, size_t len, size_t page)
{
	if (ftruncate(fd, (off_t)len) != 0)
		return -errno;
	/* MAP_POPULATE on hugetlbfs fails up front when the pool is short, instead of a
	 * SIGBUS on first touch. */
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (va == MAP_FAILED)
		return -errno;
	r->va = va;
	r->len = len;
	r->page_size = page;
	r->fd = fd;
	return 0;
}

static int try_hugepages(struct myrio_dma_region *r, size_t len)
{
	long page = gethugepagesize();
	if (page <= 0 || hugetlbfs_find_path_for_size(page) == NULL)
		return -ENOENT;
	int fd = hugetlbfs_unlinked_fd_for_size(page);
	if (fd < 0)
		return -ENOENT;
	int rc = map_fd(r, fd, round_up(len, (size_t)page), (size_t)page);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	r->hugepages = true;
	return 0;
}

static void warn_no_hugepages_once(int why)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&warned))
		return;
	log_warn("no hugepages (%s): using ordinary shared memory, which works with the device "
		 "model but not with a real NIC. Reserve and mount hugepages: "
		 "echo 512 > /proc/sys/vm/nr_hugepages; mkdir -p /dev/hugepages; "
		 "mount -t hugetlbfs nodev /dev/hugepages (or: myrio-setup hugepages 512)",
		 why == -ENOENT ? "no hugetlbfs mount or none reserved" : strerror(-why));
}

int myrio_dma_alloc(struct myrio_dma_region *r, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (len == 0)
		return -EINVAL;
	int rc = try_hugepages(r, len);
	if (rc == 0)
		return 0;
	warn_no_hugepages_once(rc);
	/* Sealable, so the model daemon can forbid shrinking a region it has mapped. */
	int fd = memfd_create("myrio-dma", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		rc = -errno;
		log_err("cannot create DMA memory: memfd_create: %s", strerror(-rc));
		return rc;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	rc = map_fd(r, fd, round_up(len, page), page);
	if (rc < 0) {
		close(fd);
		log_err("cannot map %zu bytes of DMA memory: %s", len, strerror(-rc));
		return rc;
	}
	return 0;
}

void myrio_dma_free(struct myrio_dma_region *r)
{
	if (r->va)
		munmap(r->va, r->len);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}
