/* Stores into and loads from BAR0. Every field the NIC shares is big-endian (spec §0); only
 * aligned 32- and 64-bit accesses are used (§10.1 rule 1). */
#ifndef MYRIO_MMIO_H
#define MYRIO_MMIO_H

#include <stdint.h>
#include <string.h>

/* Orders prior stores to BAR0 and DMA memory before later ones (the commit-word fences of
 * §4.3 and §5.7). On x86 stores are already ordered; this keeps the compiler honest. */
static inline void mmio_wmb(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("sfence" ::: "memory"); /* BAR0 may be mapped write-combining */
#endif
}

/* Orders loads of DMA memory after the load that announced them (a valid flag, a length). */
static inline void dma_rmb(void)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline void mmio_write32(volatile uint8_t *bar, uint32_t off, uint32_t host_val)
{
	*(volatile uint32_t *)(bar + off) = __builtin_bswap32(host_val);
}

static inline void mmio_write32_raw(volatile uint8_t *bar, uint32_t off, uint32_t be_val)
{
	*(volatile uint32_t *)(bar + off) = be_val;
}

static inline uint32_t mmio_read32(volatile uint8_t *bar, uint32_t off)
{
	return __builtin_bswap32(*(volatile uint32_t *)(bar + off));
}

/* Copies 8-byte aligned words into BAR0 with 64-bit stores, in ascending order. */
static inline void mmio_copy64(volatile uint8_t *bar, uint32_t off, const void *src, uint32_t len)
{
	const uint64_t *s = (const uint64_t *)src;
	volatile uint64_t *d = (volatile uint64_t *)(bar + off);
	for (uint32_t i = 0; i < len / 8; i++)
		d[i] = s[i];
}

#endif
