#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Unmodified programs through libmyrio-preload.so against the same programs on the kernel
# (veth between two namespaces) and against libmyrio's own tools on the same link, in one
# run: iperf3 and nuttcp throughput, sockperf UDP 32-byte round trips.
#   preload:   two processes on the two cabled NICs of one myrio-simd daemon
#   own tools: myrio-perf --copy (TCP_STREAM copying, as socket programs do) and
#              latency_loopback, on the same daemon's NICs
#   "NIC core" rows: sockperf and latency_loopback on a daemon of their own whose model
#              thread never sleeps and has CPU 0 (as a NIC's own processor), the
#              programs on the other CPUs; started for those runs only
#   placement rows: sockperf on a daemon of its own, the daemon and each program pinned
#              (taskset) as the row says: one CPU for all, the model apart, a CPU each
#   kernel:    the same programs over veth (offloads on); "busy" rows: sockperf
#              --nonblocked (both ends poll), each end on its own CPU
#   shm rows:  sockperf with both ends preloaded on a model NIC of their own
#              (MYRIO_DEVICE=sim+shm:NAME/0 and /1, MYRIO_SPIN=1), cabled through shared
#              memory, each end on its own CPU: no daemon, no wake-up (UDP and TCP)
#
#   bench/preload_compare.sh [-b BUILD_DIR] [-t SECONDS] [-n ROUNDS] [-v] [MEASUREMENT...]
#   -v: each run's JSON line on stderr as it ends, with its wall time
#   MEASUREMENT: run only these (names below), and the rows they make
#
# Every measurement runs once per round, the rounds interleaved (the order reversed every
# other round), default 3 rounds of 3 s. Each row prints both sides' median [min-max], the
# CPU per operation (GB or round trip) of the application (both processes) and of the NIC
# model (the daemon's CPU over the run; none for the kernel, whose network work is in the
# processes' system time), and bench/verdict.py's verdict: MET or NOT MET only when every
# round is on the same side of the target, else INCONCLUSIVE.
# Targets (docs/preload.md): preload throughput >= 90% of myrio-perf's; preload sockperf
# median within 2x of latency_loopback's; both ahead of the kernel's. Needs root.
set -uo pipefail
cd "$(dirname "$0")/.."
N=3
verbose=
only=()
while (($#)); do
	case $1 in
	-b) B=$2; shift 2 ;;
	-t) T=$2; shift 2 ;;
	-n) N=$2; shift 2 ;;
	-v) verbose=1; shift ;;
	-*) echo "usage: bench/preload_compare.sh [-b BUILD] [-t SECONDS] [-n ROUNDS] [-v]" \
		"[MEASUREMENT...]" >&2
	    exit 2 ;;
	*) only+=("$1"); shift ;;
	esac
done
T=${T:-3}
source bench/lib.sh
NS1=myrio-pl-a$$ NS2=myrio-pl-b$$ # its own: another benchmark at the same time uses lib.sh's
[[ $(id -u) -eq 0 ]] || { echo "needs root (namespaces)"; exit 1; }
for p in iperf3 nuttcp sockperf python3; do need $p; done
tmp=$(mktemp -d)
pids=()
cleanup() {
	[[ -n ${niccore:-} ]] && kill "$niccore" 2>/dev/null # a spinning daemon must not outlive us
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	netns_down
	rm -rf "$tmp" /dev/shm/myrio-shm-plc$$.*
}
trap cleanup EXIT
secs=${T%.*}
((secs >= 1)) || secs=1

"$B/myrio-simd" --socket "$tmp/s" >"$tmp/simd.log" 2>&1 &
simd=$!
pids+=($simd)
for _ in $(seq 100); do [[ -S $tmp/s ]] && break; sleep 0.1; done
A="$B/myrio-run --device simd:nic0@$tmp/s --ip 10.0.0.1/24 --"
Z="$B/myrio-run --device simd:nic1@$tmp/s --ip 10.0.0.2/24 --"
A2="$B/myrio-run --device simd:nic0@$tmp/s2 --ip 10.0.0.1/24 --" # the "NIC core" daemon's
Z2="$B/myrio-run --device simd:nic1@$tmp/s2 --ip 10.0.0.2/24 --"
netns_up 1500
K1="ip netns exec $NS1"
K2="ip netns exec $NS2"

