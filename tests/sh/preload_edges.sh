#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The preload layer's edge cases (tests/preload/preload_edges.c) between two preloaded
# processes on the model daemon's cabled NICs: connect refused, non-blocking connect and
# poll, SIGPIPE and MSG_NOSIGNAL, a reset mid-stream, epoll sets mixing a pipe and a
# socket, dup2 over a socket, fork, fd exhaustion, progress while the program sleeps in the
# kernel, and the calls whose answers are the kernel's. Those cases run a second time
# without the preload, on the kernel's sockets over loopback (in a network namespace of
# their own when possible), and must hold there too.
set -uo pipefail
# A second argument runs that case alone.
build=${1:?build directory}
only=${2:-}
for p in myrio-simd myrio-run libmyrio-preload.so preload_edges; do
	[[ -e $build/$p ]] || { echo "no $build/$p"; exit 77; }
done
source "$(dirname "$0")/lib/simd.sh"
simd_start
timeout 120 "$build/myrio-run" --device "simd:nic1@$sock" --ip 10.0.0.2/24 -- \
	"$build/preload_edges" peer >"$tmp/peer.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$tmp/peer.log" && break; sleep 0.1; done
timeout 120 "$build/myrio-run" --device "simd:nic0@$sock" --ip 10.0.0.1/24 -- \
	"$build/preload_edges" cases $only
rc=$?
cat "$tmp/peer.log"

echo "--- the kernel's sockets, the same cases"
kernel_run() {
	local build=$1 tmp=$2 only=$3
	ip link set lo up 2>/dev/null
	export EDGES_PEER_IP=127.0.0.1
	timeout 120 "$build/preload_edges" peer >"$tmp/kpeer.log" 2>&1 &
	local peer=$!
	for _ in $(seq 100); do grep -q listening "$tmp/kpeer.log" && break; sleep 0.1; done
	timeout 120 "$build/preload_edges" kernel $only
	local krc=$?
	kill "$peer" 2>/dev/null
	wait "$peer" 2>/dev/null
	return $krc
}
export -f kernel_run
if unshare -n true 2>/dev/null; then
	unshare -n bash -c 'kernel_run "$@"' _ "$build" "$tmp" "$only"
else
	kernel_run "$build" "$tmp" "$only"
fi
krc=$?
[[ $rc -eq 0 ]] && rc=$krc
exit $rc
