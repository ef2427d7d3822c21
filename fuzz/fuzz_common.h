/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the fuzz targets: a silent logger (the parsers log every rejection, which would
 * drown the fuzzer's output and slow it down) and small byte readers for the input. */
#ifndef MYRIO_FUZZ_COMMON_H
#define MYRIO_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "myrio/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_log_drop(enum myrio_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

/* $MYRIO_FUZZ_LOG=1 keeps the messages (when reproducing a crash). */
static inline void fuzz_quiet(void)
{
	const char *v = getenv("MYRIO_FUZZ_LOG");
	if (!v || *v != '1')
		myrio_log_set(fuzz_log_drop, NULL, MYRIO_LOG_ERR);
}

/* Consumes bytes from the front of the input; reads past the end give zeros. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t hi = fuzz_u8(in);
	return (uint16_t)(hi << 8 | fuzz_u8(in));
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t hi = fuzz_u16(in);
	return hi << 16 | fuzz_u16(in);
}

/* Up to want bytes; returns how many are there. */
static inline size_t fuzz_bytes(struct fuzz_in *in, const uint8_t **out, size_t want)
{
	size_t n = want < in->n ? want : in->n;
	*out = in->p;
	in->p += n;
	in->n -= n;
	return n;
}

#endif
