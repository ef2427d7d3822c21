#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Unmodified programs through libmyrio-preload.so against the same programs on the kernel
# (veth between two namespaces) and against libmyrio's own tools on the same link, in one
# run: iperf3 and nuttcp throughput, sockperf UDP round trip (median, p99, p99.9).
#   preload rows: two processes on the two cabled NICs of one myrio-simd daemon
#   own tools:    myrio-perf --copy (TCP_STREAM copying, as socket programs do) and
#                 latency_loopback on the same daemon's NICs
#   kernel rows:  the same programs over veth (offloads on)
# Targets (docs/preload.md): preload throughput >= 90% of myrio-perf's; preload sockperf
# median within 2x of latency_loopback's. Usage: bench/preload_compare.sh   (B=build dir,
# T=seconds per run)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[[ $(id -u) -eq 0 ]] || { echo "needs root (namespaces)"; exit 1; }
for p in iperf3 sockperf python3; do need $p; done
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	netns_down
	rm -rf "$tmp"
}
trap cleanup EXIT
secs=${T%.*}
((secs >= 1)) || secs=1

"$B/myrio-simd" --socket "$tmp/s" >"$tmp/simd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S $tmp/s ]] && break; sleep 0.1; done
A="$B/myrio-run --device simd:nic0@$tmp/s --ip 10.0.0.1/24 --"
Z="$B/myrio-run --device simd:nic1@$tmp/s --ip 10.0.0.2/24 --"
netns_up 1500
K1=(ip netns exec $NS1)
K2=(ip netns exec $NS2)

iperf_gbps() { # CLIENT_PREFIX SERVER_PREFIX IP: iperf3 TCP, Gb/s received
	local c=$1 s=$2 ip=$3
	$s iperf3 -s -1 -B "$ip" >/dev/null 2>&1 &
	local sp=$!
	sleep 1
	$c iperf3 -c "$ip" -t "$secs" -J >"$tmp/i.json" 2>/dev/null
	wait $sp
	json "$tmp/i.json" 'round(d["end"]["sum_received"]["bits_per_second"]/1e9, 3)' 2>/dev/null || echo -
}
nuttcp_gbps() { # CLIENT_PREFIX SERVER_PREFIX IP
	command -v nuttcp >/dev/null || { echo -; return; }
	$2 nuttcp -1 --nofork >/dev/null 2>&1 &
	sleep 1
	$1 nuttcp -t -T "$secs" -w 128 -v "$3" >"$tmp/n.txt" 2>&1
	awk '/^nuttcp-t:.*Mbps/ { for (i = 1; i <= NF; i++) if ($i == "Mbps") v = $(i-1) } END {
		if (v) printf "%.3f\n", v / 1000; else print "-" }' "$tmp/n.txt"
}
sockperf_lat() { # CLIENT_PREFIX SERVER_PREFIX IP: "median p99 p99.9" in us
	local c=$1 s=$2 ip=$3
	$s sockperf server -i "$ip" -p 11111 >/dev/null 2>&1 &
	local sp=$!
	sleep 1
	$c sockperf ping-pong -i "$ip" -p 11111 -t "$secs" -m 32 >"$tmp/p.txt" 2>&1
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
	python3 - "$tmp/p.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
v = [re.search(r"percentile %s =\s*([\d.]+)" % p, t) for p in ("50.000", "99.000", "99.900")]
print(" ".join(m.group(1) if m else "-" for m in v))
PY
}
perf_gbps() {
	"$B/myrio-perf" -q -l "$secs" --json --copy -t TCP_STREAM "simd:nic0@$tmp/s" \
		"simd:nic1@$tmp/s" >"$tmp/o.json" 2>/dev/null
	json "$tmp/o.json" 'round(d["throughput_mbps"]/1e3, 3)' 2>/dev/null || echo -
}
loopback_lat() {
	"$B/latency_loopback" -n 100000 -s 32 "simd:nic0@$tmp/s" "simd:nic1@$tmp/s" >"$tmp/l.txt" 2>&1
	python3 - "$tmp/l.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read().split("TCP ")[0]
m = re.search(r"median ([\d.]+) us .*p99 ([\d.]+) us.*p99.9 ([\d.]+) us", t) or \
    re.search(r"median ([\d.]+) us .*p99.9 ([\d.]+) us", t)
print(" ".join(m.groups()) if m else "-")
PY
}
ratio() { python3 -c 'import sys
try: print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except Exception: print("-")' "$1" "$2"; }

read -r load _ </proc/loadavg
echo "== preload vs kernel vs libmyrio's own tools, ${secs} s per run, load $load"
pi=$(iperf_gbps "$A" "$Z" 10.0.0.2)
mp=$(perf_gbps)
ki=$(iperf_gbps "${K1[*]}" "${K2[*]}" $IP2)
kn=$(nuttcp_gbps "${K1[*]}" "${K2[*]}" $IP2)
pn=$(nuttcp_gbps "$A" "$Z" 10.0.0.2)
printf "%-44s %10s %10s %10s\n" "TCP throughput [Gb/s]" preload myrio-perf kernel
printf "%-44s %10s %10s %10s   preload/myrio-perf %s, preload/kernel %s\n" "iperf3 -c (preload) | myrio-perf --copy" \
	"$pi" "$mp" "$ki" "$(ratio "$pi" "$mp")" "$(ratio "$pi" "$ki")"
printf "%-44s %10s %10s %10s   preload/myrio-perf %s, preload/kernel %s\n" "nuttcp -t -w 128 | myrio-perf --copy" \
	"$pn" "$mp" "$kn" "$(ratio "$pn" "$mp")" "$(ratio "$pn" "$kn")"
pl=$(sockperf_lat "$A" "$Z" 10.0.0.2)
ll=$(loopback_lat)
kl=$(sockperf_lat "${K1[*]}" "${K2[*]}" $IP2)
spl=$(MYRIO_SPIN=1 sockperf_lat "$A" "$Z" 10.0.0.2)
printf "%-44s %s\n" "UDP 32 B round trip [us] median p99 p99.9" ""
printf "  %-42s %s\n" "sockperf (preload, sleeping)" "$pl" "sockperf (preload, MYRIO_SPIN=1)" "$spl" \
	"latency_loopback (same daemon)" "$ll" "sockperf (kernel veth)" "$kl"
echo "  median ratios: preload/latency_loopback $(ratio "${pl%% *}" "${ll%% *}")," \
	"spin/latency_loopback $(ratio "${spl%% *}" "${ll%% *}"), preload/kernel $(ratio "${pl%% *}" "${kl%% *}")"
