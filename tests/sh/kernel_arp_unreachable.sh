#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A connect to an on-link address nothing owns, by the Linux kernel and by tcp_lite (a
# preloaded program) on the same link, a TAP cable between them: both must fail with
# EHOSTUNREACH when ARP gives up (3 requests a second apart, about 3 s), not ETIMEDOUT
# after the SYN retries (about 2 minutes). Needs root, /dev/net/tun and network namespaces.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
if grep -q "MYRIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
	# (unit/test_arp_cache runs the same path of the stack under the sanitizers)
	echo "skip: python3 hangs at start with the ASan runtime preloaded"
	exit 77
fi
ns=myrio-au$$
if ! [[ $(id -u) -eq 0 && -c /dev/net/tun ]] || ! ip netns add "$ns" 2>/dev/null; then
	echo "skip: needs root, /dev/net/tun and network namespaces"
	exit 77
fi
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; ip netns del "$ns"; rm -rf "$tmp"' EXIT
tap=mau$$
simd_tap_in_ns "$ns" "$tap" "$tmp/simd.sock" "$tmp/simd.log" 10.0.0.2/24 ||
	{ cat "$tmp/simd.log"; echo "FAIL: TAP setup"; exit 1; }
# Prints "errno seconds" of a blocking connect to 10.0.0.99:80 (0 if it connected).
cat >"$tmp/connect.py" <<'PY'
import socket, time
t = time.monotonic()
s = socket.socket()
s.settimeout(200)
try:
    s.connect(("10.0.0.99", 80))
    print(0, round(time.monotonic() - t, 1))
except OSError as e:
    print(e.errno, round(time.monotonic() - t, 1))
PY
read -r kerr ksec < <(ip netns exec "$ns" python3 "$tmp/connect.py")
read -r merr msec < <(timeout 200 "$build/myrio-run" --device "simd:nic0@$tmp/simd.sock" \
	--ip 10.0.0.1/24 -- python3 "$tmp/connect.py" 2>"$tmp/run.log")
echo "kernel:   errno ${kerr:-none} after ${ksec:-?} s"
echo "tcp_lite: errno ${merr:-none} after ${msec:-?} s"
ehostunreach=$(python3 -c 'import errno; print(errno.EHOSTUNREACH)')
[[ $kerr == "$ehostunreach" ]] || { echo "FAIL: the kernel did not give EHOSTUNREACH"; exit 1; }
if [[ $merr != "$ehostunreach" ]]; then
	tail -n 5 "$tmp/run.log"
	echo "FAIL: tcp_lite did not give EHOSTUNREACH as the kernel did"
	exit 1
fi
# Both near ARP's 3 s; a loaded machine may stretch the preloaded program's.
python3 -c "import sys; sys.exit(0 if 2.5 <= $msec <= 10 else 1)" ||
	{ echo "FAIL: tcp_lite took $msec s, the kernel $ksec s"; exit 1; }
echo "PASS: both EHOSTUNREACH at ARP's give-up"
