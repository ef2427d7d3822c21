#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two preloaded processes, each with its own model NIC (MYRIO_DEVICE=sim+shm:NAME/0 and
# /1, MYRIO_SPIN=1), cabled through shared memory (docs/preload.md, "A model of the
# process's own"):
# - TCP: socat echoes a 1 MB random file back to a socat client, byte-exact;
# - UDP: sockperf ping-pong with --data-integrity, every message answered;
# - without MYRIO_SPIN the device is refused (the program runs on the kernel's sockets);
# - nothing of the cable is left in /dev/shm.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-run libmyrio-preload.so
preload_asan_env
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"; rm -f /dev/shm/myrio-shm-$cable*' EXIT
cable=preload_shm.$$
fail() { echo "FAIL: $*"; exit 1; }
export MYRIO_SPIN=1
A="$asan_env $build/myrio-run --device sim+shm:$cable.tcp/0 --ip 10.0.0.1/24 --"
B="$asan_env $build/myrio-run --device sim+shm:$cable.tcp/1 --ip 10.0.0.2/24 --"
# wait_for FILE TEXT: until the file holds the text (a server is ready), 60 s at most
wait_for() {
	for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	cat "$1"
	fail "no '$2' in $1"
}

if command -v socat >/dev/null; then
	head -c 1000000 /dev/urandom >"$tmp/file"
	timeout 120 $B socat -d -d TCP4-LISTEN:6000,reuseaddr PIPE >"$tmp/srv.log" 2>&1 &
	pids+=($!)
	wait_for "$tmp/srv.log" "listening on"
	# the client's connect is retried until the server's NIC answers
	timeout 120 $A socat -t 5 - TCP4:10.0.0.2:6000,retry=100,interval=0.2 <"$tmp/file" \
		>"$tmp/echo" 2>"$tmp/cli.log" || { cat "$tmp/cli.log"; fail "socat client"; }
	cmp -s "$tmp/file" "$tmp/echo" ||
		fail "TCP echo: $(stat -c %s "$tmp/echo") bytes back of 1000000, or they differ"
	echo "TCP echo: 1000000 bytes there and back, byte-exact"
else
	echo "skip TCP: no socat"
fi

if command -v sockperf >/dev/null; then
	A="$asan_env $build/myrio-run --device sim+shm:$cable.udp/0 --ip 10.0.0.1/24 --"
	B="$asan_env $build/myrio-run --device sim+shm:$cable.udp/1 --ip 10.0.0.2/24 --"
	$B sockperf server -i 10.0.0.2 -p 11111 >"$tmp/pps.log" 2>&1 &
	srv=$!
	pids+=($srv)
	wait_for "$tmp/pps.log" "to block on socket"
	timeout 120 $A sockperf ping-pong -i 10.0.0.2 -p 11111 -t 2 -m 200 --data-integrity \
		>"$tmp/pp.log" 2>&1 || { tail -n 5 "$tmp/pp.log"; fail "sockperf ping-pong"; }
	# a blocking call that busy-polls does not return EINTR: SIGINT would not end the server
	kill -KILL "$srv"
	wait "$srv" 2>/dev/null
	grep -qi "integrity.*fail\|data integrity error" "$tmp/pp.log" && fail "UDP: data integrity"
	sent=$(sed -n 's/.*Total Run.*SentMessages=\([0-9]*\).*/\1/p' "$tmp/pp.log")
	got=$(sed -n 's/.*Total Run.*ReceivedMessages=\([0-9]*\).*/\1/p' "$tmp/pp.log")
	echo "UDP ping-pong: $got of ${sent:-?} answered, payloads checked"
	[[ -n ${got:-} && $got -gt 100 && $((sent - got)) -le 1 ]] || fail "answers missing"
else
	echo "skip UDP: no sockperf"
fi

# without the spin, the device is refused with a line that says why
MYRIO_SPIN=0 timeout 60 $asan_env $build/myrio-run --device sim+shm:$cable.nospin/0 \
	--ip 10.0.0.1/24 -- socat -u /dev/null UDP4-SENDTO:10.0.0.2:9 >"$tmp/nospin.log" 2>&1
grep -q "MYRIO_SPIN=1" "$tmp/nospin.log" || { cat "$tmp/nospin.log"; fail "no refusal without the spin"; }
echo "without MYRIO_SPIN: refused ($(grep -m1 MYRIO_SPIN=1 "$tmp/nospin.log"))"

left=$(ls /dev/shm | grep -F "myrio-shm-$cable")
[[ -z $left ]] || fail "left in /dev/shm: $left"
echo "ok"
