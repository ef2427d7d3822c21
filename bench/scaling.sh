#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How the figures grow with queues and threads: 1, 2, 4, ... up to the machine's cores.
#
#   bench/scaling.sh [-b BUILD_DIR] [-t SECONDS] [-m MAX_THREADS] [-o raw,tcp,rr]
#
# Rows, each at every thread count N, libmyrio and the kernel in the same run:
#   raw   60-byte frames: myrio-rawbench rate -T N (N queues on each model port, a thread
#         per queue pair, RSS spreading the flows; the same threads for N = 1) against N
#         pairs of udp_mmsg (sendmmsg / recvmmsg, 18-byte datagrams = 60-byte frames) over
#         veth
#   tcp   TCP_STREAM, 4 connections per thread: myrio-perf -T N --conns 4 (N queues on each
#         model port, a stack per queue at each end, a thread per queue pair, every
#         connection on the queue its hash names, the bytes checked exact) against the
#         kernel's N iperf3 pairs of 4 streams over veth
#   rr    TCP_RR, 64 bytes, one connection per thread: myrio-perf -T N -t TCP_RR against the
#         kernel's N sockperf ping-pong pairs
# Each row prints the total, the figure per thread (per core) and the scaling efficiency
# (per-thread figure at N / at 1).
#
# Honesty about the machine: the model's NIC is a thread of the same process, so with N
# application threads the model competes with them for the cores (on 2 cores, -T 2 runs 3
# busy threads on 2 cores); the kernel's veth has no NIC thread, its work is charged to the
# senders and receivers. The figure per core is the total divided by N, not by the cores
# really used. Needs root (namespaces). Runs unchanged on a machine of 16 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
B=build
T=2
MAX=$(nproc)
ROWS=raw,tcp,rr
while getopts "b:t:m:o:" o; do
	case $o in
	b) B=$OPTARG ;;
	t) T=$OPTARG ;;
	m) MAX=$OPTARG ;;
	o) ROWS=$OPTARG ;;
	*) echo "usage: bench/scaling.sh [-b BUILD] [-t SECONDS] [-m MAX_THREADS] [-o raw,tcp,rr]" >&2; exit 2 ;;
	esac
