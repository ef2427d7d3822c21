#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/udp_rpc as client and server on two NICs of the model daemon, on a cable that
# loses 10% of the frames each way: every request is answered in the end, through retries
# on the stack's timers, and each answer carries its own request's payload.
set -euo pipefail
build=${1:?build directory}
for p in myrio-simd udp_rpc; do
  [[ -x $build/$p ]] || { echo "no $build/$p"; exit 77; }
done
tmp=$(mktemp -d)
sock=$tmp/simd.sock
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$build/myrio-simd" --socket "$sock" --seed 5 --nic nic0,cable=nic1,loss=0.1 \
  --nic nic1,loss=0.1 >"$tmp/simd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { cat "$tmp/simd.log"; echo "daemon did not start"; exit 1; }

"$build/udp_rpc" --server "simd:nic1@$sock" >"$tmp/server.log" 2>&1 &
server=$!
pids+=($server)
# The server must listen before the first request: a datagram to a closed port is refused.
for _ in $(seq 300); do grep -q answering "$tmp/server.log" 2>/dev/null && break; sleep 0.1; done
grep -q answering "$tmp/server.log" || { cat "$tmp/server.log"; echo "server did not start"; exit 1; }

timeout 60 "$build/udp_rpc" --requests 2000 --window 16 --timeout-ms 20 --retries 10 \
  "simd:nic0@$sock" | tee "$tmp/client.log"
python3 - "$tmp/client.log" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"summary: (\d+) requests, (\d+) answered, (\d+) failed, (\d+) resent, (\d+) duplicate answers, (\d+) bad", t)
assert m, "no summary"
req, ans, failed, resent, dups, bad = map(int, m.groups())
assert ans == req == 2000 and failed == 0 and bad == 0, t
assert resent > 100, f"a 10% loss each way should need retries, got {resent}"
print(f"{ans} answered, {resent} resent")
PY
echo ok
