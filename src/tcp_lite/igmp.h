/* SPDX-License-Identifier: BSD-3-Clause */
/* IGMP (RFC 2236 v2, RFC 3376 v3; v1 queriers as RFC 2236 §4 says): the wire format, and
 * the host side's per-group state kept in the stack. */
#ifndef MYRIO_TCP_LITE_IGMP_H
#define MYRIO_TCP_LITE_IGMP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define IPPROTO_IGMP_ 2
#define IGMP_HLEN 8	     /* v1/v2 messages, and the v3 report's fixed part */
#define IGMP_V3_QUERY_MIN 12 /* a v3 query without sources (RFC 3376 §4.1) */
#define IGMP_V3_REC_HLEN 8   /* a group record without sources (RFC 3376 §4.2.4) */

/* Message types (RFC 3376 §4, RFC 2236 §2.1) */
#define IGMP_QUERY 0x11
#define IGMP_V1_REPORT 0x12
#define IGMP_V2_REPORT 0x16
#define IGMP_V2_LEAVE 0x17
#define IGMP_V3_REPORT 0x22

/* v3 group record types (RFC 3376 §4.2.12) */
#define IGMP_MODE_IS_EXCLUDE 2
#define IGMP_CHANGE_TO_INCLUDE 3
#define IGMP_CHANGE_TO_EXCLUDE 4

#define IGMP_ALL_HOSTS 0xe0000001u   /* 224.0.0.1: every host is a member, never reported */
#define IGMP_ALL_ROUTERS 0xe0000002u /* 224.0.0.2: v2 leaves */
#define IGMP_V3_ROUTERS 0xe0000016u  /* 224.0.0.22: v3 reports */

static inline bool ipv4_is_multicast(uint32_t a)
{
	return (a >> 28) == 0xe;
}

/* RFC 1112 §6.4: 01:00:5e and the group's low 23 bits. */
void ipv4_mcast_mac(uint32_t group, uint8_t mac[6]);

/* A parsed message: its type, and what a query asks. */
struct igmp_msg {
	uint8_t type;
	uint8_t query_version; /* queries: 1, 2 or 3 (RFC 3376 §7.1) */
	uint32_t group;	       /* 0 in a general query */
	uint32_t max_resp_ms;  /* queries: the longest delay before answering */
	uint16_t nsrc;	       /* v3 queries: sources listed (all inside the message) */
	uint8_t robustness;    /* v3 queries: QRV, 0 = not given */
};

enum igmp_parse_error {
	IGMP_BAD_SHORT = -1, /* shorter than its type's fixed part */
	IGMP_BAD_CSUM = -2,
	IGMP_BAD_LEN = -3,  /* a length its type cannot have, or sources beyond the end */
	IGMP_BAD_TYPE = -4, /* a type a host does not take */
};

/* Checks and decodes len bytes of an IGMP message: 0, or an igmp_parse_error. */
int igmp_parse(const uint8_t *m, uint32_t len, struct igmp_msg *out);
/* The v3 Max Resp Code (RFC 3376 §4.1.1, also QQIC's form) in milliseconds. */
uint32_t igmp_v3_code_ms(uint8_t code);
/* A v1/v2 message (8 bytes, checksum set): report, leave. */
void igmp_build_v2(uint8_t *m, uint8_t type, uint32_t group);
/* A v3 report of n records without sources (8 + 8n bytes, checksum set), each group's
 * record of type rtype. Returns its length. */
uint32_t igmp_build_v3_report(uint8_t *m, uint8_t rtype, const uint32_t *groups, unsigned n);

/* The host's multicast state, shared by the stacks of its port: groups joined by their
 * sockets, the querier's version heard, and the reports to send. */
#define IGMP_MAX_GROUPS 64
struct igmp_group {
	uint32_t addr;	    /* 0 = free */
	uint32_t refs;	    /* sockets' memberships (every stack's); 0 while only its leave
			     * reports remain */
	uint64_t report_ms; /* a report (or leave) is due then; 0 = none */
	uint8_t retrans;    /* unsolicited state-change reports still to send */
	bool leaving;	    /* the reports due are leaves */
	bool changing;	    /* v3: the reports due are the join's state change (TO_EX) */
	bool last_reporter; /* v2: ours was the last report heard (RFC 2236 §3) */
};

struct igmp_state {
	struct igmp_group groups[IGMP_MAX_GROUPS];
	unsigned n;		     /* slots in use */
	uint64_t v1_until, v2_until; /* older-version querier present (RFC 3376 §7.2.1) */
	uint64_t general_ms;	     /* v3: a report of every group is due then; 0 = none */
	_Atomic uint64_t next_ms;    /* earliest of the above; 0 = none (every poll reads it) */
	uint8_t robustness;	     /* the querier's QRV, or 2 */
};

#endif
