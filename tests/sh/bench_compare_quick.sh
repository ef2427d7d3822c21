#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/compare.sh --quick: the script runs end to end and every row it prints parses:
# both sides' median [min-max], failures counted, CPU per operation with its method, load
# and steal, a ratio over the pairs and a verdict from the allowed set. It measures nothing
# (0.3 s runs on a shared machine): no figure is asserted, only the form.
set -euo pipefail
build=${1:?build directory}
[[ -x $build/myrio-perf ]] || { echo "no $build/myrio-perf"; exit 77; }
[[ $(id -u) == 0 ]] || { echo "needs root (sysctls of the busy-polled peer)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/../.."
# Inside ctest's 600 s; a run cut short still shows how far it got.
rc=0
timeout 540 bash bench/compare.sh -b "$build" --quick >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
((rc == 0)) || { echo "bench/compare.sh --quick failed (exit $rc)"; exit 1; }
python3 - "$tmp/out" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
num = r"(?:n/a|[\d.e+-]+ \[[\d.e+-]+-[\d.e+-]+\])"
cpu = r"app \S+ nic \S+ process \S+ CPU-(?:s/GB|us/\w+)"
rows = re.findall(r"^ROW (.+)$", out, re.M)
assert len(rows) == 2, rows
for block in out.split("\nROW ")[1:]:
    lines = block.splitlines()
    ours = re.match(rf"\s+libmyrio  {num} \S+ \((\d+) failed(?:; last failure: .*)?; {cpu}\)$", lines[1])
    assert ours, lines[1]
    assert ours.group(1) == "0", "our side failed: " + lines[1]
    tail = lines[2] if lines[2].lstrip().startswith("target") else lines[3]
    if not lines[2].lstrip().startswith("target"):
        assert re.match(rf"\s+\S+ +{num} \S+ \(\d+ failed(?:; last failure: .*)?; {cpu}\)$", lines[2]), lines[2]
        assert re.match(rf"\s+ratio     {num} \((?:ours/peer|peer/ours), \d+ pairs\); target \S+: ", tail), tail
    else:
        # the ceiling computed for MTU 1500: 10 Gb/s x 1448 / 1538
        assert "ceiling 9.415 Gb/s" in tail, tail
    v = re.search(r": (MET|NOT MET|INCONCLUSIVE|no target); load " + num + " steal " + num + "%$", tail)
    assert v, tail
    # two pairs cannot carry a verdict
    assert v.group(1) == "INCONCLUSIVE", tail
summ = re.findall(r"^SUMMARY (.+) \| (MET|NOT MET|INCONCLUSIVE|no target)$", out, re.M)
assert len(summ) == 4, summ  # each row's, then the summary's copy
print("compare.sh --quick: output parses")
PY
