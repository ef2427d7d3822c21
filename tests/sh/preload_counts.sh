#!/usr/bin/env bash
# The preload's sleep counts (MYRIO_PRELOAD_COUNTS=1, docs/preload.md) count what happened:
# - five receives with SO_RCVTIMEO on a socket nothing is sent to each sleep until their
#   timeout (at least 5 sleeps, none counted as ended with nothing: a timeout is not);
# - a ping-pong of ROUNDS datagrams between two preloaded processes, without the spin
#   (MYRIO_SPIN_US=0): the client sleeps at least once per round trip, every datagram is
#   echoed, and the sleeps that ended with nothing are fewer than the sleeps.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
preload_asan_env
simd_start
export MYRIO_PRELOAD_COUNTS=1 MYRIO_SPIN_US=0
A="$asan_env $build/myrio-run --device simd:nic0@$sock --ip 10.0.0.1/24 --"
Z="$asan_env $build/myrio-run --device simd:nic1@$sock --ip 10.0.0.2/24 --"
rounds=${ROUNDS:-300}
fail() { echo "FAIL: $*"; exit 1; }
# counts FILE: "SLEEPS EMPTY" from the preload's line at exit
counts() { sed -n 's/.*sleeps \([0-9]*\), woken with nothing \([0-9]*\).*/\1 \2/p' "$1" | tail -1; }

timeout 60 $A python3 -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.0.1", 7001))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 100000))
for _ in range(5):
    try:
        s.recv(64)
        raise SystemExit("a datagram nobody sent")
    except BlockingIOError:
        pass
print("5 timeouts")' >"$tmp/idle.out" 2>&1 || { cat "$tmp/idle.out"; fail "the timed receives"; }
read -r sleeps empty < <(counts "$tmp/idle.out")
echo "idle: sleeps ${sleeps:-none}, woken with nothing ${empty:-none}"
[[ -n ${sleeps:-} ]] || fail "no counts at exit"
((sleeps >= 5)) || fail "5 receives timed out after fewer sleeps ($sleeps)"
((empty == 0)) || fail "a timeout counted as a wake-up with nothing ($empty)"

timeout 60 $Z python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.0.2", 7000))
while True:
    d, a = s.recvfrom(64)
    s.sendto(d, a)
    if d == b"end":
        break' >"$tmp/echo.out" 2>&1 &
pids+=($!)
echo_pid=$!
sleep 1
timeout 60 $A python3 -c '
import socket, sys
n = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.0.1", 7002))
for i in range(n):
    s.sendto(b"%d" % i, ("10.0.0.2", 7000))
    d = s.recv(64)
    if d != b"%d" % i:
        raise SystemExit("round %d: %r came back" % (i, d))
s.sendto(b"end", ("10.0.0.2", 7000))
print("%d echoed" % n)' "$rounds" >"$tmp/pp.out" 2>&1 || { cat "$tmp/pp.out"; fail "the ping-pong"; }
wait "$echo_pid" || { cat "$tmp/echo.out"; fail "the echo server"; }
read -r sleeps empty < <(counts "$tmp/pp.out")
echo "ping-pong of $rounds: client sleeps ${sleeps:-none}, woken with nothing ${empty:-none};" \
	"server: $(counts "$tmp/echo.out")"
[[ -n ${sleeps:-} ]] || fail "no counts at exit"
((sleeps >= rounds)) || fail "$rounds answers waited for in fewer sleeps ($sleeps)"
((empty < sleeps)) || fail "every sleep ended with nothing ($empty of $sleeps)"
echo "ok"
