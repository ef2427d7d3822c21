#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libmyrio against fair peers, in the same run on this machine, cost per operation first.
#
#   bench/compare.sh [-b BUILD_DIR] [-t SECONDS] [-n PAIRS] [--quick] [SECTION...]
#   sections: cost model latency rr udp tcp raw (default: all; quick with --quick)
#   -n: A/B pairs per row, interleaved (ours, peer, peer, ours, ...); default 5
#   --timing PROFILE: the model NICs' own timing (none, the default, or myri10ge: PCIe and
#            MAC latencies and the PCIe bandwidth cap, docs/device-model.md "Timing")
#   --quick: 2 pairs of 0.3 s, a target row and peer rows over loopback and veth: checks
#            that the script runs, that its output parses and that two runs at once keep
#            to their own namespaces (tests/sh/bench_compare_quick.sh); no figures. Minutes,
#            not seconds: each run's start-up dominates
#   ROWS_DIR (environment): each peer row's runs (JSON lines) are kept there, numbered
#
# Every row prints both sides' median [min-max] over the pairs, CPU microseconds per
# operation (transaction, frame, or GB) for the application threads, the model's NIC
# thread (pthread_getcpuclockid) and the whole process (getrusage), failed runs (counted,
# never their figures), load and steal, and a verdict: MET only when no run failed and
# every pair clears the target, NOT MET when none does, else INCONCLUSIVE
# (bench/verdict.py). Absolute targets are a fraction of the ceiling computed for the row
# (10 Gb/s model link, MTU framing).
# The cost section first prints instructions per operation (callgrind on the stepped model,
# bench/stack_cost.sh): the driver per packet, TCP_RR per transaction, TCP_STREAM per KB.
#
# Peers, each on the terms it is best at: the kernel both blocking and busy-polled
# (sockperf, and sockperf --nonblocked with SO_BUSY_POLL) over loopback and veth for round
# trips; a batching sendmmsg/recvmmsg program (bench/udp_mmsg.c) for UDP rates; for TCP,
# iperf3 (copies both ends) against myrio-perf --copy (myrio_tcp_write/myrio_tcp_read) and
# iperf3 -Z against TCP_SENDFILE, over veth with offloads (GSO/GRO/TSO) on and off; DPDK testpmd for raw
# frames when installed (bench/deps.sh). libmyrio runs on the in-process model; its model
# thread is the NIC (CPU 0), the application on CPU 1, as the kernel's server (CPU 0) and
# client (CPU 1). Needs root for namespaces. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
N=5
TIMING=none
quick=
args=()
while (($#)); do
	case $1 in
	-b) B=$2; shift 2 ;;
	-t) T=$2; shift 2 ;;
	-n) N=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--timing) TIMING=$2; shift 2 ;;
	-*) echo "usage: bench/compare.sh [-b BUILD] [-t SECONDS] [-n PAIRS] [--quick] [--timing P]" \
		"[cost model latency rr udp tcp raw]" >&2
	    exit 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
