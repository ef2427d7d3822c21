#!/usr/bin/env bash
# libmyrio against its peers, in the same run on this machine, one SUMMARY line per
# comparison with the ratio and the target.
#
#   bench/compare.sh [-b BUILD_DIR] [-t SECONDS] [-r REPEATS] [SECTION...]
#   sections: model (10 Gb/s model link targets), tcp, udp, latency, rr, raw; default all
#   -r N: every figure (ours and the peer's) is the median of N runs
#
# Peers: the Linux kernel over a veth pair between two network namespaces (iperf3 for
# streams, sockperf for ping-pong) and over loopback (sockperf), DPDK's testpmd between
# two memif ports for raw packet rates. libmyrio runs over the in-process device model with
# an unlimited link unless said otherwise; its model thread is the NIC (CPU 0), the
# application runs on CPU 1, as the kernel's server (CPU 0) and client (CPU 1) do.
# Needs root (namespaces) and the peers (bench/deps.sh). Run it on an otherwise idle
# machine.
set -euo pipefail
cd "$(dirname "$0")/.."
while getopts b:t:r: o; do
	case $o in
	b) B=$OPTARG ;;
	t) T=$OPTARG ;;
	r) R=$OPTARG ;;
	*) echo "usage: bench/compare.sh [-b BUILD] [-t SECONDS] [-r REPEATS]" \
		"[model tcp udp latency rr raw]" >&2
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
echo "bench: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"${T} s per run, median of $R"

# ours FIELD_EXPR myrio-perf-options...: one myrio-perf run, one JSON field
ours() {
	local expr=$1; shift
	"$B/myrio-perf" -q -l "$T" --json "$@" >"$tmp/o.json"
	json "$tmp/o.json" "$expr"
}

# --- the 10 Gb/s model link: absolute targets --------------------------------------------
section_model() {
	echo "== model link 10 Gb/s (timestamps on); spin = busy polling, irq = sleeping on the" \
		"NICs' coalesced interrupts"
	local mode opt
	for mode in spin irq; do
		opt=()
		[[ $mode == irq ]] && opt=(--irq)
		target "TCP_STREAM mtu9000 10g $mode [Gb/s]" \
			"$(med ours 'd["throughput_mbps"]/1e3' -t TCP_STREAM --mtu 9000 "${opt[@]}")" Gb/s 9.85
		target "TCP_STREAM mtu1500 10g $mode [Gb/s]" \
			"$(med ours 'd["throughput_mbps"]/1e3' -t TCP_STREAM --mtu 1500 "${opt[@]}")" Gb/s 9.35
		target "UDP_STREAM 1472 10g $mode recv [Gb/s]" \
			"$(med ours 'd["recv_mbps"]/1e3' -t UDP_STREAM -m 1472 "${opt[@]}")" Gb/s 9.5
	done
	target "TCP_STREAM mtu9000 irq send SD" \
		"$(med ours 'd["sd_local_us_per_kb"]' -t TCP_STREAM --mtu 9000 --irq)" us/KB 0.073 lower
	echo "   (last irq run: $(json "$tmp/o.json" 'd["throughput_mbps"]/1e3') Gb/s," \
		"local CPU $(json "$tmp/o.json" 'd["cpu_local_s"]') s in" \
		"$(json "$tmp/o.json" 'd["elapsed_s"]') s)"
}

# --- TCP throughput, unlimited link vs the kernel over veth --------------------------------
iperf3_run() { # iperf3 client options; prints the JSON report's path
	ip netns exec $NS2 iperf3 -s -1 -A 0 >/dev/null 2>&1 &
	pids+=($!)
	sleep 0.5
	ip netns exec $NS1 iperf3 -c $IP2 -t "$T" -A 1 -J "$@" >"$tmp/k.json"
	echo "$tmp/k.json"
}
kernel_tcp() { json "$(iperf3_run)" 'd["end"]["sum_received"]["bits_per_second"]/1e6'; }
kernel_udp_pps() {
	json "$(iperf3_run -u -b 0 -l "$1")" \
		'(d["end"]["sum"]["packets"]-d["end"]["sum"]["lost_packets"])/d["end"]["sum"]["seconds"]'
}

section_tcp() {
	need iperf3
	for mtu in 1500 9000; do
		echo "== TCP stream, MTU $mtu: libmyrio (unlimited model link) vs kernel veth (iperf3)"
		local o
		o=$(med ours 'd["throughput_mbps"]' -t TCP_STREAM --mtu "$mtu" --sim link=unlimited,spin)
		netns_up "$mtu"
		summary "TCP_STREAM mtu$mtu unlimited [Mb/s]" "$o" Mb/s "kernel-veth(iperf3)" \
			"$(med kernel_tcp)" 1
	done
}

