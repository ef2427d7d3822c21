#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions executed per operation (callgrind), on the stepped device model so that the
# figures do not depend on the machine's load:
#
#   driver: myrio_rx_burst + myrio_tx_burst per 60-byte packet moved (myrio-rawbench step;
#           each packet sent once and received once); target <= 100
#   TCP_RR: per transaction of 1-byte request and response
#   TCP_STREAM: per KB of payload, zero-copy (pool buffers sent as they are) and --copy
#           (myrio_tcp_write from, myrio_tcp_read into application buffers), MTU 1500 and 9000
#   UDP_STREAM: per 64-byte datagram received (both stacks, both drivers, both sides' work)
#   mcast:  per 64-byte multicast datagram received on a port of two stacks (eth_input and
#           share_inbox_run: the receive path, the hand-off to the sibling and its taking it),
#           the group's datagrams landing on stack 0: "local", one member, on stack 0;
#           "handed", a member on each stack (one copy kept, one handed over)
#   model:  the device model's own work (myrio_sim_step: both NICs' firmware loops and the
#           cable) per frame: myrio-rawbench step, 60- and 1514-byte frames, each sent once
#           and received once (the benchmark steps the model 64 times per burst of 32, so
#           quiet iterations count too, as they do for a polling firmware; the frame path
#           alone, tx_poll_slice: send, cable and receive, is printed apart); per data
#           segment of a zero-copy TCP_STREAM at MTU 1500 and 9000 (its ACKs, the
#           connection's set-up and the quiet steps included: it moves with the run's
#           length); and, not moving with it, the model's work to send one TSO segment
#           and receive it at the far NIC (sim_tso_send_next, per call)
#
# The TCP rows count myrio-perf's measurement loop (perf_run) without the model's NIC
# rounds (myrio_sim_step): both stacks, both drivers, the application's work on both
# sides, and the loop's clock reads; connection set-up and teardown are outside it. The
# model link is unlimited, so a step moves every frame posted and few polls are empty.
#
#   bench/stack_cost.sh [BUILD_DIR] [SECONDS] [driver|tcp|udp|mcast|model]...
#   (default build, 1 s, driver, tcp and udp)
# SECONDS is the measured wall time of each TCP run under callgrind (about 50x slower).
set -euo pipefail
B=${1:-build}
T=${2:-1}
shift $(($# < 2 ? $# : 2))
parts=${*:-driver tcp udp}
bench=$B/myrio-rawbench
command -v valgrind >/dev/null || { echo "   valgrind not installed: skipped"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ir OUT_FILE FUNCTION... -- CMD...: runs CMD under callgrind collecting inside the
# FUNCTIONs (a nested one toggles collection off), stdout to OUT_FILE; prints the count
ir() {
	local out=$1 toggles=()
	shift
	while [[ $1 != -- ]]; do toggles+=(--toggle-collect="$1"); shift; done
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "${toggles[@]}" "$@" \
		>"$out" 2>"$tmp/vg.err" || { tail -3 "$tmp/vg.err" >&2; return 1; }
	sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$tmp/cg" | head -1
}

if [[ " $parts " == *" driver "* ]]; then
	[ -x "$bench" ] || { echo "build first: $bench not found" >&2; exit 1; }
	n=20000
	# Without publishing's copies of the counters: they come every 100 ms of wall time,
	# which under valgrind is a few times in this short run (about 1 instruction per
	# packet, against 0.01 at 10 Mpps); the check for them rides on the watchdog's
	# countdown and is counted.
	i=$(MYRIO_PUBLISH=0 ir "$tmp/out" myrio_rx_burst myrio_tx_burst -- "$bench" step -s 60 -n $n)
	rx=$(sed -n 's/.*sent, \([0-9]*\) received.*/\1/p' "$tmp/out")
	awk -v ir="$i" -v n="$rx" 'BEGIN {
		printf "   driver: %d instructions for %d packets moved: %.1f per packet" \
			" (target <= 100)\n", ir, n, ir / n }'
fi

# calls FUNCTION [cost]: how many times the last callgrind run entered FUNCTION, or with
# "cost" the instructions of those calls (inclusive), from the call sites' records
calls() {
	python3 - "$tmp/cg" "$1" "${2:-}" <<'PY'
import re, sys
ids, total, pending, cost, want_cost = {}, 0, False, False, sys.argv[3] == "cost"
caller = None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3):
            ids[m.group(2)] = m.group(3).strip()
        if not m.group(1):
            caller = ids.get(m.group(2))
        pending = bool(m.group(1)) and ids.get(m.group(2)) == sys.argv[2] != caller
    elif pending and line.startswith("calls="):
        if not want_cost:
            total += int(line.split("=")[1].split()[0])
        pending, cost = False, want_cost
    elif cost:
        total += int(line.split()[1])
        cost = False
print(total)
PY
}

# perf_cost LABEL FIELD DIVISOR UNIT myrio-perf-options...: one myrio-perf run, counting
# the functions in $COUNT (default: the measurement loop without the model's rounds)
perf_cost() {
	local label=$1 field=$2 div=$3 unit=$4 i
	shift 4
	# shellcheck disable=SC2086 # COUNT is a list of function names
	i=$(ir "$tmp/o.json" ${COUNT:-perf_run myrio_sim_step} -- "$B/myrio-perf" -q --json \
		-l "$T" --sim stepped,link=unlimited "$@") || { echo "   $label: failed"; return 0; }
	python3 - "$tmp/o.json" "$i" "$label" "$field" "$div" "$unit" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[0])
ir, label, field, div, unit = int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6]
n = d[field] / div
print(f"   {label}: {ir} instructions for {n:.0f} {unit}: "
      f"{ir / n if n else float('nan'):.1f} per {unit[:-1] if unit.endswith('s') else unit}")
