#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of examples/latency_loopback: UDP and TCP ping-pongs across two ports of an
# in-process model, percentiles in order, histograms that hold every sample.
set -euo pipefail
build=${1:?build directory}
bin=$build/latency_loopback
[[ -x $bin ]] || { echo "no $bin"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MYRIO_LOG=1

timeout 60 "$bin" -n 2000 -s 64 >"$tmp/out"
cat "$tmp/out"
python3 - "$tmp/out" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
for proto in ("UDP", "TCP"):
    assert f"{proto} 64-byte round trips: 2000" in out, f"no {proto} result"
    sect = out.split(f"{proto} 64-byte")[1]
    m = re.search(r"min ([\d.]+) us\s+median ([\d.]+) us\s+p99 ([\d.]+) us\s+"
                  r"p99.9 ([\d.]+) us\s+max ([\d.]+) us", sect)
    assert m, f"no {proto} percentiles"
    v = [float(x) for x in m.groups()]
    assert 0 < v[0] <= v[1] <= v[2] <= v[3] <= v[4], f"{proto} percentiles out of order: {v}"
    hist = sum(int(x) for x in re.findall(r"us\s+(\d+) #", sect.split("round trips")[1]
                                          .split("round trips")[0]))
    assert hist == 2000, f"{proto} histogram holds {hist} samples, not 2000"
print("ok: percentiles ordered, histograms complete")
PY
