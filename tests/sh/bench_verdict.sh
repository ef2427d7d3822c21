#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/verdict.py on made-up rows: a failed run keeps a row from MET, a good run worth 0
# stays in the pairs, and a side whose CPU over its window exceeds the machine's CPUs is
# flagged. Needs no build: the rule alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# verdict_of NAME LOWER TARGET [CEILING] < JSON lines: the row's verdict (peer "k" unless CEILING)
verdict_of() {
	local lower=$2 target=$3 ceiling=${4:-} peer=k
	[[ -n $ceiling ]] && peer=-
	cat >"$tmp/$1.json"
	python3 bench/verdict.py "$tmp/$1.json" "$1" x/s op "$lower" "$peer" "$target" \
		$ceiling >"$tmp/$1.out"
	sed -n 's/^SUMMARY .* | //p' "$tmp/$1.out"
}
expect() { # NAME WANT GOT
	if [[ $3 == "$2" ]]; then
		echo "ok   $1: $3"
	else
		echo "FAIL $1: want $2, got $3"
		cat "$tmp/$1.out"
		fail=1
	fi
}
run() { # SIDE OK VALUE [extra JSON]
	echo "{\"side\": \"$1\", \"ok\": $2, \"value\": $3, \"ops\": 100${4:+, $4}}"
}

# 2 of our 5 runs failed, the other 3 pairs are above the target: failures count
got=$({ for i in 1 2 3; do run ours true 12; run peer true 5; done
	for i in 1 2; do run ours false null; run peer true 5; done; } | verdict_of failed 0 1)
expect failed INCONCLUSIVE "$got"
# a failed peer run too: not every run succeeded
got=$({ for i in 1 2 3; do run ours true 12; run peer true 5; done
	run ours true 12; run peer false null; } | verdict_of peer_failed 0 1)
expect peer_failed INCONCLUSIVE "$got"
# the same with every good pair below the target: NOT MET
got=$({ for i in 1 2 3; do run ours true 2; run peer true 5; done
	run ours false null; run peer true 5; } | verdict_of failed_missed 0 1)
expect failed_missed "NOT MET" "$got"
# all good and above: MET
got=$({ for i in 1 2 3; do run ours true 12; run peer true 5; done; } | verdict_of all_good 0 1)
expect all_good MET "$got"
# a good run worth 0 is a figure: ours [0,12,12,12] vs 5 is not MET
got=$({ for v in 0 12 12 12; do run ours true $v; run peer true 5; done; } | verdict_of zero 0 1)
expect zero INCONCLUSIVE "$got"
grep -q "4 pairs" "$tmp/zero.out" || { echo "FAIL zero: the 0 run left the pairs"; cat "$tmp/zero.out"; fail=1; }
# against a target: a failed run keeps it from MET, a 0 rate misses it
got=$({ for v in 9 9 9; do run ours true $v; done; run ours false null; } | verdict_of t_failed 0 0.5 10)
expect t_failed INCONCLUSIVE "$got"
got=$({ for v in 0 9 9; do run ours true $v; done; } | verdict_of t_zero 0 0.5 10)
expect t_zero INCONCLUSIVE "$got"
# CPU over the window beyond the machine's CPUs is flagged, within them it is not
n=$(nproc)
got=$(for i in 1 2 3; do run ours true 12; run peer true 5 "\"cpu_proc_s\": $((2 * n)), \"secs\": 1"; done |
	verdict_of cpu_over 0 1)
grep -q "FLAG: process CPU" "$tmp/cpu_over.out" ||
	{ echo "FAIL cpu_over: $((2 * n)) CPUs over 1 s not flagged"; cat "$tmp/cpu_over.out"; fail=1; }
got=$(for i in 1 2 3; do run ours true 12; run peer true 5 "\"cpu_proc_s\": $n, \"secs\": 1"; done |
	verdict_of cpu_within 0 1)
! grep -q "FLAG" "$tmp/cpu_within.out" ||
	{ echo "FAIL cpu_within: $n CPUs over 1 s flagged"; cat "$tmp/cpu_within.out"; fail=1; }
exit $fail