PY
}

if [[ " $parts " == *" tcp "* ]]; then
	[ -x "$B/myrio-perf" ] || { echo "build first: $B/myrio-perf not found" >&2; exit 1; }
	perf_cost "TCP_RR 1,1" transactions 1 transactions -t TCP_RR -r 1,1
	for mtu in 1500 9000; do
		perf_cost "TCP_STREAM mtu$mtu zero-copy" bytes_received 1024 KB -t TCP_STREAM --mtu $mtu
		perf_cost "TCP_STREAM mtu$mtu --copy" bytes_received 1024 KB -t TCP_STREAM --copy \
			--mtu $mtu
	done
fi

if [[ " $parts " == *" udp "* ]]; then
	[ -x "$B/myrio-perf" ] || { echo "build first: $B/myrio-perf not found" >&2; exit 1; }
	perf_cost "UDP_STREAM 64" messages_received 1 datagrams -t UDP_STREAM -m 64
fi

if [[ " $parts " == *" mcast "* ]]; then
	[ -x "$B/myrio-mcast-bench" ] || { echo "build first: $B/myrio-mcast-bench not found" >&2; exit 1; }
	for mode in local handed; do
		i=$(MYRIO_PUBLISH=0 ir "$tmp/out" eth_input share_inbox_run -- \
			"$B/myrio-mcast-bench" $mode -n 5000)
		n=$(sed -n 's/^\([0-9]*\) datagrams sent.*/\1/p' "$tmp/out")
		awk -v ir="$i" -v n="$n" -v m=$mode 'BEGIN {
			printf "   multicast, %s: %d instructions for %d datagrams: %.1f per " \
				"datagram\n", m, ir, n, ir / n }'
	done
fi

if [[ " $parts " == *" model "* ]]; then
	[ -x "$bench" ] || { echo "build first: $bench not found" >&2; exit 1; }
	for size in 60 1514; do
		i=$(MYRIO_PUBLISH=0 ir "$tmp/out" myrio_sim_step -- "$bench" step -s $size -n 20000)
		rx=$(sed -n 's/.*sent, \([0-9]*\) received.*/\1/p' "$tmp/out")
		awk -v ir="$i" -v n="$rx" -v s=$size 'BEGIN {
			printf "   model, %d-byte frames: %d instructions for %d frames moved: " \
				"%.1f per frame\n", s, ir, n, ir / n }'
		# of which the frames' own path: the send rings' chains taken, checked, put on
		# the cable and received (tx_poll_slice); the rest is the firmware loops'
		# iterations (the benchmark's 64 steps per burst of 32, the ports' set-up and
		# teardown), interrupts and commands
		f=$(calls tx_poll_slice cost)
		awk -v ir="$f" -v n="$rx" -v t="$i" -v s=$size 'BEGIN {
			printf "   model, %d-byte frames, the frame path (tx_poll_slice): %.1f per " \
				"frame; the loop and the rest: %.1f\n", s, ir / n, (t - ir) / n }'
	done
	for mtu in 1500 9000; do
		COUNT=myrio_sim_step perf_cost "model, TCP_STREAM mtu$mtu" messages_received 1 \
			segments -t TCP_STREAM --mtu $mtu
		i=$(ir "$tmp/o.json" sim_tso_send_next -- "$B/myrio-perf" -q --json -l "$T" \
			--sim stepped,link=unlimited -t TCP_STREAM --mtu $mtu) || continue
		n=$(calls sim_tso_send_next)
		awk -v ir="$i" -v n="$n" -v m=$mtu 'BEGIN {
			printf "   model, a TSO segment sent and received, mtu%d: %d instructions " \
				"for %d segments: %.1f per segment\n", m, ir, n, ir / n }'
	done
fi
