#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What one interposed call costs the program in the preload layer: instructions per
# getsockopt(SO_TYPE) on an accelerated UDP socket (the lock, the table, the socket's use),
# under callgrind, from a python3 loop run by myrio-run on the model daemon. Deterministic
# enough to compare two builds on a loaded machine, where times are not.
#
#   bench/preload_call_cost.sh [BUILD_DIR] [CALLS]      (default build, 20000)
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
N=${2:-20000}
for p in myrio-simd myrio-run libmyrio-preload.so; do
	[[ -e $B/$p ]] || { echo "build first: $B/$p not found" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 1; }
# the interpreter itself, not a wrapper script that would start it (pyenv's shims)
py=$(python3 -c 'import sys; print(sys.executable)') || { echo "python3 not installed" >&2; exit 1; }
tmp=$(mktemp -d)
"$B/myrio-simd" --socket "$tmp/simd.sock" >"$tmp/simd.log" 2>&1 &
simd=$!
trap 'kill $simd 2>/dev/null; wait 2>/dev/null; [[ -n ${KEEP:-} ]] || rm -rf "$tmp"' EXIT
for _ in $(seq 50); do [[ -S $tmp/simd.sock ]] && break; sleep 0.1; done

source "$(dirname "$0")/callgrind.sh"
"$B/myrio-run" --device "simd:nic0@$tmp/simd.sock" --ip 10.0.0.1/24 -- \
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=getsockopt \
	"$py" -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('0.0.0.0', 7400))
for _ in range($N):
    s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE)
" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
total=$(incl "$tmp/cg" getsockopt)
awk -v t="$total" -v n="$N" 'BEGIN { printf "getsockopt(SO_TYPE): %.1f instructions per call (%d calls)\n", t / n, n }'
