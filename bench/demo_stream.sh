#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README demo's two-process TCP stream: stream_send and stream_recv, each a process of
# its own attached to nic0 and nic1 of a model daemon (myrio-simd) whose cable between them
# runs at 10 Gb/s; the receiver checks every byte. For each MTU it prints both programs'
# summaries, the CPU seconds of the three (the daemon's: its model thread, the NICs'
# firmware loop, during the run), the same per GB received, and the load average before and
# after: a rate says something about line rate only when the load stayed below the CPU count
# (three threads share the cores); CPU per GB holds up better under load.
#
#   bench/demo_stream.sh [BUILD_DIR] [SECONDS] [MTU...]      (default build, 4 s, 1500 9000)
#
# Targets: 9.3 Gb/s at MTU 1500 and 9.8 Gb/s at MTU 9000 (the ceilings for TCP payload with
# timestamps over 10 Gb/s are 9.415 and 9.900, docs/perf.md).
set -euo pipefail
B=${1:-build}
T=${2:-4}
shift $(($# < 2 ? $# : 2))
mtus=${*:-1500 9000}
for p in myrio-simd stream_send stream_recv; do
	[ -x "$B/$p" ] || { echo "build first: $B/$p not found" >&2; exit 1; }
done
tmp=$(mktemp -d)
daemon=
trap '[[ -n $daemon ]] && kill $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
tck=$(getconf CLK_TCK)
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# CPU seconds (user + system) of a running process's threads other than its first: the
# daemon's model thread (its main thread only serves the control socket), from /proc
model_s() {
	local t s
	for t in /proc/$1/task/*; do
		[[ ${t##*/} == "$1" ]] && continue
		s=$(cat "$t/stat") && s=${s##*) } && awk -v t="$tck" '{ print ($12 + $13) / t }' <<<"$s"
	done | awk '{ s += $1 } END { printf "%.2f", s }'
}
# "user+sys" seconds from GNU time's -f '%U %S' line in file $1
time_s() { awk 'END { printf "%.2f", $1 + $2 }' "$1"; }

for mtu in $mtus; do
	sock=$tmp/simd.sock
	rm -f "$sock"
	"$B/myrio-simd" --socket "$sock" 2>"$tmp/simd.log" &
	daemon=$!
	for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
	load0=$(loadavg)
	model0=$(model_s $daemon)
	/usr/bin/time -o "$tmp/recv.time" -f '%U %S' \
		"$B/stream_recv" --mtu "$mtu" "simd:nic1@$sock" >"$tmp/recv.out" &
	recv=$!
	sleep 0.3
	/usr/bin/time -o "$tmp/send.time" -f '%U %S' \
		"$B/stream_send" --mtu "$mtu" -d "$T" "simd:nic0@$sock" >"$tmp/send.out"
	wait $recv
	model=$(awk -v a="$model0" -v b="$(model_s $daemon)" 'BEGIN { printf "%.2f", b - a }')
	kill $daemon
	wait $daemon 2>/dev/null || true
	daemon=
	echo "== two processes through myrio-simd, TCP, MTU $mtu, $T s"
	grep -h '^summary' "$tmp/send.out" | sed 's/^/   stream_send /'
	grep -h '^summary' "$tmp/recv.out" | sed 's/^/   stream_recv /'
	send=$(time_s "$tmp/send.time") recv=$(time_s "$tmp/recv.time")
	echo "   CPU seconds: stream_send $send, stream_recv $recv, myrio-simd (the model) $model;" \
		"load average $load0 -> $(loadavg) on $(nproc) CPUs"
	bytes=$(sed -n 's/^summary: \([0-9]*\) bytes.*/\1/p' "$tmp/recv.out")
	[[ -n $bytes && $bytes != 0 ]] && awk -v b="$bytes" -v s="$send" -v r="$recv" -v m="$model" \
		'BEGIN { g = b / 1e9; printf "   CPU seconds per GB received: stream_send %.3f, " \
		"stream_recv %.3f, the model %.3f, all three %.3f\n", s / g, r / g, m / g,
		(s + r + m) / g }'
done