timed() { /usr/bin/time -f "%U %S" -o "$1" "${@:2}"; } # timed FILE CMD...: CPU to FILE
cpu_file() { tail -1 "$1" 2>/dev/null | awk 'NF == 2 { print $1 + $2; ok = 1 } END { if (!ok) print 0 }'; }
# stop PID [SIGNAL]: ends a server started under timed (the program is the child of time)
stop() {
	local c
	for c in $(pgrep -P "$1"); do kill -"${2:-TERM}" "$c" 2>/dev/null; done
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	for c in $(pgrep -P "$1"); do kill "$c" 2>/dev/null; done
	wait "$1" 2>/dev/null
}
# The "NIC core" daemon: its model thread never sleeps and has CPU 0, as a NIC's processor
# works beside the host's; the programs get the other CPUs. Up only for its runs: it burns
# CPU 0 while it runs. The placement rows start a daemon of their own the same way, on the
# CPUs and with the spin they name.
APP_CPUS=$((LAST_CPU > 0 ? 1 : 0))-$LAST_CPU
niccore=
# niccore_up [CPUS [SPIN]]: default CPU 0, spinning. SPIN: spin, sleep, or a number of
# microseconds the model thread polls after its last work before it sleeps (idle_spin_us)
niccore_up() {
	local spin=(--spin)
	[[ ${2:-spin} == sleep ]] && spin=()
	[[ ${2:-} == [0-9]* ]] && spin=(--model "idle_spin_us=$2")
	rm -f "$tmp/s2"
	taskset -c "${1:-0}" "$B/myrio-simd" "${spin[@]}" --socket "$tmp/s2" >"$tmp/simd2.log" 2>&1 &
	niccore=$!
	for _ in $(seq 100); do [[ -S $tmp/s2 ]] && return 0; sleep 0.1; done
	niccore_down
	return 1
}
niccore_down() {
	kill "$niccore" 2>/dev/null
	wait "$niccore" 2>/dev/null
	niccore=
}
# emit VALUE OPS APP_CPU NIC_CPU [ALL SLEEPS EMPTY]: one run as JSON ("-": a failed run, or
# not measured); SLEEPS and EMPTY: the preload's counts of both processes over the whole run
# (MYRIO_PRELOAD_COUNTS), ALL: the round trips of the whole run (warm-up included)
emit() {
	awk -v v="$1" -v ops="$2" -v app="$3" -v nic="$4" -v all="${5:-0}" -v sl="${6:--}" \
		-v em="${7:--}" 'BEGIN {
		ok = v != "-" && v != "" && ops + 0 > 0
		printf "{\"ok\": %s, \"value\": %s, \"ops\": %s, \"cpu_app_s\": %.3f, ", \
			ok ? "true" : "false", ok ? v + 0 : "null", ok ? ops + 0 : 0, app
		if (sl != "-" && all > 0)
			printf "\"round_trips\": %d, \"sleeps\": %d, \"empty_wakes\": %d, ", all, sl, em
		printf "\"cpu_proc_s\": %.3f, \"cpu_nic_s\": %s}\n", app,
			nic == "-" ? "null" : sprintf("%.3f", nic) }'
}
# counts FILE...: the preload's sleeps and empty wake-ups summed over the processes' lines
counts() {
	cat "$@" 2>/dev/null | awk '/sleeps [0-9]+, woken with nothing/ {
		for (i = 1; i <= NF; i++) { if ($i == "sleeps") s += $(i+1); if ($i == "nothing") e += $(i+1) }
		n++ } END { if (n == 2) print s + 0, e + 0; else print "- -" }'
}
nic_cpu() { [[ $1 == kernel* || $1 == shm ]] && echo - || cpu_of "${2:-$simd}"; }
nic_delta() { [[ $1 == - ]] && echo - || echo "$2 - $1" | bc; }

