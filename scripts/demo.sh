#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The demo: set-up, build, then libmyrio on the Myri-10G device model —
#   1. a TCP stream between two model NICs of one process (myrio-perf TCP_STREAM),
#   2. the same between two processes, each attached to a NIC of the model daemon
#      (stream_send / stream_recv, every byte checked),
#   3. UDP and TCP round trips across two ports joined by a cable (latency_loopback).
# About a minute once set-up and build are done; exits 0 on success. Needs root (set-up).
#
#   scripts/demo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
export MYRIO_LOG=${MYRIO_LOG:-1}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "set-up (packages, hugepages)"
bash scripts/setup.sh
step "build"
bash scripts/build.sh "$B" | tail -1

step "1. TCP_STREAM for 4 s between model NICs sim0 and sim1 (10 Gb/s link, MTU 9000)"
"$B/myrio-perf" -t TCP_STREAM -l 4 --mtu 9000

step "2. TCP stream between two processes through the model daemon (simd:nic0 -> simd:nic1)"
if [[ -x $B/myrio-simd ]]; then
	bench/demo_stream.sh "$B" 4 1500
else
	echo "myrio-simd not built: skipped"
fi

step "3. UDP and TCP round trips across two ports joined by a cable (model, 10 Gb/s link)"
"$B/latency_loopback" -n 100000 -s 32

step "demo done"