done
((MAX > 16)) && MAX=16
. bench/lib.sh
[[ -x $B/myrio-rawbench && -x $B/myrio-perf ]] || {
	echo "build first: $B/myrio-rawbench, $B/myrio-perf" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'netns_down; rm -rf "$tmp"' EXIT
netns_up 1500

counts=()
for ((n = 1; n <= MAX; n *= 2)); do counts+=("$n"); done

# ours_raw N: frames/s
ours_raw() {
	"$B/myrio-rawbench" rate -T "$1" -s 60 -t "$T" 2>/dev/null |
		sed -n 's/^rate: .*: \([0-9]*\) frames\/s.*/\1/p'
}

# ours_perf N TEST OPTIONS...: the JSON field of myrio-perf -T N; empty when it failed
ours_perf() {
	local n=$1 field=$2
	shift 2
	"$B/myrio-perf" -q -T "$n" -l "$T" --json "$@" 2>/dev/null |
		python3 -c "import json,sys; print(json.load(sys.stdin)['$field'])" 2>/dev/null
}
ours_tcp() { # Gb/s
	local m
	m=$(ours_perf "$1" throughput_mbps -t TCP_STREAM --conns 4) || return 0
	[[ -n $m ]] && python3 -c "print(f'{$m / 1000:.3f}')"
}
ours_rr() { ours_perf "$1" trans_per_s -t TCP_RR -r 64,64; }

# kernel_raw N: datagrams/s received by N udp_mmsg receivers from N senders
kernel_raw() {
	local n=$1 i pids=()
	for ((i = 0; i < n; i++)); do
		ip netns exec $NS2 "$B/udp_mmsg" recv $((14000 + i)) "$T" >"$tmp/r$i.json" &
		pids+=($!)
	done
	sleep 0.3
	for ((i = 0; i < n; i++)); do
		ip netns exec $NS1 "$B/udp_mmsg" send $IP2 $((14000 + i)) 18 "$T" >/dev/null &
	done
	wait
	python3 - "$tmp" "$n" <<'PY'
import json, sys
t = 0.0
for i in range(int(sys.argv[2])):
    d = json.load(open(f"{sys.argv[1]}/r{i}.json"))
    t += d["datagrams"] / d["seconds"] if d["seconds"] else 0
print(int(t))
PY
}

# kernel_tcp N: Gb/s over N iperf3 pairs of 4 streams
kernel_tcp() {
	local n=$1 i
	command -v iperf3 >/dev/null || { echo 0; return; }
	for ((i = 0; i < n; i++)); do
		ip netns exec $NS2 iperf3 -s -1 -p $((15000 + i)) >/dev/null 2>&1 &
	done
	sleep 0.3
	for ((i = 0; i < n; i++)); do
		ip netns exec $NS1 iperf3 -c $IP2 -p $((15000 + i)) -P 4 -t "${T%.*}" -J \
			>"$tmp/t$i.json" 2>/dev/null &
	done
	wait
	python3 - "$tmp" "$n" <<'PY'
import json, sys
t = 0.0
for i in range(int(sys.argv[2])):
    try:
        t += json.load(open(f"{sys.argv[1]}/t{i}.json"))["end"]["sum_received"]["bits_per_second"]
    except Exception:
        pass
print(f"{t / 1e9:.3f}")
PY
}

# kernel_rr N: transactions/s over N sockperf ping-pong pairs (TCP)
kernel_rr() {
	local n=$1 i spids=() cpids=()
	command -v sockperf >/dev/null || { echo 0; return; }
	for ((i = 0; i < n; i++)); do
		ip netns exec $NS2 sockperf sr --tcp -i $IP2 -p $((16000 + i)) >/dev/null 2>&1 &
		spids+=($!)
	done
	sleep 0.5
	for ((i = 0; i < n; i++)); do
		ip netns exec $NS1 sockperf pp --tcp -i $IP2 -p $((16000 + i)) -m 64 \
			-t "${T%.*}" >"$tmp/rr$i.txt" 2>&1 &
		cpids+=($!)
	done
	wait "${cpids[@]}" 2>/dev/null || true
	kill "${spids[@]}" 2>/dev/null || true
	wait "${spids[@]}" 2>/dev/null || true
	local total=0 v
	for ((i = 0; i < n; i++)); do
		# sockperf: "avg-latency=X" in usec, half a round trip
		v=$(sed -n 's/.*avg-latency=\([0-9.]*\).*/\1/p' "$tmp/rr$i.txt" | tail -1)
		[[ -n $v ]] && total=$(echo "$total + 1000000 / (2 * $v)" | bc -l)
	done
	printf '%.0f\n' "$total"
}

# row NAME UNIT FN1 FN2: the figure at every N for both sides, per thread, efficiency
row() {
	local name=$1 unit=$2 ours=$3 kern=$4 n o k o1= k1=
	echo "== $name [$unit]"
	printf '   %-8s %14s %14s %10s   %14s %14s %10s %8s\n' threads libmyrio per-thread \
		efficiency kernel per-thread efficiency ratio
	for n in "${counts[@]}"; do
		o=$($ours "$n" || true)
		k=$($kern "$n" || true)
		[[ -n $o1 ]] || o1=$o
		[[ -n $k1 ]] || k1=$k
		python3 - "$n" "${o:-}" "${k:-0}" "${o1:-}" "${k1:-0}" <<'PY'
import sys
n = int(sys.argv[1])
def f(v):
    try: return float(v)
    except ValueError: return None
o, k, o1, k1 = (f(x) for x in sys.argv[2:])
def cell(v, v1):
    if v is None:
        return f"{'failed':>14} {'':>14} {'':>10}"
    eff = f"{(v / n) / (v1 / 1) * 100:.0f}%" if v1 else "-"
    return f"{v:14.3f} {v / n:14.3f} {eff:>10}"
ratio = f"{o / k:.2f}" if o is not None and k else "-"
print(f"   {n:<8} {cell(o, o1)}   {cell(k, k1)} {ratio:>8}")
PY
	done
}

echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); the model's NIC thread shares them"
[[ ,$ROWS, == *,raw,* ]] && row "raw 60-byte frames received" "frames/s" ours_raw kernel_raw
[[ ,$ROWS, == *,tcp,* ]] && row "TCP_STREAM, 4 connections per thread" "Gb/s" ours_tcp kernel_tcp
[[ ,$ROWS, == *,rr,* ]] && row "TCP_RR, 64 bytes, one connection per thread" "trans/s" ours_rr kernel_rr
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
