#!/usr/bin/env bash
# libmyrio against its peers, in the same run on this machine, one SUMMARY line per
# comparison with the ratio and the target.
#
#   bench/compare.sh [-b BUILD_DIR] [-t SECONDS] [SECTION...]
#   sections: model (10 Gb/s model link targets), tcp, udp, latency, rr, raw; default all
#
# Peers: the Linux kernel over a veth pair between two network namespaces (iperf3 for
# streams, sockperf for ping-pong) and over loopback (sockperf), DPDK's testpmd between
# two memif ports for raw packet rates. libmyrio runs over the in-process device model with
# an unlimited link unless said otherwise; its model thread is the NIC (CPU 0), the
# application runs on CPU 1, as the kernel's server (CPU 0) and client (CPU 1) do.
# Needs root (namespaces) and the peers (bench/deps.sh). Run it on an otherwise idle
# machine: every figure is a single short run.
set -euo pipefail
cd "$(dirname "$0")/.."
while getopts b:t: o; do
	case $o in
	b) B=$OPTARG ;;
	t) T=$OPTARG ;;
	*) echo "usage: bench/compare.sh [-b BUILD] [-t SECONDS] [model tcp udp latency rr raw]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
source bench/lib.sh
sections=${*:-model tcp udp latency rr raw}
tmp=$(mktemp -d)
export SUMMARY_FILE=$tmp/summary
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	netns_down
	rm -rf "$tmp"
}
trap cleanup EXIT
for p in myrio-perf latency_loopback; do
	[[ -x $B/$p ]] || { echo "build first: $B/$p not found" >&2; exit 1; }
done
perf() { "$B/myrio-perf" -q -l "$T" --json "$@"; }
echo "bench: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), ${T} s per run"

# --- the 10 Gb/s model link: absolute targets --------------------------------------------
section_model() {
	echo "== model link 10 Gb/s (timestamps on)"
	local f=$tmp/m.json
	perf -t TCP_STREAM --mtu 9000 >"$f"
	target "TCP_STREAM mtu9000 10g [Gb/s]" "$(json "$f" 'd["throughput_mbps"]/1e3')" Gb/s 9.85
	perf -t TCP_STREAM --mtu 1500 >"$f"
	target "TCP_STREAM mtu1500 10g [Gb/s]" "$(json "$f" 'd["throughput_mbps"]/1e3')" Gb/s 9.35
	perf -t UDP_STREAM -m 1472 >"$f"
	target "UDP_STREAM 1472 10g recv [Gb/s]" "$(json "$f" 'd["recv_mbps"]/1e3')" Gb/s 9.5
	perf -t TCP_STREAM --mtu 9000 --irq >"$f"
	target "TCP_STREAM mtu9000 irq send SD" "$(json "$f" 'd["sd_local_us_per_kb"]')" us/KB 0.073 lower
	echo "   (irq run: $(json "$f" 'd["throughput_mbps"]/1e3') Gb/s, local CPU" \
		"$(json "$f" 'd["cpu_local_s"]') s in $(json "$f" 'd["elapsed_s"]') s)"
}

# --- TCP throughput, unlimited link vs the kernel over veth --------------------------------
section_tcp() {
	need iperf3
	for mtu in 1500 9000; do
		echo "== TCP stream, MTU $mtu: libmyrio (unlimited model link) vs kernel veth (iperf3)"
		perf -t TCP_STREAM --mtu "$mtu" --sim link=unlimited,spin >"$tmp/t.json"
		netns_up "$mtu"
		ip netns exec $NS2 iperf3 -s -1 -A 0 >/dev/null 2>&1 &
		pids+=($!)
		sleep 0.5
		ip netns exec $NS1 iperf3 -c $IP2 -t "$T" -A 1 -J >"$tmp/k.json"
		summary "TCP_STREAM mtu$mtu unlimited [Mb/s]" "$(json "$tmp/t.json" 'd["throughput_mbps"]')" \
			Mb/s "kernel-veth(iperf3)" \
			"$(json "$tmp/k.json" 'd["end"]["sum_received"]["bits_per_second"]/1e6')" 1
	done
}

# --- UDP packet rates vs the kernel over veth ----------------------------------------------
section_udp() {
	need iperf3
	netns_up 1500
	for size in 64 1472; do
		echo "== UDP packet rate, $size-byte datagrams: libmyrio (unlimited) vs kernel veth (iperf3 -u)"
		perf -t UDP_STREAM -m "$size" --sim link=unlimited,spin >"$tmp/u.json"
		ip netns exec $NS2 iperf3 -s -1 -A 0 >/dev/null 2>&1 &
		pids+=($!)
		sleep 0.5
		ip netns exec $NS1 iperf3 -c $IP2 -u -b 0 -l "$size" -t "$T" -A 1 -J >"$tmp/k.json"
		local kpps
		kpps=$(json "$tmp/k.json" '(d["end"]["sum"]["packets"]-d["end"]["sum"]["lost_packets"])/d["end"]["sum"]["seconds"]')
		summary "UDP_STREAM $size recv [pkt/s]" "$(json "$tmp/u.json" 'd["recv_pps"]')" pkt/s \
			"kernel-veth(iperf3)" "$kpps" 10
	done
}

