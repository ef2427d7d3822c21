#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/compare.sh --quick, two runs at once: each runs end to end and every row it prints
# parses: both sides' median [min-max] (a figure from at least one run each), failures
# counted, CPU per operation with its method, load and steal, a ratio over the pairs and a
# verdict from the allowed set. The kernel's side over veth loses no run: it does when
# another run deletes or takes over its namespaces. Afterwards neither run's namespaces
# are left and the busy-poll sysctls are back at their values. It measures nothing (0.3 s
# runs on a shared machine): no figure is asserted, only the form and one bound that holds
# at any load: the peer's CPU per transaction times its transactions per second fits in the
# machine's CPUs (its CPU is read over the measured window only).
set -euo pipefail
build=${1:?build directory}
[[ -x $build/myrio-perf && -x $build/udp_mmsg ]] || { echo "no $build/myrio-perf"; exit 77; }
[[ $(id -u) == 0 ]] || { echo "needs root (namespaces, sysctls of the busy-polled peer)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/../.."
sysctls() { sysctl -n net.core.busy_read net.core.busy_poll | tr '\n' ' '; }
before=$(sysctls)
# Inside ctest's 900 s; a run cut short still shows how far it got. The second run starts
# while the first is under way, so that one's set-up and end fall inside the other's rows.
mkdir -p "$tmp/rows1"
ROWS_DIR=$tmp/rows1 RUN_ID=q1x$$ timeout 840 bash bench/compare.sh -b "$build" --quick >"$tmp/out1" 2>&1 &
p1=$!
for ((i = 0; i < 300; i++)); do
	grep -q '^ROW ' "$tmp/out1" && break
	kill -0 $p1 2>/dev/null || break
	sleep 0.1
done
mkdir -p "$tmp/rows2"
ROWS_DIR=$tmp/rows2 RUN_ID=q2x$$ timeout 840 bash bench/compare.sh -b "$build" --quick >"$tmp/out2" 2>&1 &
p2=$!
rc1=0 rc2=0
wait $p1 || rc1=$?
wait $p2 || rc2=$?
for i in 1 2; do
	echo "--- run $i"
	cat "$tmp/out$i"
done
((rc1 == 0 && rc2 == 0)) || { echo "bench/compare.sh --quick failed (exit $rc1, $rc2)"; exit 1; }
left=$(ip netns list | grep -cE "^myrio-bench-[ab]q[12]x$$( |$)" || true)
((left == 0)) || { echo "namespaces left: $(ip netns list)"; exit 1; }
after=$(sysctls)
[[ $after == "$before" ]] || { echo "busy-poll sysctls were '$before', left at '$after'"; exit 1; }
python3 - "$tmp/out1" "$tmp/out2" "$tmp"/rows[12]/*.json <<'PY'
import json, os, re, sys
num = r"(?:n/a|[\d.e+-]+ \[[\d.e+-]+-[\d.e+-]+\])"
cpu = r"app \S+ nic \S+ process \S+ CPU-(?:s/GB|us/\w+)"
# the kept rows are --quick's two peer rows, both rates: in each run of a peer, CPU per
# operation x operations per second (its CPU over its measured window) fits in the
# machine's CPUs, the clocks' ticks aside
for path in sys.argv[3:]:
    for r in map(json.loads, open(path)):
        if r["side"] == "peer" and r.get("ok") and r.get("cpu_proc_s") is not None and r.get("ops"):
            cpus = r["cpu_proc_s"] / r["ops"] * r["value"]
            assert cpus <= 1.1 * os.cpu_count(), f"{path}: {cpus:.2f} CPUs in {r}"
for path in sys.argv[1:3]:
    out = open(path).read()
    rows = re.findall(r"^ROW (.+)$", out, re.M)
    assert len(rows) == 4, rows
    for block in out.split("\nROW ")[1:]:
        lines = block.splitlines()
        # a loaded machine may starve a run of ours (a handshake timing out): counted
        ours = re.match(rf"\s+libmyrio  {num} \S+ \((\d+) failed(?:; last failure: .*)?; {cpu}\)$", lines[1])
        assert ours, lines[1]
        assert "n/a" not in lines[1].split("(")[0], "no figure of ours: " + lines[1]
        tail = lines[2] if lines[2].lstrip().startswith("target") else lines[3]
        if not lines[2].lstrip().startswith("target"):
            peer = re.match(rf"\s+(\S+) +{num} \S+ \((\d+) failed(?:; last failure: .*)?; {cpu}\)$", lines[2])
            assert peer, lines[2]
            assert "n/a" not in lines[2].split("(")[0], "no figure of the peer: " + lines[2]
            if peer.group(1) == "kernel-mmsg":
                assert peer.group(2) == "0", "the peer over veth failed: " + lines[2]
            assert re.match(rf"\s+ratio     {num} \((?:ours/peer|peer/ours), \d+ pairs\); target \S+: ", tail), tail
        else:
            # the ceiling computed for MTU 1500: 10 Gb/s x 1448 / 1538
            assert "ceiling 9.415 Gb/s" in tail, tail
        v = re.search(r": (MET|NOT MET|INCONCLUSIVE|no target); load " + num + " steal " + num + "%$", tail)
        assert v, tail
        # two pairs cannot carry a verdict
        assert v.group(1) == "INCONCLUSIVE", tail
    summ = re.findall(r"^SUMMARY (.+) \| (MET|NOT MET|INCONCLUSIVE|no target)$", out, re.M)
    assert len(summ) == 8, summ  # each row's, then the summary's copy
print("compare.sh --quick, two runs at once: both outputs parse, nothing failed or left")
PY
