#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of tools/myrio-perf on the in-process model: every test runs for a moment and
# reports real figures in JSON (data arrived and was verified, transactions completed), the
# netperf table is printed, and the UDP sweep writes a well-formed SVG with one point per size.
set -euo pipefail
build=${1:?build directory}
bin=$build/myrio-perf
[[ -x $bin ]] || { echo "no $bin"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MYRIO_LOG=1
# One retry: on a machine loaded far beyond its cores the model thread can miss the driver's
# 1 s command deadline during bring-up; the figures themselves are never retried.
run() {
  local out
  if out=$(timeout 60 "$bin" -q -l 0.5 "$@"); then
    printf '%s\n' "$out"
    return
  fi
  echo "retrying once: myrio-perf $*" >&2
  timeout 60 "$bin" -q -l 0.5 "$@"
}

run -t TCP_STREAM --json >"$tmp/tcp.json"
run -t TCP_SENDFILE --verify --mtu 9000 --json >"$tmp/sendfile.json"
run -t TCP_STREAM --copy --verify --json >"$tmp/copy.json"
run -t UDP_STREAM -m 1472 --json >"$tmp/udp.json"
# as bench/compare.sh judges UDP per CPU-second: sleeping on interrupts, the model too
run -t UDP_STREAM -m 64 --irq --sim link=unlimited --json >"$tmp/udpirq.json"
run -t TCP_RR -r 1,1 --json >"$tmp/tcprr.json"
run -t UDP_RR -r 64,256 -b 4 --json >"$tmp/udprr.json"
run -t TCP_STREAM --irq --json >"$tmp/irq.json"
run -t TCP_STREAM >"$tmp/table.txt"
run -t TCP_STREAM --irq --coal 75 >"$tmp/irq75.txt"
# a stepped model: no thread, myrio-perf steps it (what callgrind counts are taken on)
run -t TCP_RR --sim stepped,link=unlimited --json >"$tmp/steprr.json"
run -t TCP_STREAM --copy --verify --sim stepped --json >"$tmp/stepcopy.json"
if "$bin" -q -l 0.1 -t TCP_STREAM --irq --sim stepped >/dev/null 2>&1; then
  echo "a stepped model with --irq was accepted; it raises no interrupts"; exit 1
fi
# -T: two queues on each port, two threads, a stack per queue at each end
run -t TCP_STREAM -T 2 --conns 4 --verify --json >"$tmp/t2stream.json"
run -t TCP_RR -T 2 -r 64,64 --json >"$tmp/t2rr.json"
if "$bin" -q -l 0.1 -t UDP_STREAM -T 2 >/dev/null 2>&1; then
  echo "-T with UDP_STREAM was accepted; it runs TCP only"; exit 1
fi
run --sweep=64,512,1472 -l 0.3 --svg "$tmp/sweep.svg" >"$tmp/sweep.txt"
cat "$tmp/table.txt" "$tmp/sweep.txt"

python3 - "$tmp" <<'PY'
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
def load(name):
    r = json.load(open(f"{d}/{name}.json"))
    print(name, {k: r[k] for k in ("test", "throughput_mbps", "trans_per_s",
                                   "util_local_pct", "sd_local_us_per_kb")})
    return r
tcp = load("tcp")
assert tcp["test"] == "TCP_STREAM" and tcp["throughput_mbps"] > 0
assert tcp["bytes_received"] > 0 and tcp["bytes_sent"] >= tcp["bytes_received"]
assert 0 < tcp["util_local_pct"] <= 100 and tcp["sd_local_us_per_kb"] > 0
sf = load("sendfile")
assert sf["test"] == "TCP_SENDFILE" and sf["mtu"] == 9000
assert sf["bytes_received"] > 0 and sf["verified"] is True
assert sf["failed_verification"] == 0
cp = load("copy")  # myrio_tcp_write/myrio_tcp_read, every byte checked
assert cp["bytes_received"] > 0 and cp["verified"] is True and cp["failed_verification"] == 0
# the model's thread and the whole process are reported, by their own clocks
assert cp["cpu_model_s"] > 0 and cp["cpu_process_s"] > 0
udp = load("udp")
assert udp["message_size"] == 1472 and udp["messages_received"] > 0
assert udp["recv_mbps"] > 0 and udp["send_mbps"] >= udp["recv_mbps"]
for name in ("tcprr", "udprr"):
    rr = load(name)
    assert rr["transactions"] > 0 and rr["trans_per_s"] > 0 and rr["sd_local_us_per_tr"] > 0
ui = load("udpirq")
assert ui["message_size"] == 64 and ui["messages_received"] > 0
assert ui["cpu_mode"] == "thread CPU clock, interrupt sleep"
assert ui["cpu_process_s"] > 0 and ui["cpu_model_s"] >= 0
irq = load("irq")
assert irq["cpu_mode"] == "thread CPU clock, interrupt sleep" and irq["irq_sleeps"] >= 0
# the application's CPU is the thread's, never time it spent descheduled: within the process's
for r in (tcp, udp, ui, irq):
    assert r["cpu_local_s"] + r["cpu_remote_s"] <= r["cpu_process_s"] + 0.01, r
assert irq["throughput_mbps"] > 0
for name in ("steprr", "stepcopy"):
    st = load(name)
    assert st["model"].startswith("stepped") and st["cpu_model_s"] < 0  # no model thread
    assert st["transactions"] > 0 or (st["bytes_received"] > 0 and st["verified"] is True
                                      and st["failed_verification"] == 0)
for name in ("t2stream", "t2rr"):
    t = json.load(open(f"{d}/{name}.json"))
    print(name, t)
    # every connection on the stack its RSS hash names at both ends, nothing failed
    assert t["threads"] == 2 and t["wrong_stack"] == 0 and t["failed"] == 0
    assert t["exact"] is True
t = json.load(open(f"{d}/t2stream.json"))
assert t["connections"] == 8 and t["throughput_mbps"] > 0 and t["verified"] is True
assert t["bytes_received"] == t["bytes_sent"] > 0
t = json.load(open(f"{d}/t2rr.json"))
assert t["connections"] == 2 and t["transactions"] > 0 and t["trans_per_s"] > 0
# service demand depends on the coalescing: the table says which
assert "interrupt coalescing 75 us" in open(f"{d}/irq75.txt").read().splitlines()[0]
table = open(f"{d}/table.txt").read()
assert "Throughput" in table and "10^6bits/s" in table and "us/KB" in table
svg = ET.parse(f"{d}/sweep.svg").getroot()
circles = svg.findall(".//{http://www.w3.org/2000/svg}circle")
assert len(circles) == 3, f"{len(circles)} points in the plot, expected 3"
print("ok")
PY