# --- latency: loopback example vs sockperf ping-pong ---------------------------------------
sockperf_pp() { # where (lo|veth), extra options; prints "median p99.9 trans/s"
	local where=$1; shift
	local srv=(taskset -c 0 sockperf sr) cli=(taskset -c 1 sockperf pp) ip=127.0.0.1
	if [[ $where == veth ]]; then
		srv=(ip netns exec $NS2 "${srv[@]}")
		cli=(ip netns exec $NS1 "${cli[@]}")
		ip=$IP2
	fi
	local port=$((12000 + RANDOM % 1000))
	"${srv[@]}" -i $ip -p $port "$@" >/dev/null 2>&1 &
	local spid=$!
	pids+=($spid)
	sleep 0.5
	"${cli[@]}" -i $ip -p $port -t "$T" --full-rtt "$@" >"$tmp/sp.txt" 2>&1 || true
	kill $spid 2>/dev/null || true
	python3 - "$tmp/sp.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
med = re.search(r"percentile 50.000 =\s*([\d.]+)", t).group(1)
p999 = re.search(r"percentile 99.900 =\s*([\d.]+)", t).group(1)
m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", t)
print(med, p999, int(m.group(2)) / float(m.group(1)))
PY
}

section_latency() {
	need sockperf
	echo "== UDP round trip: latency_loopback (model, 10 Gb/s link) vs kernel (sockperf ping-pong)"
	"$B/latency_loopback" -n 200000 -s 32 >"$tmp/l.txt"
	local med p999
	read -r med p999 < <(python3 - "$tmp/l.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read().split("TCP ")[0]
m = re.search(r"median ([\d.]+) us .*p99.9 ([\d.]+) us", t)
print(m.group(1), m.group(2))
PY
)
	local k
	read -r -a k < <(sockperf_pp lo -m 32)
	summary "UDP RTT median vs loopback [us]" "$med" us "kernel-lo(sockperf)" "${k[0]}" 10 lower
	summary "UDP RTT p99.9 vs loopback [us]" "$p999" us "kernel-lo(sockperf)" "${k[1]}" 5 lower
	netns_up 1500
	read -r -a k < <(sockperf_pp veth -m 32)
	summary "UDP RTT median vs veth [us]" "$med" us "kernel-veth(sockperf)" "${k[0]}" "" lower
	summary "UDP RTT p99.9 vs veth [us]" "$p999" us "kernel-veth(sockperf)" "${k[1]}" "" lower
}

# --- TCP request/response ------------------------------------------------------------------
section_rr() {
	need sockperf
	echo "== TCP_RR 1 byte: myrio-perf (model, 10 Gb/s) vs kernel loopback (sockperf --tcp," \
		"14-byte messages: its minimum)"
	perf -t TCP_RR -r 1,1 >"$tmp/rr.json"
	local k
	read -r -a k < <(sockperf_pp lo --tcp -m 14)
	summary "TCP_RR 1 byte [trans/s]" "$(json "$tmp/rr.json" 'd["trans_per_s"]')" trans/s \
		"kernel-lo(sockperf)" "${k[2]}" 10
	perf -t UDP_RR -r 1,1 >"$tmp/rr.json"
	read -r -a k < <(sockperf_pp lo -m 14)
	summary "UDP_RR 1 byte [trans/s]" "$(json "$tmp/rr.json" 'd["trans_per_s"]')" trans/s \
		"kernel-lo(sockperf)" "${k[2]}"
}

# --- raw packet rates: the driver's raw path vs DPDK testpmd -------------------------------
testpmd_rate() { # frame size; prints received frames/s over both ports
	local sock=$tmp/memif.sock
	timeout $((T + 8)) dpdk-testpmd --no-huge -m 512 --no-pci -l 0,1 --file-prefix=myrio-bench \
		--vdev=net_memif0,role=server,socket="$sock" \
		--vdev=net_memif1,role=client,socket="$sock" -- \
		--total-num-mbufs=16384 --forward-mode=flowgen --txpkts="$1" \
		--stats-period="$T" --auto-start >"$tmp/pmd.txt" 2>&1 || true
	python3 - "$tmp/pmd.txt" <<'PY'
import re, sys
rx = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", open(sys.argv[1]).read())]
print(sum(rx[-2:]) if len(rx) >= 2 else "n/a")
PY
}

section_raw() {
	if [[ ! -x $B/myrio-rawbench ]]; then
		echo "== raw rates: $B/myrio-rawbench not built (driver branch): skipped"
		return
	fi
	need dpdk-testpmd
	for size in 60 1514; do
		echo "== raw frames of $size bytes: myrio-rawbench (unlimited model link) vs" \
			"DPDK testpmd flowgen over two memif ports"
		local ours
		ours=$("$B/myrio-rawbench" rate -s "$size" -t "$T" -l unlimited |
			sed -n 's/.*: \([0-9]*\) frames\/s.*/\1/p')
		summary "raw $size-byte frames [frames/s]" "${ours:-n/a}" frames/s \
			"dpdk-testpmd(memif)" "$(testpmd_rate "$size")"
	done
}

for s in $sections; do
	"section_$s"
done
echo
echo "== summary"
cat "$SUMMARY_FILE"
