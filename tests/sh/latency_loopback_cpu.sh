#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# latency_loopback as bench/compare.sh runs it: -d bounds each test's round trips by time
# (not only by -n), and each test reports the CPU of its measured round trips: this
# thread's, the model thread's and the process's, over the measured time.
set -euo pipefail
build=${1:?build directory}
[[ -x $build/latency_loopback ]] || { echo "no $build/latency_loopback"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# 200000 round trips take well over 300 ms (about 3 us each on an idle machine)
"$build/latency_loopback" -n 200000 -d 300 -s 32 >"$out"
cat "$out"
python3 - "$out" <<'PY'
import os, re, sys
t = open(sys.argv[1]).read()
for proto in ("UDP", "TCP"):
    part = t.split(proto + " ", 1)[1]
    n = int(re.search(r"round trips: (\d+)", part).group(1))
    c = re.search(r"cpu: thread ([\d.]+) s  model ([\d.]+) s  process ([\d.]+) s  over ([\d.]+) s", part)
    assert c, proto + ": no cpu line"
    thread, model, process, secs = map(float, c.groups())
    assert 0 < n < 200000, f"{proto}: {n} round trips in a 300 ms limit"
    # the limit, plus one round trip that may wait for a starved model
    assert 0.25 <= secs <= 6, f"{proto}: measured for {secs} s with a 300 ms limit"
    assert 0 < thread and thread <= process and model <= process, c.group(0)
    # no more CPU than the CPUs there are over the measured time (the clocks' ticks aside)
    assert process <= secs * os.cpu_count() * 1.1 + 0.02, c.group(0)
print("latency_loopback -d: bounded by time, CPU of the measured round trips reported")
PY