# iperf3 WHERE(preload|kernel): Gb/s received; ops = GB
iperf() {
	local c=$A s=$Z ip=10.0.0.2 n0 sp
	[[ $1 == kernel ]] && c=$K1 s=$K2 ip=$IP2
	timed "$tmp/ts" timeout $((secs + 30)) $s iperf3 -s -1 -B "$ip" >/dev/null 2>&1 &
	sp=$!
	sleep 1
	n0=$(nic_cpu "$1")
	timed "$tmp/tc" $c iperf3 -c "$ip" -t "$secs" -J >"$tmp/i.json" 2>/dev/null
	local n1; n1=$(nic_cpu "$1")
	wait $sp
	read -r v ops < <(json "$tmp/i.json" \
		'"%s %s" % (d["end"]["sum_received"]["bits_per_second"]/1e9, d["end"]["sum_received"]["bytes"]/1e9)' \
		2>/dev/null || echo "- 0")
	emit "$v" "$ops" "$(echo "$(cpu_file "$tmp/tc") + $(cpu_file "$tmp/ts")" | bc)" \
		"$(nic_delta "$n0" "$n1")"
}
# nuttcp WHERE: the seed's command against nuttcp -1 --nofork; Gb/s, ops = GB
nuttcp_run() {
	local c=$A s=$Z ip=10.0.0.2 n0 n1 sp
	[[ $1 == kernel ]] && c=$K1 s=$K2 ip=$IP2
	timed "$tmp/ts" timeout $((secs + 30)) $s nuttcp -1 --nofork >/dev/null 2>&1 &
	sp=$!
	sleep 1
	n0=$(nic_cpu "$1")
	timed "$tmp/tc" $c nuttcp -t -T "$secs" -w 128 -v "$ip" >"$tmp/n.txt" 2>&1
	n1=$(nic_cpu "$1")
	wait $sp
	read -r v ops < <(awk '/^nuttcp-t:.*Mbps/ { for (i = 1; i <= NF; i++) { if ($i == "Mbps") v = $(i-1); if ($i == "MB") mb = $(i-1) } }
		END { if (v) print v / 1000, mb / 1000; else print "- 0" }' "$tmp/n.txt")
	emit "$v" "$ops" "$(echo "$(cpu_file "$tmp/tc") + $(cpu_file "$tmp/ts")" | bc)" \
		"$(nic_delta "$n0" "$n1")"
}
# myrio-perf --copy TCP_STREAM on the daemon's two NICs (one process, both ends)
perf_copy() {
	local n0 n1
	n0=$(cpu_of $simd)
	"$B/myrio-perf" -q -l "$secs" --json --copy -t TCP_STREAM "simd:nic0@$tmp/s" \
		"simd:nic1@$tmp/s" >"$tmp/o.json" 2>/dev/null
	n1=$(cpu_of $simd)
	read -r v ops app < <(json "$tmp/o.json" '"%s %s %s" % (d["throughput_mbps"]/1e3,
		d["bytes_received"]/1e9, d["cpu_local_s"] + d["cpu_remote_s"])' 2>/dev/null || echo "- 0 0")
	emit "$v" "$ops" "$app" "$(nic_delta "$n0" "$n1")"
}
# sockperf WHERE [ENV...]: UDP 32 B ping-pong median round trip [us] (p99 and p99.9 too;
# --full-rtt: sockperf's own figure is half the round trip, latency_loopback's the whole);
# ops = round trips. WHERE: preload, kernel, kernel_busy (--nonblocked, a CPU each), shm (each end its
# own model NIC, cabled through shared memory, busy-polling on a CPU each), niccore (the
# preload on a daemon whose model thread has CPU 0), or DAEMON_CPUS:SPIN:CLIENT_CPUS:SERVER_CPUS
# (the preload on a daemon of its own with that placement, SPIN as niccore_up's: the
# placement rows); a _tcp suffix: over TCP
shm_runs=0
sockperf_run() {
	local where=$1 c=$A s=$Z ip=10.0.0.2 n0 n1 sp cpin=() spin=() d=$simd sargs=() sig=INT
	shift
	[[ $where == *_tcp ]] && where=${where%_tcp} sargs+=(--tcp)
	[[ $where == kernel* ]] && c=$K1 s=$K2 ip=$IP2
	if [[ $where == kernel_busy || $where == shm ]]; then
		cpin=(taskset -c 0) spin=(taskset -c "$LAST_CPU")
	fi
	[[ $where == kernel_busy ]] && sargs+=(--nonblocked)
	if [[ $where == shm ]]; then
		local cable=plc$$.$((shm_runs++))
		c="$B/myrio-run --device sim+shm:$cable/0 --ip 10.0.0.1/24 --"
		s="$B/myrio-run --device sim+shm:$cable/1 --ip 10.0.0.2/24 --"
		set -- MYRIO_SPIN=1 "$@"
		sig=KILL # a busy-polling blocking call returns no EINTR: SIGINT would not end it
	fi
	[[ $where == niccore ]] && where=0:spin:$APP_CPUS:$APP_CPUS
	if [[ $where == *:* ]]; then
		local p
		IFS=: read -ra p <<<"$where"
		niccore_up "${p[0]}" "${p[1]}" || return 1
		d=$niccore c=$A2 s=$Z2 cpin=(taskset -c "${p[2]}") spin=(taskset -c "${p[3]}")
	fi
	env MYRIO_PRELOAD_COUNTS=1 "$@" /usr/bin/time -f "%U %S" -o "$tmp/ts" "${spin[@]}" $s \
		sockperf server -i "$ip" -p 11111 "${sargs[@]}" >"$tmp/srv.txt" 2>&1 &
	sp=$!
	sleep 1
	n0=$(nic_cpu "$where" "$d")
	env MYRIO_PRELOAD_COUNTS=1 "$@" /usr/bin/time -f "%U %S" -o "$tmp/tc" "${cpin[@]}" $c \
		sockperf ping-pong -i "$ip" -p 11111 -t "$secs" -m 32 --full-rtt "${sargs[@]}" \
		>"$tmp/p.txt" 2>&1
	n1=$(nic_cpu "$where" "$d")
	stop $sp $sig # an orderly exit prints the preload's counts
	[[ -n $niccore ]] && niccore_down
	local v ops all
	v=$(grep -o "percentile 50.000 = *[0-9.]*" "$tmp/p.txt" | awk '{ print $NF }')
	ops=$(grep -o "Valid Duration.*ReceivedMessages=[0-9]*" "$tmp/p.txt" | sed 's/.*=//')
	all=$(grep -o "Total Run.*ReceivedMessages=[0-9]*" "$tmp/p.txt" | sed 's/.*=//')
	emit "$v" "$ops" "$(echo "$(cpu_file "$tmp/tc") + $(cpu_file "$tmp/ts")" | bc)" \
		"$(nic_delta "$n0" "$n1")" "${all:-0}" $(counts "$tmp/p.txt" "$tmp/srv.txt") |
		tails "$(grep -o "percentile 99.000 = *[0-9.]*" "$tmp/p.txt" | awk '{ print $NF }')" \
			"$(grep -o "percentile 99.900 = *[0-9.]*" "$tmp/p.txt" | awk '{ print $NF }')"
}
# tails P99 P999: emit's JSON line on stdin with the tail latencies added (when known)
tails() {
	local l
	read -r l
	[[ -n $1 && -n $2 ]] && l="${l%\}}, \"p99\": $1, \"p999\": $2}"
	echo "$l"
}
# latency_loopback on the same daemon's NICs (one process polling both stacks); niccore:
# on a daemon whose model thread has CPU 0, the program on the last CPU
loopback() {
	local n0 n1 rt=20000 d=$simd sock=$tmp/s pin=()
	if [[ ${1:-} == niccore ]]; then
		niccore_up || return 1
		d=$niccore sock=$tmp/s2 pin=(taskset -c "$LAST_CPU")
	fi
	n0=$(cpu_of $d)
	timed "$tmp/tc" "${pin[@]}" "$B/latency_loopback" -n $rt -s 32 "simd:nic0@$sock" \
		"simd:nic1@$sock" >"$tmp/l.txt" 2>&1
	n1=$(cpu_of $d)
	[[ ${1:-} == niccore ]] && niccore_down
	local v
	v=$(sed '/^TCP /,$d' "$tmp/l.txt" | grep -o "median [0-9.]* us" | awk '{ print $2 }')
	emit "$v" $rt "$(cpu_file "$tmp/tc")" "$(nic_delta "$n0" "$n1")" |
		tails "$(sed '/^TCP /,$d' "$tmp/l.txt" | grep -o "p99 [0-9.]* us" | awk '{ print $2 }')" \
			"$(sed '/^TCP /,$d' "$tmp/l.txt" | grep -o "p99.9 [0-9.]* us" | awk '{ print $2 }')"
}

# The measurements, by name: each run appends one JSON line (with the load and the steal %
# over the run) to $tmp/m.NAME.
declare -A measure=(
	[iperf_preload]="iperf preload" [iperf_kernel]="iperf kernel" [perf_copy]=perf_copy
	[nuttcp_preload]="nuttcp_run preload" [nuttcp_kernel]="nuttcp_run kernel"
	[sp_preload]="sockperf_run preload" [sp_preload_spin50]="sockperf_run preload MYRIO_SPIN_US=50"
	[sp_preload_busy]="sockperf_run preload MYRIO_SPIN=1" [sp_kernel]="sockperf_run kernel"
	[loopback]=loopback [sp_niccore]="sockperf_run niccore" [loopback_niccore]="loopback niccore"
	# placements (CPU numbers of a 2-core machine): the model sleeping on the programs' CPU
	# (every wake-up a switch on one CPU, no IPI), sleeping on the other CPU, and the
	# programs on a CPU each with the model sleeping wherever the scheduler puts it
	[sp_onecore]="sockperf_run $LAST_CPU:sleep:$LAST_CPU:$LAST_CPU"
	[sp_apart]="sockperf_run 0:sleep:$APP_CPUS:$APP_CPUS"
	[sp_split]="sockperf_run 0-$LAST_CPU:sleep:0:$LAST_CPU"
	# the model polling 50 us after its last work (it catches the peer's answer before it
	# sleeps); the programs spinning 20 us before they sleep, on a CPU each
	[sp_apart_spin50]="sockperf_run 0:50:$APP_CPUS:$APP_CPUS"
	[sp_split_spin20]="sockperf_run 0-$LAST_CPU:sleep:0:$LAST_CPU MYRIO_SPIN_US=20"
	[sp_shm]="sockperf_run shm" [sp_shm_tcp]="sockperf_run shm_tcp"
	[sp_kernel_busy]="sockperf_run kernel_busy" [sp_kernel_busy_tcp]="sockperf_run kernel_busy_tcp"
)
order=(iperf_preload perf_copy iperf_kernel nuttcp_preload nuttcp_kernel sp_onecore sp_preload
	loopback sp_kernel sp_preload_spin50 sp_preload_busy sp_niccore loopback_niccore sp_apart
	sp_split sp_apart_spin50 sp_split_spin20 sp_shm sp_shm_tcp sp_kernel_busy sp_kernel_busy_tcp)
run_one() {
	local s0 s1 out w0=$SECONDS
	s0=$(steal_ticks)
	out=$(${measure[$1]} 2>/dev/null) || true
	s1=$(steal_ticks)
	[[ -n $verbose ]] && echo "$1 ($((SECONDS - w0)) s): $out" >&2
	[[ $out == "{"* ]] || out='{"ok": false}'
	out=${out%\}}
	echo "$out, \"load\": $(cut -d' ' -f1 /proc/loadavg), \"steal_pct\": $(
		printf '%s\n' "$s0" "$s1" | awk 'NR == 1 { a = $1; t = $2 } NR == 2 {
			d = $2 - t; printf "%.1f", (d > 0 ? 100 * ($1 - a) / d : 0) }')}" >>"$tmp/m.$1"
}
# row NAME UNIT PER_OP LOWER OURS PEER PEER_NAME TARGET: the two measurements' rounds paired
# (none when one of the two was not run)
row() {
	[[ -f $tmp/m.$5 && -f $tmp/m.$6 ]] || return 0
	python3 -c 'import json, sys
for side, f in (("ours", sys.argv[1]), ("peer", sys.argv[2])):
    for l in open(f):
        r = json.loads(l); r["side"] = side; print(json.dumps(r))' "$tmp/m.$5" "$tmp/m.$6" >"$tmp/row"
	python3 bench/verdict.py "$tmp/row" "$1" "$2" "$3" "$4" "$7" "$8"
}

