/* SPDX-License-Identifier: BSD-3-Clause */
/* IGMP messages on the wire: checks and decoding of what arrives, building what a host
 * sends (RFC 2236 §2, RFC 3376 §4). */
#include <string.h>

#include "tcp_lite/igmp.h"
#include "util/byteorder.h"
#include "util/csum.h"

void ipv4_mcast_mac(uint32_t group, uint8_t mac[6])
{
	mac[0] = 0x01;
	mac[1] = 0x00;
	mac[2] = 0x5e;
	mac[3] = (uint8_t)(group >> 16 & 0x7f);
	mac[4] = (uint8_t)(group >> 8);
	mac[5] = (uint8_t)group;
}

uint32_t igmp_v3_code_ms(uint8_t code)
{
	if (code < 128)
		return code * 100u;
	uint32_t mant = code & 0x0f, exp = (code >> 4) & 0x07;
	return ((mant | 0x10) << (exp + 3)) * 100u;
}

/* Every group record of a v3 report lies inside its len bytes (RFC 3376 §4.2). */
static bool v3_report_fits(const uint8_t *m, uint32_t len)
{
	uint32_t nrec = get_be16(m + 6), off = IGMP_HLEN;
	for (uint32_t i = 0; i < nrec; i++) {
		if (len - off < IGMP_V3_REC_HLEN)
			return false;
		/* at most 4 * 255 + 4 * 65535 + 8 bytes: no wrap in 32 bits */
		uint32_t rec = IGMP_V3_REC_HLEN + 4u * get_be16(m + off + 2) + 4u * m[off + 1];
		if (rec > len - off)
			return false;
		off += rec;
	}
	return true;
}

int igmp_parse(const uint8_t *m, uint32_t len, struct igmp_msg *out)
{
	memset(out, 0, sizeof(*out));
	if (len < IGMP_HLEN)
		return IGMP_BAD_SHORT;
	if (csum_fold(csum_add(0, m, len)) != 0xffff)
		return IGMP_BAD_CSUM;
	out->type = m[0];
	out->group = get_be32(m + 4);
	switch (m[0]) {
	case IGMP_QUERY:
		if (len == IGMP_HLEN) { /* RFC 3376 §7.1: v1 when Max Resp is 0, else v2 */
			out->query_version = m[1] ? 2 : 1;
			/* RFC 2236 §4: a v1 query means 10 seconds */
			out->max_resp_ms = m[1] ? m[1] * 100u : 10000u;
			return 0;
		}
		if (len < IGMP_V3_QUERY_MIN)
			return IGMP_BAD_LEN; /* "MUST be silently ignored" */
		out->query_version = 3;
		out->max_resp_ms = igmp_v3_code_ms(m[1]);
		out->robustness = m[8] & 0x07;
		out->nsrc = get_be16(m + 10);
		if (4u * out->nsrc > len - IGMP_V3_QUERY_MIN)
			return IGMP_BAD_LEN;
		return 0;
	case IGMP_V1_REPORT:
	case IGMP_V2_REPORT:
	case IGMP_V2_LEAVE:
		return 0;
	case IGMP_V3_REPORT:
		return v3_report_fits(m, len) ? 0 : IGMP_BAD_LEN;
	default:
		return IGMP_BAD_TYPE;
	}
}

void igmp_build_v2(uint8_t *m, uint8_t type, uint32_t group)
{
	m[0] = type;
	m[1] = 0;
	put_be16(m + 2, 0);
	put_be32(m + 4, group);
	put_be16(m + 2, csum_finish(csum_add(0, m, IGMP_HLEN)));
}

uint32_t igmp_build_v3_report(uint8_t *m, uint8_t rtype, const uint32_t *groups, unsigned n)
{
	m[0] = IGMP_V3_REPORT;
	m[1] = 0;
	put_be16(m + 2, 0);
	put_be16(m + 4, 0);
	put_be16(m + 6, (uint16_t)n);
	uint8_t *r = m + IGMP_HLEN;
	for (unsigned i = 0; i < n; i++, r += IGMP_V3_REC_HLEN) {
		r[0] = rtype;
		r[1] = 0;	    /* no auxiliary data */
		put_be16(r + 2, 0); /* no sources: EXCLUDE {} is "every source" */
		put_be32(r + 4, groups[i]);
	}
	uint32_t len = IGMP_HLEN + IGMP_V3_REC_HLEN * n;
	put_be16(m + 2, csum_finish(csum_add(0, m, len)));
	return len;
}
