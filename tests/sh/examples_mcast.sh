#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/mcast_send and mcast_recv as two processes on two NICs of the model daemon, no
# root needed: three sockets share the receiving port and join two groups; each gets every
# datagram sent to either group, byte-exact, and nothing of a group none joined (which the
# receiving NIC's filter drops). tests/sh/kernel_mcast.sh runs them with the kernel.
set -euo pipefail
build=${1:?build directory}
# shellcheck source=lib/simd.sh
. "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd mcast_send mcast_recv
export MYRIO_LOG=1
simd_start

# The receiver ends once each socket has its 3000 (the 280 s cap only ends a hang: not a
# window the senders must fit in). The group none joined is sent first: the frames follow one path in
# order, so by the time the last wanted datagram is in, its 500 have all met the receiving NIC,
# whose filter must have dropped every one (its counter says so); none may reach a socket.
timeout 300 "$build/mcast_recv" --groups 239.2.0.1,239.2.0.2 --sockets 3 --count 3000 \
  --seconds 280 "simd:nic1@$sock" >"$tmp/recv.log" 2>&1 &
rpid=$!
for _ in $(seq 600); do grep -q joined "$tmp/recv.log" && break; sleep 0.1; done
grep -q joined "$tmp/recv.log" || { cat "$tmp/recv.log"; exit 1; }
"$build/mcast_send" --group 239.2.0.9 --count 500 --rate 20000 "simd:nic0@$sock" # joined by none
"$build/mcast_send" --group 239.2.0.1 --count 2000 --rate 20000 --size 1000 "simd:nic0@$sock"
"$build/mcast_send" --group 239.2.0.2 --count 1000 --rate 20000 "simd:nic0@$sock"
wait $rpid || { cat "$tmp/recv.log" "$tmp/simd.log"; exit 1; }
cat "$tmp/recv.log"
grep -q "socket0 3000 got 0 lost 0 bad; socket1 3000 got 0 lost 0 bad; socket2 3000 got 0 lost 0 bad" \
  "$tmp/recv.log"
grep -q "nic_dropped_multicast_filtered 500$" "$tmp/recv.log"
echo ok
