#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# myrio-stats attaches to a running program: examples/stream_recv receives a TCP stream on
# a NIC of the model daemon while myrio-stats, another process that never opens the port,
# reads its published counters by name and by pid, as text, JSON and Prometheus, and sees
# them grow between two reads. The segment goes with the program; MYRIO_PUBLISH=0 turns it
# off; --help works.
set -euo pipefail
build=${1:?build directory}
# shellcheck source=lib/simd.sh
. "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd stream_send stream_recv myrio-stats
export MYRIO_LOG=1
stats=$build/myrio-stats
simd_start
"$stats" --help >"$tmp/help"
grep -q -- "--prometheus" "$tmp/help"
grep -q -- "--pid PID" "$tmp/help"

# Under a name of its own: another test's stream_recv may be running at the same time.
prog=stream_recv_$$
ln -s "$build/stream_recv" "$tmp/$prog"
"$tmp/$prog" --duration 14 "simd:nic1@$sock" >"$tmp/recv" 2>&1 &
rpid=$!
pids+=($rpid)
sleep 0.3
timeout 60 "$build/stream_send" -d 12 "simd:nic0@$sock" >"$tmp/send" 2>&1 &
pids+=($!)
# Wait for the receiver's first bytes: then its counters move.
for _ in $(seq 100); do grep -q "Gb/s" "$tmp/recv" && break; sleep 0.1; done

"$stats" --name "$prog" -n 2 -i 2 >"$tmp/text"
"$stats" --pid "$rpid" --json -n 2 -i 2 >"$tmp/json"
"$stats" --pid "$rpid" --prometheus >"$tmp/prom"
head -n 12 "$tmp/text"
python3 - "$tmp" "$rpid" "$prog" <<'PY'
import json, re, sys
d, pid, prog = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(f"{d}/text").read()
assert f"{prog} (pid {pid})" in text, text
assert re.search(r"^  port simd:nic1@\S+\s+value\s+per second$", text, re.M), "no port group"
assert re.search(r"^  stack 10\.0\.0\.2\s+value", text, re.M), "no stack group"
rates = [int(float(m)) for m in re.findall(r"^    rx_packets\s+\d+\s+([\d.]+)$", text, re.M)]
assert rates and rates[0] > 0, f"rx_packets did not grow between the two text reads: {rates}"
a, b = [json.loads(l) for l in open(f"{d}/json")]
assert a["pid"] == pid and a["program"] == prog
port = next(g for g in a["groups"] if g.startswith("port simd:nic1@"))
for key in ("rx_packets", "rx_bytes"):
    assert b["groups"][port][key] > a["groups"][port][key], f"{key} did not grow: {a} {b}"
assert b["groups"]["stack 10.0.0.2"]["tcp_segs_in"] > a["groups"]["stack 10.0.0.2"]["tcp_segs_in"]
assert "rdma_tags_available" in a["groups"][port], "the driver's own counters are missing"
sample = re.compile(r'^myrio_[A-Za-z0-9_]+\{pid="(\d+)",program="' + re.escape(prog) + r'",'
                    r'kind="(port|stack)",instance="[^"]*"\} \d+$')
lines = open(f"{d}/prom").read().splitlines()
assert lines and all(sample.match(l) for l in lines), [l for l in lines if not sample.match(l)][:3]
assert any(l.startswith("myrio_rx_packets{") and 'kind="port"' in l for l in lines)
print(f"attached: rx_packets {a['groups'][port]['rx_packets']} -> {b['groups'][port]['rx_packets']}, "
      f"{len(lines)} Prometheus samples")
PY
wait "$rpid"
grep summary "$tmp/recv"
# The program is gone, and so is its segment.
[[ ! -e /dev/shm/myrio.$rpid ]] || { echo "segment of $rpid left behind"; exit 1; }
if "$stats" --pid "$rpid" -n 1 2>"$tmp/err"; then echo "read a program that ended"; exit 1; fi
grep -q "publishes no counters" "$tmp/err"

# MYRIO_PUBLISH=0: nothing published.
MYRIO_PUBLISH=0 "$build/stream_recv" --duration 2 "simd:nic1@$sock" >"$tmp/recv2" 2>&1 &
qpid=$!
pids+=($qpid)
timeout 60 "$build/stream_send" -d 1 "simd:nic0@$sock" >/dev/null 2>&1
[[ ! -e /dev/shm/myrio.$qpid ]] || { echo "MYRIO_PUBLISH=0 still published"; exit 1; }
wait "$qpid" || true
echo "stats_attach: ok"
