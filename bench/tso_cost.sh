#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What TCP segmentation offload saves on the host: instructions executed by both stacks
# (myrio_stack_poll, the application's writes: stack, driver, receive path of both sides)
# for the same byte-exact transfer at MTU 1500 with TSO on and off, on the stepped device
# model in one thread (callgrind; the model's own work is not counted). Deterministic, so
# it does not depend on the machine's load as myrio-perf's figures do.
#
#   bench/tso_cost.sh [BUILD_DIR] [BYTES]      (default build, 16M)
set -euo pipefail
B=${1:-build}
BYTES=${2:-16M}
t=$B/tests/test_stack_tcp_tso
[ -x "$t" ] || { echo "build first: $t not found" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 1; }

source "$(dirname "$0")/callgrind.sh"
for c in clean_1500:on switched_off:off; do
	cg=$(mktemp)
	MYRIO_TEST_FILTER=${c%%:*} MYRIO_TEST_BYTES=$BYTES valgrind --tool=callgrind \
		--callgrind-out-file="$cg" --toggle-collect=myrio_stack_poll \
		--toggle-collect=myrio_tcp_write "$t" >"$cg.out" 2>/dev/null
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$cg" | head -1)
	[ -n "$ir" ] || ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$cg" | head -1)
	bytes=$(sed -n 's/.*TSO [a-z]*: \([0-9]*\) bytes.*/\1/p' "$cg.out")
	tx=$(incl "$cg" myrio_tx_burst)
	out=$(incl "$cg" tcp_output)
	chk=$(incl "$cg" mp_event)
	[ "$chk" -gt 0 ] || { echo "FAIL: no mp_event in the profile: the figures would be wrong" >&2; exit 1; }
	awk -v ir="$ir" -v b="$bytes" -v tx="$tx" -v out="$out" -v chk="$chk" \
		-v c="${c##*:}" 'BEGIN {
		kb = b / 1024
		printf "TSO %-3s: %d bytes; instructions per KB of payload: both stacks and " \
		       "drivers %.1f (without the test'"'"'s receive callback, its pattern check), of them tcp_output " \
		       "%.1f, myrio_tx_burst (driver send) %.1f\n",
		       c, b, (ir - chk) / kb, out / kb, tx / kb }'
	rm -f "$cg" "$cg.out"
done
