/* SPDX-License-Identifier: BSD-3-Clause */
/* Stores into and loads from BAR0. Every field the NIC shares is big-endian (spec §0); only
 * aligned 32- and 64-bit accesses are used (§10.1 rule 1).
 *
 * Barriers, as Linux's for the same jobs: x86 orders stores to write-back and uncached
 * memory already, and sfence drains write-combining buffers (BAR0 mapped WC); arm64 needs
 * dsb st (Linux's wmb) so that stores to DMA memory and to the device reach it in order,
 * and dmb oshld (dma_rmb) so that loads of what the device wrote come after the load of
 * the flag that announced it. Other architectures are refused here rather than run with
 * barriers that order nothing against the device. */
#ifndef MYRIO_MMIO_H
#define MYRIO_MMIO_H

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
#error "libmyrio: the device barriers (src/bus/mmio.h) exist for x86 and arm64 only"
#endif

#include <stdint.h>
#include <string.h>

#include "util/byteorder.h"

/* Copies len bytes (a multiple of 8) built in host memory into BAR0 with 64-bit stores,
 * ascending (descriptors, firmware chunks). memcpy keeps the load of the built struct well
 * defined (no type punning). */
static inline void sram_copy64(volatile uint8_t *bar, uint32_t off, const void *src, uint32_t len)
{
#pragma GCC unroll 4
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t v;
		__builtin_memcpy(&v, (const uint8_t *)src + i, 8);
		*(volatile uint64_t *)(bar + off + i) = v;
	}
}

/* Orders prior stores to BAR0 and DMA memory before later ones (the commit-word fences of
 * §4.3 and §5.7, the fence after each 256-byte firmware chunk). */
static inline void mmio_wmb(void)
{
#if defined(__aarch64__)
	__asm__ volatile("dsb st" ::: "memory");
#else
	__asm__ volatile("sfence" ::: "memory"); /* BAR0 may be mapped write-combining */
#endif
}

/* Orders loads of DMA memory after the load that announced them (a valid flag, a length). */
static inline void dma_rmb(void)
{
#if defined(__aarch64__)
	__asm__ volatile("dmb oshld" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* x86 does not reorder loads with loads */
#endif
}

static inline void mmio_write32(volatile uint8_t *bar, uint32_t off, uint32_t host_val)
{
	*(volatile uint32_t *)(bar + off) = be32(host_val);
}

static inline void mmio_write32_raw(volatile uint8_t *bar, uint32_t off, uint32_t be_val)
{
	*(volatile uint32_t *)(bar + off) = be_val;
}

static inline uint32_t mmio_read32(volatile uint8_t *bar, uint32_t off)
{
	return be32(*(volatile uint32_t *)(bar + off));
}

#endif
