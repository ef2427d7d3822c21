#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of examples/stream_send and stream_recv as two processes on two NICs of the
# model daemon: a TCP stream and a UDP stream arrive with every byte verified, four TCP
# streams over 2 queues (-T 2, the RSS firmware) arrive exactly, and myrio-stats reads a
# NIC's counters. Skipped when the daemon is not built.
set -euo pipefail
build=${1:?build directory}
# shellcheck source=lib/simd.sh
. "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd stream_send stream_recv myrio-stats
export MYRIO_LOG=1
simd_start --model eeprom_fw=rss

stream() { # $1: name, $2: options of both, $3: sender-only options
  local name=$1
  timeout 30 "$build/stream_recv" $2 "simd:nic1@$sock" >"$tmp/$name.recv" 2>&1 &
  local rpid=$!
  sleep 0.3
  timeout 30 "$build/stream_send" -d 2 $2 ${3:-} "simd:nic0@$sock" >"$tmp/$name.send" 2>&1
  wait $rpid
  cat "$tmp/$name.send" "$tmp/$name.recv"
}
stream tcp ""
stream udp "--udp" "-s 1000"
stream tcp9000 "--mtu 9000"
stream tcpT2 "-T 2"

python3 - "$tmp" <<'PY'
import re, sys
d = sys.argv[1]
def summary(path):
    m = re.search(r"summary: (\d+) bytes in (\d+) \w+ in ([\d.]+) s = ([\d.]+) Gb/s", open(path).read())
    assert m, f"no summary in {path}"
    return int(m.group(1)), float(m.group(4)), open(path).read()
for name in ("tcp", "udp", "tcp9000", "tcpT2"):
    sb, sg, _ = summary(f"{d}/{name}.send")
    rb, rg, rtext = summary(f"{d}/{name}.recv")
    assert rb > 0 and rg > 0, f"{name}: nothing received"
    assert ", 0 bad" in rtext, f"{name}: payload failed verification"
    if name.startswith("tcp"):
        assert rb == sb, f"{name}: sent {sb} bytes, received {rb}"
    else:
        assert rb <= sb and rb > sb // 2, f"{name}: sent {sb}, received {rb}"
    assert re.search(r"^\s+1\.\d s\s+[\d.]+ Gb/s", rtext, re.M), f"{name}: no per-second line"
    print(f"{name}: {rb} bytes verified, {rg} Gb/s")
# -T 2: a stream from each sending queue, each on the queue its hash names
send = open(f"{d}/tcpT2.send").read()
assert re.search(r"^queue 0: [1-9]\d* bytes", send, re.M), "queue 0 sent nothing"
assert re.search(r"^queue 1: [1-9]\d* bytes", send, re.M), "queue 1 sent nothing"
streams = sum(int(n) for n in re.findall(r"^queue \d: (\d+) streams", open(f"{d}/tcpT2.recv").read(), re.M))
assert streams == 2, f"{streams} streams accepted, expected 2"
PY
timeout 10 "$build/myrio-stats" -n 2 -i 0.2 "simd:nic1@$sock" >"$tmp/stats" 2>&1
cat "$tmp/stats"
grep -q "link up" "$tmp/stats"
grep -q "^  counter .* per second" "$tmp/stats"
grep -q "rdma_tags_available" "$tmp/stats"
echo ok
