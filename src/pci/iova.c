/* SPDX-License-Identifier: BSD-3-Clause */
/* First-fit IOVA allocation over a sorted array: a process maps a handful of large regions,
 * so a linear scan beats anything cleverer. */
#include "pci/iova.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void myrio_iova_init(struct myrio_iova_space *s, const struct myrio_iova_range *ranges, unsigned n)
{
	memset(s, 0, sizeof(*s));
	if (n == 0) {
		s->usable[0].start = 0;
		s->usable[0].last = (1ull << 39) - 1;
		s->n_usable = 1;
		return;
	}
	for (unsigned i = 0; i < n && s->n_usable < MYRIO_IOVA_MAX_RANGES; i++)
		if (ranges[i].last >= ranges[i].start)
			s->usable[s->n_usable++] = ranges[i];
}

void myrio_iova_fini(struct myrio_iova_space *s)
{
	free(s->used);
	memset(s, 0, sizeof(*s));
}

/* Rounds v up to align; false on overflow. */
static int align_up(uint64_t v, uint64_t align, uint64_t *out)
{
	uint64_t r = (v + align - 1) & ~(align - 1);
	if (r < v)
		return 0;
	*out = r;
	return 1;
}

/* Lowest aligned start in [r->start, r->last] where len bytes avoid every allocation. */
static int fit_in_range(const struct myrio_iova_space *s, const struct myrio_iova_range *r,
			uint64_t len, uint64_t align, uint64_t *out)
{
	uint64_t cand;
	if (!align_up(r->start < MYRIO_IOVA_FLOOR ? MYRIO_IOVA_FLOOR : r->start, align, &cand))
		return 0;
	for (unsigned i = 0; i <= s->n_used; i++) {
		if (cand > r->last || r->last - cand < len - 1)
			return 0;
		if (i == s->n_used)
			break;
		const struct myrio_iova_used *u = &s->used[i];
		uint64_t u_last = u->start + (u->len - 1);
		if (u_last < cand)
			continue; /* entirely below the candidate */
		if (u->start > cand + (len - 1))
			break; /* sorted: nothing further can overlap */
		if (!align_up(u_last + 1, align, &cand) || u_last + 1 == 0)
			return 0;
	}
	*out = cand;
	return 1;
}

int myrio_iova_alloc(struct myrio_iova_space *s, uint64_t len, uint64_t align, uint64_t *iova)
{
	if (len == 0 || align == 0 || (align & (align - 1)))
		return -EINVAL;
	uint64_t start = 0;
	unsigned r;
	for (r = 0; r < s->n_usable; r++)
		if (fit_in_range(s, &s->usable[r], len, align, &start))
			break;
	if (r == s->n_usable)
		return -ENOMEM;
	if (s->n_used == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 8;
		struct myrio_iova_used *u = realloc(s->used, cap * sizeof(*u));
		if (!u)
			return -ENOMEM;
		s->used = u;
		s->cap = cap;
	}
	unsigned pos = 0;
	while (pos < s->n_used && s->used[pos].start < start)
		pos++;
	memmove(&s->used[pos + 1], &s->used[pos], (s->n_used - pos) * sizeof(s->used[0]));
	s->used[pos].start = start;
	s->used[pos].len = len;
	s->n_used++;
	*iova = start;
	return 0;
}

int myrio_iova_free(struct myrio_iova_space *s, uint64_t iova)
{
	for (unsigned i = 0; i < s->n_used; i++) {
		if (s->used[i].start != iova)
			continue;
		memmove(&s->used[i], &s->used[i + 1], (s->n_used - i - 1) * sizeof(s->used[0]));
		s->n_used--;
		return 0;
	}
	return -ENOENT;
}
