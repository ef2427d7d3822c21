#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Raw frame rate of the Myri-10G driver against the device model, and the driver's cost in
# instructions per packet.
#
#   bench/raw_rate.sh [BUILD_DIR] [SECONDS]
#
# 1. 60-byte frames (64 on the wire with FCS) between two ports over an unlimited model
#    link: target 14.88 Mpps (the 10 GbE line rate for minimum frames).
# 2. 1514-byte frames (1518 with FCS) over the 10 Gb/s model link: target >= 99% of
#    812,744 frames/s.
# 3. The same sizes on the stepped model over its 10 Gb/s link, counted in model time: the
#    driver's share of the rate, independent of the host's CPU load.
# 4. callgrind, stepped model: instructions executed inside myrio_rx_burst + myrio_tx_burst
#    per packet (each packet is sent once and received once); target <= 100
#    (bench/stack_cost.sh, which also counts the TCP paths).
# The model runs on its own thread (spinning) and this benchmark on another core: on a
# 2-core machine shared with other work the figures are noisy; run it on an idle machine.
set -euo pipefail
B=${1:-build}
T=${2:-3}
bench=$B/myrio-rawbench
[ -x "$bench" ] || { echo "build first: $bench not found" >&2; exit 1; }

echo "== 1. 60-byte frames, unlimited link (target 14.88 Mpps)"
$bench rate -s 60 -t "$T" -l unlimited

echo "== 2. 1514-byte frames, 10 Gb/s link (target >= 804,617 frames/s = 99% of 812,744)"
out=$($bench rate -s 1514 -t "$T" -l 10g)
echo "$out"
fps=$(sed -n 's/.*: \([0-9]*\) frames\/s.*/\1/p' <<<"$out")
awk -v f="$fps" 'BEGIN { printf "   %.2f%% of 812,744 frames/s\n", f * 100 / 812744 }'

echo "== 3. the same two cases in model time (stepped model, 10 Gb/s link, 1 us per round):"
echo "   does the driver keep the link busy, whatever the host's load"
$bench line -s 60
$bench line -s 1514

echo "== 4. instructions per packet in myrio_rx_burst + myrio_tx_burst (callgrind, stepped)"
"$(dirname "$0")/stack_cost.sh" "$B" 1 driver