((${#only[@]})) && order=("${only[@]}")
echo "bench: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"${secs} s per run, $N interleaved rounds"
for ((i = 0; i < N; i++)); do
	if ((i % 2)); then
		for ((k = ${#order[@]} - 1; k >= 0; k--)); do run_one "${order[k]}"; done
	else
		for m in "${order[@]}"; do run_one "$m"; done
	fi
done
echo "load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== TCP throughput (the preload's \"libmyrio\" line is iperf3 or nuttcp through it)"
row "iperf3 preload vs myrio-perf --copy [Gb/s]" Gb/s GB 0 iperf_preload perf_copy myrio-perf 0.9
row "nuttcp -w 128 preload vs myrio-perf --copy [Gb/s]" Gb/s GB 0 nuttcp_preload perf_copy \
	myrio-perf 0.9
row "iperf3 preload vs kernel veth [Gb/s]" Gb/s GB 0 iperf_preload iperf_kernel kernel 1
row "nuttcp -w 128 preload vs kernel veth [Gb/s]" Gb/s GB 0 nuttcp_preload nuttcp_kernel kernel 1
echo "== UDP 32 B round trip, median (target: within 2x of latency_loopback, i.e. ratio >= 0.5)"
# the best layout measured on 2 CPUs first (docs/preload.md): no wake-up crosses CPUs
row "sockperf preload, programs and sleeping model on one CPU, vs latency_loopback [us]" us \
	trans 1 sp_onecore loopback loopback 0.5
row "sockperf preload, programs and sleeping model on one CPU, vs kernel veth [us]" us \
	trans 1 sp_onecore sp_kernel kernel 1
row "sockperf preload sleeping vs latency_loopback [us]" us trans 1 sp_preload loopback \
	loopback 0.5
row "sockperf preload MYRIO_SPIN_US=50 vs latency_loopback [us]" us trans 1 \
	sp_preload_spin50 loopback loopback 0.5
row "sockperf preload MYRIO_SPIN=1 vs latency_loopback [us]" us trans 1 sp_preload_busy \
	loopback loopback 0.5
row "sockperf preload sleeping vs kernel veth [us]" us trans 1 sp_preload sp_kernel kernel 1
row "sockperf preload MYRIO_SPIN_US=50 vs kernel veth [us]" us trans 1 sp_preload_spin50 \
	sp_kernel kernel 1
row "sockperf preload sleeping vs latency_loopback, NIC model on its own core [us]" us trans 1 \
	sp_niccore loopback_niccore loopback 0.5
row "sockperf preload sleeping, NIC model on its own core, vs kernel veth [us]" us trans 1 \
	sp_niccore sp_kernel kernel 1
row "sockperf preload, programs on one CPU, model sleeping on the other [us]" us trans 1 \
	sp_apart loopback loopback 0.5
row "sockperf preload, a CPU for each program, model sleeping [us]" us trans 1 sp_split \
	loopback loopback 0.5
row "the same, MYRIO_SPIN_US=20 [us]" us trans 1 sp_split_spin20 loopback loopback 0.5
row "sockperf preload, programs on one CPU, model polling 50 us before it sleeps [us]" us \
	trans 1 sp_apart_spin50 loopback loopback 0.5
row "sockperf preload, own model NICs cabled by shared memory, MYRIO_SPIN=1, a CPU each, vs latency_loopback [us]" \
	us trans 1 sp_shm loopback loopback 0.5
row "the same over TCP vs latency_loopback (UDP) [us]" us trans 1 sp_shm_tcp loopback loopback 0.5
row "the same UDP vs latency_loopback with the model spinning on its own core [us]" us trans 1 \
	sp_shm loopback_niccore loopback 0.5
row "sockperf preload on shared memory vs kernel veth --nonblocked, a CPU each [us]" us trans 1 \
	sp_shm sp_kernel_busy kernel 1
row "the same over TCP [us]" us trans 1 sp_shm_tcp sp_kernel_busy_tcp kernel 1
echo "== round-trip tails, median over rounds of each run's p50 / p99 / p99.9 [us]"
for m in loopback loopback_niccore sp_shm sp_shm_tcp sp_kernel_busy sp_kernel_busy_tcp; do
	[[ -f $tmp/m.$m ]] && python3 -c 'import json, sys, statistics
r = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in r if x.get("ok") and "p99" in x]
f = lambda k: "{:.2f}".format(statistics.median(x[k] for x in r)) if r else "-"
print("    {:20s} {} / {} / {}".format(sys.argv[2], f("value"), f("p99"), f("p999")))' "$tmp/m.$m" "$m"
done
echo "== the preload's sleeps per round trip (both ends; MYRIO_PRELOAD_COUNTS): all, ended with nothing"
for m in sp_preload sp_preload_spin50 sp_preload_busy sp_niccore sp_onecore sp_apart sp_split \
	sp_apart_spin50 sp_split_spin20; do
	[[ -f $tmp/m.$m ]] && python3 -c 'import json, sys, statistics
r = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in r if x.get("ok") and "sleeps" in x]
f = lambda k: "{:.2f}".format(statistics.median(x[k] / x["round_trips"] for x in r)) if r else "-"
print("    {:18s} {} {}".format(sys.argv[2], f("sleeps"), f("empty_wakes")))' "$tmp/m.$m" "$m"
done
