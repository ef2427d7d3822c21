#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# UDP sends into a full send queue through the preload (tests/preload/udp_full.c): over a
# 10 Mb/s cable of the model daemon with a send ring of 64, a non-blocking socket must get
# EAGAIN (not datagrams reported sent and dropped), and a blocking one must wait for room,
# so that the receiver, a second preloaded process, counts every datagram, in order.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so preload_udp_full
count=${COUNT:-1500}
simd_start --model "link=10m,tx_ring=64"
timeout 60 "$build/myrio-run" --device "simd:nic1@$sock" --ip 10.0.0.2/24 -- \
	"$build/preload_udp_full" recv 7300 "$count" >"$tmp/recv.log" 2>&1 &
recv=$!
pids+=($recv)
for _ in $(seq 100); do grep -qs listening "$tmp/recv.log" && break; sleep 0.1; done
timeout 60 "$build/myrio-run" --device "simd:nic0@$sock" --ip 10.0.0.1/24 -- \
	"$build/preload_udp_full" send 10.0.0.2 7300 "$count"
rc=$?
wait $recv
rrc=$?
cat "$tmp/recv.log"
[[ $rc -eq 0 && $rrc -eq 0 ]] || { echo "FAIL: sender $rc, receiver $rrc"; exit 1; }
echo "every datagram the sockets reported sent arrived"
