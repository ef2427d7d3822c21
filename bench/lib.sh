#!/usr/bin/env bash
# Helpers shared by the benchmark scripts: a veth pair between two network namespaces for
# the kernel's side, pinning, JSON fields, and the one-line summaries with ratios.
#
# CPU placement on a 2-core machine: the device model's thread (libmyrio's "NIC") runs on
# CPU 0 and the application on CPU 1 (myrio-perf and latency_loopback do this themselves);
# for the kernel, the server side runs on CPU 0 and the client on CPU 1.

B=${B:-build}
T=${T:-5}
R=${R:-1}
NS1=myrio-bench-a
NS2=myrio-bench-b
IP1=10.77.0.1
IP2=10.77.0.2
export MYRIO_LOG=${MYRIO_LOG:-1}
LAST_CPU=$(($(nproc) - 1))

need() { command -v "$1" >/dev/null || { echo "missing $1: run bench/deps.sh" >&2; exit 1; }; }

# veth between two namespaces with the given MTU; offloads stay on (the kernel at its best)
netns_up() {
	local mtu=$1
	netns_down
	ip netns add $NS1
	ip netns add $NS2
	ip link add veth-mb-a netns $NS1 type veth peer name veth-mb-b netns $NS2
	ip -n $NS1 addr add $IP1/24 dev veth-mb-a
	ip -n $NS2 addr add $IP2/24 dev veth-mb-b
	ip -n $NS1 link set veth-mb-a mtu "$mtu" up
	ip -n $NS2 link set veth-mb-b mtu "$mtu" up
	ip -n $NS1 link set lo up
	ip -n $NS2 link set lo up
}

netns_down() {
	ip netns del $NS1 2>/dev/null || true
	ip netns del $NS2 2>/dev/null || true
}

# json FILE EXPR: a value from a JSON document, e.g. json r.json 'd["end"]["sum"]["seconds"]'
json() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# summary NAME OURS UNIT PEER_NAME PEER [TARGET_RATIO] [lower]
# Prints one line with the ratio ours/peer (or peer/ours with "lower" for latencies, so a
# bigger ratio is always better) and whether the target ratio is met.
summary() {
	local name=$1 ours=$2 unit=$3 peer_name=$4 peer=$5 target=${6:-} dir=${7:-higher}
	python3 - "$name" "$ours" "$unit" "$peer_name" "$peer" "$target" "$dir" <<'PY' | tee -a "${SUMMARY_FILE:-/dev/null}"
import sys
name, ours, unit, peer_name, peer, target, d = sys.argv[1:]
try:
    o, p = float(ours), float(peer)
except ValueError:
    print(f"SUMMARY {name:32s} libmyrio {ours} {unit} | {peer_name} {peer} | no ratio")
    sys.exit(0)
ratio = (o / p if d == "higher" else p / o) if o > 0 and p > 0 else 0
verdict = ""
if target:
    verdict = f"target {'x' if d == 'higher' else '1/'}{target}: " + \
              ("MET" if ratio >= float(target) else "NOT MET")
better = "ours/peer" if d == "higher" else "peer/ours"
print(f"SUMMARY {name:32s} libmyrio {o:12.2f} {unit:8s} | {peer_name} {p:12.2f} "
      f"| {better} {ratio:7.2f} {verdict}")
PY
}

# target NAME OURS UNIT GOAL [lower]: a figure against an absolute target (no peer)
target() {
	local name=$1 ours=$2 unit=$3 goal=$4 dir=${5:-higher}
	python3 - "$name" "$ours" "$unit" "$goal" "$dir" <<'PY' | tee -a "${SUMMARY_FILE:-/dev/null}"
import sys
name, ours, unit, goal, d = sys.argv[1:]
try:
    o, g = float(ours), float(goal)
except ValueError:
    print(f"SUMMARY {name:32s} libmyrio {ours} {unit} | target {goal}: no figure")
    sys.exit(0)
ok = o >= g if d == "higher" else o <= g
print(f"SUMMARY {name:32s} libmyrio {o:12.3f} {unit:8s} | target {'>=' if d == 'higher' else '<='} "
      f"{g} {unit}: {'MET' if ok else 'NOT MET'}")
PY
}

# med CMD...: runs CMD $R times (each prints one number) and prints the median; a noisy,
# shared machine makes single runs wander
med() {
	local vals=() i
	for ((i = 0; i < R; i++)); do
		vals+=("$("$@" || echo n/a)")
	done
	printf '%s\n' "${vals[@]}" | python3 -c '
import statistics, sys
v = []
for x in sys.stdin.read().split():
    try: v.append(float(x))
    except ValueError: pass
print(statistics.median(v) if v else "n/a")'
}
