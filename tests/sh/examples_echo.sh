#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/echo_server and echo_client as two processes on two NICs of the model daemon:
# many concurrent connections, every byte echoed and verified; then the idle server must
# sleep (its CPU over two idle seconds is printed; busy polling would use all of one).
# ECHO_CONNS and ECHO_BYTES set the size (10000 and 20000 make the full run).
set -euo pipefail
build=${1:?build directory}
for p in myrio-simd echo_server echo_client; do
  [[ -x $build/$p ]] || { echo "no $build/$p"; exit 77; }
done
conns=${ECHO_CONNS:-2000}
bytes=${ECHO_BYTES:-4000}
tmp=$(mktemp -d)
sock=$tmp/simd.sock
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$build/myrio-simd" --socket "$sock" >"$tmp/simd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { cat "$tmp/simd.log"; echo "daemon did not start"; exit 1; }

"$build/echo_server" "simd:nic1@$sock" >"$tmp/server.log" 2>&1 &
server=$!
pids+=($server)
for _ in $(seq 50); do grep -q sleeping "$tmp/server.log" 2>/dev/null && break; sleep 0.1; done
grep -q "sleeping when idle" "$tmp/server.log" || { cat "$tmp/server.log"; exit 1; }

timeout 120 "$build/echo_client" --conns "$conns" --bytes "$bytes" "simd:nic0@$sock" | tee "$tmp/client.log"
grep -q "summary: $conns connections, $conns completed, 0 failed, $((conns * bytes)) bytes echoed and verified, 0 bad" "$tmp/client.log"

ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
sleep 1 # the closes finish
t0=$(ticks)
sleep 2
t1=$(ticks)
hz=$(getconf CLK_TCK)
echo "idle echo_server: $((t1 - t0)) ticks of CPU in 2 s (${hz} per second)"
(( (t1 - t0) * 10 < 2 * hz )) || { echo "the idle server did not sleep"; exit 1; }
kill -INT "$server"
wait "$server"
cat "$tmp/server.log"
grep -q "summary: $conns connections served, $((conns * bytes)) bytes echoed" "$tmp/server.log"
echo ok
