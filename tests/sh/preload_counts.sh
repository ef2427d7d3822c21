#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The preload's sleep counts (MYRIO_PRELOAD_COUNTS=1, docs/preload.md) count what happened:
# - five receives with SO_RCVTIMEO on a socket nothing is sent to each sleep until their
#   timeout (at least 5 sleeps not counted as ended with nothing: a timeout is not), and
#   with MYRIO_SPIN_US=0 none polls before it sleeps (no spin), with MYRIO_SPIN_US=2000 the
#   first does; with python3, left out under the sanitizers (it hangs at start with their
#   runtime);
# - sockperf's UDP ping-pong between two preloaded processes, without the spin
#   (MYRIO_SPIN_US=0): every message is answered, the client sleeps about once per round
#   trip (at least for half of them), and not every sleep ends with nothing.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so
preload_asan_env
simd_start
export MYRIO_PRELOAD_COUNTS=1 MYRIO_SPIN_US=0
A="$asan_env $build/myrio-run --device simd:nic0@$sock --ip 10.0.0.1/24 --"
Z="$asan_env $build/myrio-run --device simd:nic1@$sock --ip 10.0.0.2/24 --"
fail() { echo "FAIL: $*"; exit 1; }
# counts FILE: "SLEEPS EMPTY" from the preload's line at exit; spins FILE: its spins
counts() { sed -n 's/.*sleeps \([0-9]*\), woken with nothing \([0-9]*\).*/\1 \2/p' "$1" | tail -1; }
spins() { sed -n 's/.*sleeps [0-9]*, woken with nothing [0-9]*, spins \([0-9]*\).*/\1/p' "$1" | tail -1; }

if [[ -n $asan_env ]]; then
	echo "skip the timed receives: python3 hangs at start with the ASan runtime preloaded"
elif ! command -v python3 >/dev/null; then
	echo "skip the timed receives: no python3"
else
timed_receives() {
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
print("5 timeouts")' >"$1" 2>&1 || { cat "$1"; fail "the timed receives"; }
}
timed_receives "$tmp/idle.out"
read -r sleeps empty < <(counts "$tmp/idle.out")
spun=$(spins "$tmp/idle.out")
echo "idle: sleeps ${sleeps:-none}, woken with nothing ${empty:-none}, spins ${spun:-none}"
[[ -n ${sleeps:-} && -n $spun ]] || fail "no counts at exit"
((sleeps >= 5)) || fail "5 receives timed out after fewer sleeps ($sleeps)"
# a send report of the stack's own (its first ARP or IGMP frame) may wake one sleep with
# nothing for the socket; the five timeouts must not count as such
((sleeps - empty >= 5)) || fail "timeouts counted as wake-ups with nothing ($empty of $sleeps)"
((spun == 0)) || fail "MYRIO_SPIN_US=0, yet $spun calls polled before they slept"
MYRIO_SPIN_US=2000 timed_receives "$tmp/spin.out"
spun=$(spins "$tmp/spin.out")
echo "idle with MYRIO_SPIN_US=2000: spins ${spun:-none}"
((${spun:-0} >= 1)) || fail "MYRIO_SPIN_US=2000, yet no call polled before it slept"
fi

command -v sockperf >/dev/null || { echo "no sockperf: the ping-pong is skipped"; exit 0; }
$Z sockperf server -i 10.0.0.2 -p 11111 >"$tmp/srv.out" 2>&1 &
srv=$!
pids+=($srv)
sleep 1
timeout 60 $A sockperf ping-pong -i 10.0.0.2 -p 11111 -t 2 -m 32 >"$tmp/pp.out" 2>&1 ||
	{ tail -n 5 "$tmp/pp.out"; fail "the ping-pong"; }
kill -INT "$srv" # an orderly exit prints the server's counts
wait "$srv"
sent=$(sed -n 's/.*Total Run.*SentMessages=\([0-9]*\).*/\1/p' "$tmp/pp.out")
got=$(sed -n 's/.*Total Run.*ReceivedMessages=\([0-9]*\).*/\1/p' "$tmp/pp.out")
read -r sleeps empty < <(counts "$tmp/pp.out")
echo "ping-pong: $got of ${sent:-?} answered; client sleeps ${sleeps:-none}, woken with" \
	"nothing ${empty:-none}; server: $(counts "$tmp/srv.out")"
[[ -n ${got:-} && $got -gt 100 && $((sent - got)) -le 1 ]] || fail "answers missing"
[[ -n ${sleeps:-} ]] || fail "no counts at exit"
# at least once per round trip but for an answer that came while the client was preempted
((sleeps >= got / 2)) || fail "$got answers waited for in $sleeps sleeps"
((empty < sleeps)) || fail "every sleep ended with nothing ($empty of $sleeps)"
echo "ok"