# --- UDP packet rates vs the kernel over veth ----------------------------------------------
section_udp() {
	need iperf3
	netns_up 1500
	for size in 64 1472; do
		echo "== UDP packet rate, $size-byte datagrams: libmyrio (unlimited) vs kernel veth (iperf3 -u)"
		local o
		o=$(med ours 'd["recv_pps"]' -t UDP_STREAM -m "$size" --sim link=unlimited,spin)
		summary "UDP_STREAM $size recv [pkt/s]" "$o" pkt/s "kernel-veth(iperf3)" \
			"$(med kernel_udp_pps "$size")" 10
	done
}

# --- latency: loopback example vs sockperf ping-pong ---------------------------------------
# sockperf_pp FIELD(1 median, 2 p99.9, 3 trans/s) WHERE(lo|veth) sockperf-options...
sockperf_pp() {
	local field=$1 where=$2; shift 2
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
	python3 - "$tmp/sp.txt" "$field" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", t)
vals = [re.search(r"percentile 50.000 =\s*([\d.]+)", t).group(1),
        re.search(r"percentile 99.900 =\s*([\d.]+)", t).group(1),
        int(m.group(2)) / float(m.group(1))]
print(vals[int(sys.argv[2]) - 1])
PY
}

# loopback FIELD(1 median, 2 p99.9): latency_loopback's UDP round trip, 10 Gb/s model link
loopback() {
	"$B/latency_loopback" -n 200000 -s 32 >"$tmp/l.txt"
	python3 - "$tmp/l.txt" "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read().split("TCP ")[0]
m = re.search(r"median ([\d.]+) us .*p99.9 ([\d.]+) us", t)
print(m.group(int(sys.argv[2])))
PY
}

section_latency() {
	need sockperf
	echo "== UDP round trip, 32 bytes: latency_loopback (model, 10 Gb/s link) vs kernel" \
		"(sockperf ping-pong)"
	local med p999
	med=$(med loopback 1)
	p999=$(med loopback 2)
	summary "UDP RTT median vs loopback [us]" "$med" us "kernel-lo(sockperf)" \
		"$(med sockperf_pp 1 lo -m 32)" 10 lower
	summary "UDP RTT p99.9 vs loopback [us]" "$p999" us "kernel-lo(sockperf)" \
		"$(med sockperf_pp 2 lo -m 32)" 5 lower
	netns_up 1500
	summary "UDP RTT median vs veth [us]" "$med" us "kernel-veth(sockperf)" \
		"$(med sockperf_pp 1 veth -m 32)" "" lower
	summary "UDP RTT p99.9 vs veth [us]" "$p999" us "kernel-veth(sockperf)" \
		"$(med sockperf_pp 2 veth -m 32)" "" lower
}

# --- request/response ----------------------------------------------------------------------
section_rr() {
	need sockperf
	echo "== TCP_RR / UDP_RR 1 byte: myrio-perf (model, 10 Gb/s) vs kernel loopback" \
		"(sockperf ping-pong; 14 bytes, its minimum message)"
	local ktcp kudp
	ktcp=$(med sockperf_pp 3 lo --tcp -m 14)
	kudp=$(med sockperf_pp 3 lo -m 14)
	summary "TCP_RR 1 byte spin [trans/s]" "$(med ours 'd["trans_per_s"]' -t TCP_RR -r 1,1)" \
		trans/s "kernel-lo(sockperf)" "$ktcp" 10
	summary "TCP_RR 1 byte irq [trans/s]" \
		"$(med ours 'd["trans_per_s"]' -t TCP_RR -r 1,1 --irq)" trans/s \
		"kernel-lo(sockperf)" "$ktcp" 10
	summary "UDP_RR 1 byte spin [trans/s]" "$(med ours 'd["trans_per_s"]' -t UDP_RR -r 1,1)" \
		trans/s "kernel-lo(sockperf)" "$kudp"
	summary "UDP_RR 1 byte irq [trans/s]" \
		"$(med ours 'd["trans_per_s"]' -t UDP_RR -r 1,1 --irq)" trans/s \
		"kernel-lo(sockperf)" "$kudp"
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
rawbench_rate() {
	"$B/myrio-rawbench" rate -s "$1" -t "$T" -l unlimited | sed -n 's/.*: \([0-9]*\) frames\/s.*/\1/p'
}

section_raw() {
	if [[ ! -x $B/myrio-rawbench ]]; then
		echo "== raw rates: $B/myrio-rawbench not built: skipped"
		return
	fi
	need dpdk-testpmd
	for size in 60 1514; do
		echo "== raw frames of $size bytes: myrio-rawbench (unlimited model link) vs" \
			"DPDK testpmd flowgen over two memif ports"
		summary "raw $size-byte frames [frames/s]" "$(med rawbench_rate "$size")" frames/s \
			"dpdk-testpmd(memif)" "$(med testpmd_rate "$size")"
	done
}

for s in $sections; do
	"section_$s"
done
echo
echo "== summary"
cat "$SUMMARY_FILE"