source bench/lib.sh
if [[ -n $quick ]]; then
	T=0.3 N=2
	((${#args[@]})) || args=(quick)
fi
sections=${args[*]:-cost model latency rr udp tcp raw}
tmp=$(mktemp -d)
SUMMARY_FILE=$tmp/summary
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	netns_down
	busy_poll_end
	rm -rf "$tmp"
}
trap cleanup EXIT
for p in myrio-perf latency_loopback; do
	[[ -x $B/$p ]] || { echo "build first: $B/$p not found" >&2; exit 1; }
done
echo "bench: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"${T} s per run, $N interleaved pairs per row, model timing: $TIMING"

# with_timing ARGS...: the arguments with the model's timing added to their --sim spec (the
# programs' default spec, spin, when they have none)
with_timing() {
	local out=() sim=
	while (($#)); do
		if [[ $1 == --sim ]]; then sim=$2; shift 2; else out+=("$1"); shift; fi
	done
	printf '%s\0' "${out[@]}" --sim "${sim:-spin},timing=$TIMING"
}

# record SIDE CMD...: runs CMD (which prints one JSON run: value, ops, cpu_*), adds the
# side, the load and the steal % over the run, and appends it to the row's file. A failed
# command, or one without a figure, is recorded as a failure.
record() {
	local side=$1; shift
	local s0 s1 out
	s0=$(steal_ticks)
	out=$("$@" 2>"$tmp/err") || out='{"ok": false}'
	s1=$(steal_ticks)
	python3 - "$side" "$out" "$s0" "$s1" "$(cut -d' ' -f1 /proc/loadavg)" "$tmp/err" \
		>>"$tmp/row" <<'PY'
import json, sys
side, out, s0, s1, load = sys.argv[1:6]
try:
    r = json.loads(out)
except ValueError:
    r = {"ok": False}
r.setdefault("ok", r.get("value") is not None)
if not r["ok"]:
    err = [l for l in open(sys.argv[6]).read().splitlines() if l.strip()]
    why = [l for l in err if "fail" in l or "rror" in l] or err  # not a last warning
    r["error"] = why[-1][:160] if why else "no figure"
(st0, tot0), (st1, tot1) = [map(int, x.split()) for x in (s0, s1)]
r.update(side=side, load=float(load), steal_pct=100.0 * (st1 - st0) / max(1, tot1 - tot0))
print(json.dumps(r))
PY
}

# row NAME UNIT PER_OP LOWER PEER_NAME TARGET OURS_FN PEER_FN [CPU_FIELD CPU_TARGET]:
# N interleaved pairs. With CPU_FIELD (cpu_app_s or cpu_proc_s) the same runs make a second
# row: operations per CPU-second of that field, both sides, against CPU_TARGET.
row() {
	local name=$1 unit=$2 per=$3 lower=$4 peer_name=$5 goal=$6 ours_fn=$7 peer_fn=$8 i
	local cpu_field=${9:-} cpu_goal=${10:-}
	: >"$tmp/row"
	for ((i = 0; i < N; i++)); do
		if ((i % 2)); then
			record peer $peer_fn; record ours $ours_fn
		else
			record ours $ours_fn; record peer $peer_fn
		fi
	done
	# pairs are matched by order within each side
	python3 bench/verdict.py "$tmp/row" "$name" "$unit" "$per" "$lower" "$peer_name" "$goal" |
		tee -a "$SUMMARY_FILE"
	keep_row "$name"
	[[ -n $cpu_field ]] || return 0
	python3 bench/per_cpu.py "$cpu_field" <"$tmp/row" >"$tmp/row_cpu"
	local who=${cpu_field#cpu_}
	python3 bench/verdict.py "$tmp/row_cpu" "${name% \[*} per ${who%_s} CPU-second" \
		"$per/CPU-s" "$per" 0 "$peer_name" "$cpu_goal" | tee -a "$SUMMARY_FILE"
}

# keep_row NAME: with ROWS_DIR set, the row's runs (JSON lines) are kept there, for checks
keep_row() {
	[[ -z ${ROWS_DIR:-} ]] || cp "$tmp/row" "$ROWS_DIR/$(grep -c '^SUMMARY' "$SUMMARY_FILE").json"
}

# target_row NAME UNIT PER_OP LOWER FRACTION CEILING OURS_FN: ours against a fraction of
# the computed ceiling
target_row() {
	local name=$1 unit=$2 per=$3 lower=$4 frac=$5 ceil=$6 ours_fn=$7 i
	: >"$tmp/row"
	for ((i = 0; i < N; i++)); do record ours $ours_fn; done
	python3 bench/verdict.py "$tmp/row" "$name" "$unit" "$per" "$lower" - "$frac" "$ceil" |
		tee -a "$SUMMARY_FILE"
}

# perf EXPR_VALUE EXPR_OPS myrio-perf-options...: one myrio-perf run as a JSON run
perf() {
	local v=$1 ops=$2; shift 2
	local args
	mapfile -d '' args < <(with_timing "$@")
	"$B/myrio-perf" -q -l "$T" --json "${args[@]}" >"$tmp/o.json" || return 1
	python3 - "$tmp/o.json" "$v" "$ops" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps({"value": v, "ops": eval(sys.argv[3]),
                  "cpu_app_s": d["cpu_local_s"] + d["cpu_remote_s"],
                  "cpu_nic_s": d["cpu_model_s"], "cpu_proc_s": d["cpu_process_s"],
                  "ok": v is not None and (d["bytes_received"] > 0 or d["transactions"] > 0)}))
PY
}

# ceiling_gbps MTU: TCP payload rate of a 10 Gb/s link (timestamps on; preamble, FCS, gap)
ceiling_gbps() { echo "scale=4; 10 * ($1 - 52) / ($1 + 38)" | bc; }

# --- the 10 Gb/s model link: absolute targets as fractions of the ceiling ------------------
st9000() { perf 'd["throughput_mbps"]/1e3' 'd["bytes_received"]/1e9' -t TCP_STREAM --mtu 9000 "$@"; }
st1500() { perf 'd["throughput_mbps"]/1e3' 'd["bytes_received"]/1e9' -t TCP_STREAM --mtu 1500 "$@"; }
# service demand at a coalescing of $1 us: a run where another value took effect has no figure
sd() {
	perf 'd["sd_local_us_per_kb"] if d["coalescing_us"] == '"$1"' else None' \
		'd["bytes_received"]/1e9' -t TCP_STREAM --mtu 9000 --irq --coal "$1"
}
sd75() { sd 75; }
sd200() { sd 200; }
section_model() {
	echo "== model link 10 Gb/s, busy polling; service demand sleeping on interrupts" \
		"coalesced 75 us (Linux myri10ge's default) and 200 us"
	target_row "TCP_STREAM mtu9000 spin [Gb/s]" Gb/s GB 0 0.995 "$(ceiling_gbps 9000)" st9000
	target_row "TCP_STREAM mtu1500 spin [Gb/s]" Gb/s GB 0 0.993 "$(ceiling_gbps 1500)" st1500
	# 0.073 us/KB: the published Myri-10G send service demand, stated against 1 us/KB
	target_row "TCP_STREAM mtu9000 irq coal 75us send SD [us/KB]" us/KB GB 1 0.073 1 sd75
	target_row "TCP_STREAM mtu9000 irq coal 200us send SD [us/KB]" us/KB GB 1 0.073 1 sd200
}

# --- round trips: latency_loopback vs sockperf, blocking and busy-polled ------------------
# sockperf_run FIELD(med|p999|tps) WHERE(lo|veth) sockperf-options...: one ping-pong
sockperf_run() {
	local field=$1 where=$2; shift 2
	command -v sockperf >/dev/null || return 1
	# loopback: the run's own namespace's, so that runs at once share no ports
	local sns=$NS1 ip=127.0.0.1
	[[ $where == veth ]] && sns=$NS2 ip=$IP2
	local cli=(ip netns exec $NS1 taskset -c "$LAST_CPU" sockperf pp)
	local port=$((12000 + RANDOM % 1000))
	ip netns exec $sns taskset -c 0 sockperf sr -i $ip -p $port "$@" >/dev/null 2>&1 &
	local spid=$!
	pids+=($spid)
	wait_listen $sns $port
	local secs=${T%.*} # sockperf takes whole seconds
	((secs >= 1)) || secs=1
	/usr/bin/time -f "%U %S" -o "$tmp/time" "${cli[@]}" -i $ip -p $port -t "$secs" \
		--full-rtt "$@" >"$tmp/sp.txt" 2>&1 &
	local tpid=$! cpid= c0= s1= w0= w1=
	# CPU over the measured window only (from "Starting test", after the warm-up, to "Test
	# end"), not start-up nor the server spinning before the client: the server's read at
	# both ends, the client's at the start and from time(1) at its exit (an exited
	# process's /proc entry no longer holds it)
	while kill -0 $tpid 2>/dev/null; do
		[[ -n $cpid ]] || cpid=$(pgrep -P $tpid sockperf || true)
		if [[ -z $w0 && -n $cpid ]] && grep -q 'Starting test' "$tmp/sp.txt"; then
			c0=$(echo "$(cpu_of $spid) + $(cpu_of $cpid)" | bc) w0=$(date +%s.%N)
		elif [[ -n $w0 ]] && grep -q 'Test end' "$tmp/sp.txt"; then
			s1=$(cpu_of $spid) w1=$(date +%s.%N)
			break
		fi
		sleep 0.01
	done
	# a client that ended between two looks: the server's end read now, a look later
	[[ -z $w0 || -n $w1 ]] || s1=$(cpu_of $spid) w1=$(date +%s.%N)
	wait $tpid || true
	kill $spid 2>/dev/null || true
	[[ -n $w1 ]] || return 1
	local c1
	c1=$(echo "$s1 + $(awk '{print $1+$2}' "$tmp/time")" | bc)
	python3 - "$tmp/sp.txt" "$field" "$c0" "$c1" "$w0" "$w1" <<'PY'
import json, re, sys
t, field = open(sys.argv[1]).read(), sys.argv[2]
c0, c1, w0, w1 = map(float, sys.argv[3:7])
m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", t)
med = re.search(r"percentile 50.000 =\s*([\d.]+)", t)
p999 = re.search(r"percentile 99.900 =\s*([\d.]+)", t)
if not (m and med and p999) or w1 <= w0:
    print('{"ok": false}'); sys.exit()
n, secs = int(m.group(2)), float(m.group(1))
v = {"med": float(med.group(1)), "p999": float(p999.group(1)), "tps": n / secs}[field]
# the window's CPU rate over sockperf's valid duration (which lies within the window)
cpu = (c1 - c0) / (w1 - w0) * secs
print(json.dumps({"value": v, "ops": n, "secs": secs, "cpu_app_s": cpu, "cpu_nic_s": None,
                  "cpu_proc_s": cpu}))
PY
}
# loopback FIELD(1 median, 2 p99.9): latency_loopback's UDP round trip, 10 Gb/s model link,
# for -t seconds (a tenth more of warm-up; its TCP test after it as long again); CPU:
# latency_loopback's thread (both stacks), the model's thread, the process
loopback() {
	"$B/latency_loopback" -n 200000 -d "$(echo "$T * 1000 / 1" | bc)" -s 32 \
		--sim "spin,timing=$TIMING" >"$tmp/l.txt" || return 1
	python3 - "$tmp/l.txt" "$1" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read().split("TCP ")[0]
m = re.search(r"round trips: (\d+)\n.*median ([\d.]+) us .*p99.9 ([\d.]+) us", t)
c = re.search(r"cpu: thread ([\d.]+) s  model ([\d.]+|n/a)(?: s)?  process ([\d.]+) s  over "
              r"([\d.]+) s", t)
if not (m and c):
    print('{"ok": false}'); sys.exit()
print(json.dumps({"value": float(m.group(1 + int(sys.argv[2]))), "ops": int(m.group(1)),
                  "secs": float(c.group(4)), "cpu_app_s": float(c.group(1)),
                  "cpu_nic_s": None if c.group(2) == "n/a" else float(c.group(2)),
                  "cpu_proc_s": float(c.group(3))}))
PY
}
lb_med() { loopback 1; }
lb_p999() { loopback 2; }
# busy polling in the kernel: sockperf spinning on non-blocking sockets, and the
# sysctls that give every socket SO_BUSY_POLL (50 us), set for the run only
sp_busy() {
	local rc=0
	busy_poll_begin
	sockperf_run "$@" --nonblocked || rc=$?
	busy_poll_end
	return $rc
}
sp_lo_med() { sockperf_run med lo -m 32; }
sp_lo_med_busy() { sp_busy med lo -m 32; }
sp_lo_p999() { sockperf_run p999 lo -m 32; }
sp_lo_p999_busy() { sp_busy p999 lo -m 32; }
sp_veth_med_busy() { sp_busy med veth -m 32; }
sp_veth_p999_busy() { sp_busy p999 veth -m 32; }
section_latency() {
	echo "== UDP round trip, 32 bytes: latency_loopback (model, 10 Gb/s) vs kernel sockperf"
	row "UDP RTT median vs lo blocking [us]" us trans 1 sockperf-lo 1 lb_med sp_lo_med
	row "UDP RTT median vs lo busy-poll [us]" us trans 1 sockperf-lo-busy 1 lb_med sp_lo_med_busy
	row "UDP RTT p99.9 vs lo blocking [us]" us trans 1 sockperf-lo 1 lb_p999 sp_lo_p999
	row "UDP RTT p99.9 vs lo busy-poll [us]" us trans 1 sockperf-lo-busy 1 lb_p999 sp_lo_p999_busy
	netns_up 1500
	row "UDP RTT median vs veth busy-poll [us]" us trans 1 sockperf-veth-busy 1 lb_med \
		sp_veth_med_busy
	row "UDP RTT p99.9 vs veth busy-poll [us]" us trans 1 sockperf-veth-busy 1 lb_p999 \
		sp_veth_p999_busy
}

# --- request/response: trans/s and CPU per transaction -------------------------------------
tcp_rr() { perf 'd["trans_per_s"]' 'd["transactions"]' -t TCP_RR -r 1,1; }
udp_rr() { perf 'd["trans_per_s"]' 'd["transactions"]' -t UDP_RR -r 1,1; }
sp_tcp_rr() { sockperf_run tps lo --tcp -m 14; }
sp_tcp_rr_busy() { sp_busy tps lo --tcp -m 14; }
sp_udp_rr_busy() { sp_busy tps lo -m 14; }
section_rr() {
	echo "== TCP_RR / UDP_RR, 1 byte (sockperf: 14 bytes, its minimum): myrio-perf (model," \
		"10 Gb/s) vs kernel loopback"
	row "TCP_RR vs lo blocking [trans/s]" trans/s trans 0 sockperf-lo 1 tcp_rr sp_tcp_rr
	row "TCP_RR vs lo busy-poll [trans/s]" trans/s trans 0 sockperf-lo-busy 1 tcp_rr sp_tcp_rr_busy
	row "UDP_RR vs lo busy-poll [trans/s]" trans/s trans 0 sockperf-lo-busy 1 udp_rr sp_udp_rr_busy
}

# --- UDP datagram rates: the batching kernel peer -----------------------------------------
# mmsg_run SIZE: udp_mmsg over veth; frames/s at the receiver, CPU of both processes
mmsg_run() {
	[[ -x $B/udp_mmsg ]] || return 1
	local port=$((13000 + RANDOM % 1000))
	ip netns exec $NS2 taskset -c 0 "$B/udp_mmsg" recv $port "$T" >"$tmp/mr.json" &
	local rpid=$!
	wait_listen $NS2 $port
	ip netns exec $NS1 taskset -c "$LAST_CPU" "$B/udp_mmsg" send $IP2 $port "$1" "$T" \
		>"$tmp/ms.json" || return 1
	wait $rpid || return 1
	python3 - "$tmp/mr.json" "$tmp/ms.json" <<'PY'
import json, sys
r, s = (json.load(open(f)) for f in sys.argv[1:])
print(json.dumps({"value": r["datagrams"] / r["seconds"], "ops": r["datagrams"],
                  "cpu_app_s": r["cpu_s"] + s["cpu_s"], "cpu_nic_s": None,
                  "cpu_proc_s": r["cpu_s"] + s["cpu_s"]}))
PY
}
# udp_stream SIZE OPTIONS...: datagrams received per second, unlimited model link
udp_stream() {
	local m=$1; shift
	perf 'd["recv_pps"]' 'd["messages_received"]' -t UDP_STREAM -m "$m" "$@"
}
udp64() { udp_stream 64 --sim link=unlimited,spin; }
udp1472() { udp_stream 1472 --sim link=unlimited,spin; }
# as the kernel's processes do: the program sleeps on the NICs' interrupts and the model's
# thread sleeps when its rings are idle, so the process's CPU is the work's
udp64_irq() { udp_stream 64 --irq --sim link=unlimited; }
udp1472_irq() { udp_stream 1472 --irq --sim link=unlimited; }
# the stepped model driven from the application's thread, the model's steps apart: both
# stacks' and drivers' CPU per datagram with every burst full (myrio-perf's busy polls)
udp_saturated() {
	perf 'd["messages_received"] / (d["cpu_local_s"] + d["cpu_remote_s"])' \
		'd["messages_received"]' -t UDP_STREAM -m "$1" --sim stepped,link=unlimited
}
udp64_step() { udp_saturated 64; }
udp1472_step() { udp_saturated 1472; }
mmsg64() { mmsg_run 64; }
mmsg1472() { mmsg_run 1472; }
mmsg64_cpu() { mmsg_run 64 | python3 bench/per_cpu.py cpu_proc_s; }
mmsg1472_cpu() { mmsg_run 1472 | python3 bench/per_cpu.py cpu_proc_s; }
section_udp() {
	netns_up 1500
	echo "== UDP datagrams received per second: myrio-perf (unlimited model link) vs" \
		"udp_mmsg (sendmmsg/recvmmsg, 64 per call) over veth"
	echo "   per process CPU-second: myrio-perf --irq with the model's thread sleeping when" \
		"idle (both processes of the kernel's side sleep when idle), the model's CPU counted;" \
		"saturated: the stepped model driven from myrio-perf's thread, its steps apart (then" \
		"with them), against the kernel's frames per process CPU-second"
	local s
	for s in 64 1472; do
		row "UDP $s-byte datagrams, busy polling [pkt/s]" pkt/s frame 0 kernel-mmsg 1 \
			"udp$s" "mmsg$s"
		row "UDP $s-byte datagrams, sleeping when idle [pkt/s]" pkt/s frame 0 kernel-mmsg 1 \
			"udp${s}_irq" "mmsg$s" cpu_proc_s 1
		row "UDP $s-byte datagrams, application saturated [frames/app CPU-s]" \
			frames/CPU-s frame 0 kernel-mmsg 1 "udp${s}_step" "mmsg${s}_cpu" cpu_proc_s -
	done
}

# --- TCP streams: iperf3 (copies) and iperf3 -Z (sendfile) over veth, offloads on/off -----
iperf3_run() { # iperf3 client options; prints a JSON run (Mb/s, GB, CPU of both ends)
	need iperf3
	local port=$((14000 + RANDOM % 1000))
	ip netns exec $NS2 taskset -c 0 iperf3 -s -1 -p $port >/dev/null 2>&1 &
	local spid=$!
	pids+=($spid)
	wait_listen $NS2 $port
	ip netns exec $NS1 taskset -c "$LAST_CPU" iperf3 -c $IP2 -p $port -t "$T" -J "$@" \
		>"$tmp/k.json" || return 1
	wait $spid 2>/dev/null || true
	python3 - "$tmp/k.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["end"]
cpu = d["cpu_utilization_percent"]
secs = d["sum_received"]["seconds"]
both = (cpu["host_total"] + cpu["remote_total"]) / 100 * secs
print(json.dumps({"value": d["sum_received"]["bits_per_second"] / 1e6,
                  "ops": d["sum_received"]["bytes"] / 1e9, "cpu_app_s": both,
                  "cpu_nic_s": None, "cpu_proc_s": both}))
PY
}
offloads() { # on|off, both veth ends
	local v=$1
	ip netns exec $NS1 ethtool -K veth-mb-a gso $v gro $v tso $v >/dev/null 2>&1 || true
	ip netns exec $NS2 ethtool -K veth-mb-b gso $v gro $v tso $v >/dev/null 2>&1 || true
}
tcp_copy() { perf 'd["throughput_mbps"]' 'd["bytes_received"]/1e9' -t TCP_STREAM --copy --mtu "$MTU" --sim link=unlimited,spin; }
tcp_sendfile() { perf 'd["throughput_mbps"]' 'd["bytes_received"]/1e9' -t TCP_SENDFILE --mtu "$MTU" --sim link=unlimited,spin; }
k_copy() { iperf3_run; }
k_zero() { iperf3_run -Z; }
section_tcp() {
	for MTU in 1500 9000; do
		netns_up "$MTU"
		for off in on off; do
			offloads $off
			echo "== TCP stream, MTU $MTU, veth offloads $off: myrio-perf (unlimited model" \
				"link) vs iperf3"
			row "TCP_STREAM --copy mtu$MTU vs iperf3 offloads $off [Mb/s]" Mb/s GB 0 \
				"iperf3-$off" 1 tcp_copy k_copy
			row "TCP_SENDFILE mtu$MTU vs iperf3 -Z offloads $off [Mb/s]" Mb/s GB 0 \
				"iperf3-Z-$off" 1 tcp_sendfile k_zero
		done
	done
}

# --- raw frames: myrio-rawbench vs DPDK testpmd --------------------------------------------
# testpmd_rate SIZE: DPDK testpmd, flowgen on two memif ports joined to each other, one
# forwarding lcore per port (two workers: as many cores as libmyrio's model and
# application threads), the main lcore on CPU 0 beside a worker. Frames/s is the sum of
# both ports' Rx-pps over the measured window; CPU is the whole process's, read from
# /proc over the same window (initialisation not counted).
testpmd_rate() {
	command -v dpdk-testpmd >/dev/null || return 1
	local sock=$tmp/memif.sock pid c0 c1 w0 w1 n0 w
	dpdk-testpmd --no-huge -m 512 --no-pci --lcores="0@0,1@0,2@$LAST_CPU" \
		--file-prefix="myrio-bench$RUN_ID" --vdev=net_memif0,role=server,socket="$sock" \
		--vdev=net_memif1,role=client,socket="$sock" -- --nb-cores=2 \
		--total-num-mbufs=16384 --forward-mode=flowgen --txpkts="$1" --stats-period=1 \
		--auto-start >"$tmp/pmd.txt" 2>&1 &
	pid=$!
	pids+=($pid)
	# forwarding has begun when the first statistics are printed (on a loaded machine the
	# set-up alone can take tens of seconds); then one period more
	w=$((SECONDS + 60))
	while ((SECONDS < w)); do
		grep -q 'Rx-pps' "$tmp/pmd.txt" 2>/dev/null && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	sleep 1
	c0=$(cpu_of $pid) w0=$(date +%s.%N) n0=$(grep -c 'Rx-pps' "$tmp/pmd.txt" || true)
	sleep "$T"
	c1=$(cpu_of $pid) w1=$(date +%s.%N)
	kill -INT $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	python3 - "$tmp/pmd.txt" "$c0" "$c1" "$w0" "$w1" "$n0" <<'PY'
import json, re, sys
rx = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", open(sys.argv[1]).read())]
c0, c1, w0, w1 = map(float, sys.argv[2:6])
rx = rx[int(sys.argv[6]):]  # the window's prints, two per period (one per port)
pps = [a + b for a, b in zip(rx[0::2], rx[1::2])]
if not pps or c1 <= c0:
    print('{"ok": false}'); sys.exit()
v = sorted(pps)[len(pps) // 2]
print(json.dumps({"value": v, "ops": v * (w1 - w0), "cpu_app_s": c1 - c0,
                  "cpu_nic_s": None, "cpu_proc_s": c1 - c0}))
PY
}
# rawbench_rate SIZE: frames/s over the measured window; CPU: the application thread's
# polls that moved frames (app), the model thread (nic), the process
rawbench_rate() {
	[[ -x $B/myrio-rawbench ]] || return 1
	"$B/myrio-rawbench" rate -s "$1" -t "$T" -l unlimited -m "$TIMING" >"$tmp/raw.txt" || return 1
	python3 - "$tmp/raw.txt" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read()
r = re.search(r": (\d+) frames/s .* over ([\d.]+) s", t)
c = re.search(r"cpu: process ([\d.]+) s \(model thread ([\d.]+) s\)", t)
a = re.search(r"polls that moved frames [\d.]+% of the run: ([\d.]+) s", t)
if not (r and c and a):
    print('{"ok": false}'); sys.exit()
fps, secs, proc, nic = int(r.group(1)), float(r.group(2)), float(c.group(1)), float(c.group(2))
print(json.dumps({"value": fps, "ops": fps * secs, "cpu_app_s": float(a.group(1)),
                  "cpu_nic_s": nic, "cpu_proc_s": proc}))
PY
}
# rawbench_step SIZE: the stepped model driven from the application's thread, so the
# application is never waiting for the NIC: frames per application CPU-second; CPU: the
# application's rounds (app), the model's steps (nic), the thread (process)
rawbench_step() {
	[[ -x $B/myrio-rawbench ]] || return 1
	local n
	n=$(python3 -c "print(int(max(2e5, $T * 2e6)))") # about a second of CPU per second of -t
	"$B/myrio-rawbench" step -s "$1" -n "$n" -m "$TIMING" >"$tmp/step.txt" || return 1
	python3 - "$tmp/step.txt" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read()
n = re.search(r"sent, (\d+) received", t)
c = re.search(r"step cpu: thread ([\d.]+) s, application ([\d.]+) ns per frame, model "
              r"([\d.]+) ns per frame", t)
if not (n and c) or float(c.group(2)) <= 0:
    print('{"ok": false}'); sys.exit()
rx, cpu, app, nic = int(n.group(1)), float(c.group(1)), float(c.group(2)), float(c.group(3))
print(json.dumps({"value": 1e9 / app, "ops": rx, "cpu_app_s": app * rx / 1e9,
                  "cpu_nic_s": nic * rx / 1e9, "cpu_proc_s": cpu}))
PY
}
raw60() { rawbench_rate 60; }
raw1514() { rawbench_rate 1514; }
step60() { rawbench_step 60; }
step1514() { rawbench_step 1514; }
pmd60() { testpmd_rate 60; }
pmd1514() { testpmd_rate 1514; }
pmd60_cpu() { testpmd_rate 60 | python3 bench/per_cpu.py cpu_proc_s; }
pmd1514_cpu() { testpmd_rate 1514 | python3 bench/per_cpu.py cpu_proc_s; }
section_raw() {
	if ! command -v dpdk-testpmd >/dev/null; then
		echo "== raw frames: SKIPPED, dpdk-testpmd not installed (Debian packages dpdk-dev" \
			"and librte-net-memif23: bench/deps.sh)"
		return 0
	fi
	echo "== raw frames: myrio-rawbench (unlimited model link) vs DPDK testpmd flowgen over" \
		"two memif ports, two worker cores each; frames per CPU-second = 1e6 / CPU-us/frame"
	echo "   rate rows: ours counts the application's polls that moved frames (not those" \
		"waiting for the model's thread); testpmd's lcores never wait (flowgen makes frames" \
		"every poll): its whole process"
	echo "   saturated rows: ours on the stepped model driven from the application's" \
		"thread (every burst full, the model's steps apart; then with them), against the" \
		"same testpmd runs' frames per process CPU-second"
	local s
	for s in 60 1514; do
		row "raw $s-byte frames [frames/s]" frames/s frame 0 testpmd-memif - "raw$s" \
			"pmd$s" cpu_app_s 1
		row "raw $s-byte frames, application saturated [frames/app CPU-s]" frames/CPU-s \
			frame 0 testpmd-memif 1 "step$s" "pmd${s}_cpu" cpu_proc_s -
	done
}

# --- instructions per operation: deterministic, whatever the load ---------------------------
section_cost() {
	echo "== instructions per operation (callgrind, stepped model; bench/stack_cost.sh)"
	bench/stack_cost.sh "$B" 1
}

# --quick: one absolute-target row, one against a peer on loopback, and one against a peer
# over veth with its CPU-second row (the run's namespaces in use until its end)
section_quick() {
	echo "== quick: the script's machinery, not a measurement"
	target_row "TCP_STREAM mtu1500 spin [Gb/s]" Gb/s GB 0 0.993 "$(ceiling_gbps 1500)" st1500
	row "UDP_RR vs lo busy-poll [trans/s]" trans/s trans 0 sockperf-lo-busy 1 udp_rr sp_udp_rr_busy
	row "UDP 64-byte datagrams, sleeping when idle [pkt/s]" pkt/s frame 0 kernel-mmsg 1 \
		udp64_irq mmsg64 cpu_proc_s 1
}

netns_up 1500 # loopback peers run in the run's own namespace too
for s in $sections; do
	"section_$s"
done
echo
echo "== summary (MET only when no run failed and every pair clears the target; NOT MET" \
	"when none does; INCONCLUSIVE otherwise)"
grep '^SUMMARY' "$SUMMARY_FILE" || true
