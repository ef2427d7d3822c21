#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A preloaded listener whose accept queue is full resets nobody: as Linux with
# tcp_abort_on_overflow=0, the handshakes wait (SYNs and final ACKs dropped, SYN-ACKs
# retransmitted) and complete once the program accepts (docs/preload.md). A server with
# backlog 1 that accepts every 10 ms (tests/preload/accept_slow.py), 200 connects from the
# Linux kernel through a TAP cable: every one must echo. Then the kernel as the server (its
# queue holds 2, so each connect past it waits a SYN retransmission: 40 connects), a
# preloaded client: the same. Then MYRIO_MAX_UDP and MYRIO_MAX_TCP at 2: the third is ENOBUFS.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
[[ $(id -u) -eq 0 && -c /dev/net/tun ]] || { echo "skip: needs root and /dev/net/tun"; exit 77; }
preload_asan_env
prog=$(dirname "$0")/../preload/accept_slow.py
n=${CONNS:-200}
tmp=$(mktemp -d)
pids=()
ns=myrio-ao$$
ip netns add "$ns" || { echo "FAIL: netns"; exit 1; }
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; ip netns del "$ns"; rm -rf "$tmp"' EXIT
simd_tap_in_ns "$ns" mao$$ "$tmp/simd.sock" "$tmp/simd.log" 10.0.0.2/24 ||
	{ cat "$tmp/simd.log"; echo "FAIL: TAP setup"; exit 1; }
P="$asan_env $build/myrio-run --device simd:nic0@$tmp/simd.sock --ip 10.0.0.1/24 --"
K=(ip netns exec "$ns")
listening() { for _ in $(seq 600); do grep -qs listening "$1" && return 0; sleep 0.1; done; return 1; }

# pair NAME SERVER-PREFIX SERVER-IP CLIENT-PREFIX CONNECTS
pair() {
	local n=$5
	timeout 300 $2 python3 "$prog" server "$3" 7400 "$n" >"$tmp/$1.srv" 2>&1 &
	local srv=$!
	pids+=($srv)
	listening "$tmp/$1.srv" || { cat "$tmp/$1.srv"; echo "FAIL ($1): no listener"; exit 1; }
	timeout 300 $4 python3 "$prog" client "$3" 7400 "$n"
	local rc=$?
	wait $srv
	local src=$?
	cat "$tmp/$1.srv"
	[[ $rc -eq 0 && $src -eq 0 ]] || { echo "FAIL ($1): client $rc, server $src"; exit 1; }
}
pair preloaded-server "$P" 10.0.0.1 "${K[*]}" "$n"
[[ ${KERNEL_SERVER:-1} == 1 ]] && pair kernel-server "${K[*]}" 10.0.0.2 "$P" 40
echo "connections to a slow acceptor with backlog 1: none reset"

# The table sizes are settable; past them, ENOBUFS (tests/preload/limits.py).
timeout 120 "${K[@]}" python3 "$prog" server 10.0.0.2 7401 2 >"$tmp/lim.srv" 2>&1 &
pids+=($!)
listening "$tmp/lim.srv" || { cat "$tmp/lim.srv"; echo "FAIL (limits): no listener"; exit 1; }
MYRIO_MAX_UDP=2 MYRIO_MAX_TCP=2 timeout 120 $P python3 "$(dirname "$0")/../preload/limits.py" \
	10.0.0.2 7401 || { echo "FAIL: MYRIO_MAX_UDP/MYRIO_MAX_TCP"; exit 1; }
