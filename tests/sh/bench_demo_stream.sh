#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/demo_stream.sh (the README demo's two-process stream): it runs end to end for both
# MTUs and prints, for each, both programs' summaries with every byte accounted for (the
# receiver's "0 bad, 0 lost"), the three processes' CPU seconds and the load average. A
# shared machine says nothing about the rate: no figure is asserted, only the form.
set -euo pipefail
build=${1:?build directory}
[[ -x $build/myrio-simd ]] || { echo "no $build/myrio-simd"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/../.."
timeout 120 bash bench/demo_stream.sh "$build" 1 >"$tmp/out" 2>&1
cat "$tmp/out"
python3 - "$tmp/out" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
for mtu in (1500, 9000):
    block = out.split(f"MTU {mtu},")[1].split("==")[0]
    send = re.search(r"stream_send summary: (\d+) bytes .* = ([\d.]+) Gb/s, \d+ retransmits, "
                     r"\d+ flushes found the send ring full \(frames kept\), \d+ frames dropped", block)
    recv = re.search(r"stream_recv summary: (\d+) bytes .* = ([\d.]+) Gb/s, 0 bad, 0 lost", block)
    cpu = re.search(r"CPU seconds: stream_send [\d.]+, stream_recv [\d.]+, myrio-simd \(the model\) "
                    r"[\d.]+; load average [\d.]+ -> [\d.]+ on \d+ CPUs", block)
    assert send and recv and cpu, f"MTU {mtu}: a line is missing or malformed"
    assert int(send.group(1)) == int(recv.group(1)) > 0, f"MTU {mtu}: bytes sent != received"
print("demo_stream.sh: both MTUs ran, every byte arrived, the output parses")
PY
