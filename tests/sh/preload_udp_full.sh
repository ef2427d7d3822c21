#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# UDP sends into a full send queue through the preload (tests/preload/udp_full.c): over a
# 10 Mb/s cable of the model daemon with a send ring of 64, a non-blocking socket must get
# EAGAIN (not datagrams reported sent and dropped), then see POLLOUT off and back, and a
# blocking one must wait for room, so that the receiver, a second preloaded process, counts
# every datagram, in order. The sender exits right after its last send (then closes and
# _exits, the second time): the datagrams still queued to the NIC must not be lost to that.
# Then a burst of fragmented datagrams must wait, whole, for a receiver that reads late.
# With root, the same program on the kernel's sockets through a veth limited to 10 Mb/s
# (tbf) between two network namespaces must pass too.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so preload_udp_full
count=${COUNT:-1500}
simd_start --model "link=10m,tx_ring=64"
run_pair() { # PORT END
	timeout 60 "$build/myrio-run" --device "simd:nic1@$sock" --ip 10.0.0.2/24 -- \
		"$build/preload_udp_full" recv "$1" "$count" >"$tmp/recv.log" 2>&1 &
	local recv=$!
	pids+=($recv)
	for _ in $(seq 100); do grep -qs listening "$tmp/recv.log" && break; sleep 0.1; done
	timeout 60 "$build/myrio-run" --device "simd:nic0@$sock" --ip 10.0.0.1/24 -- \
		"$build/preload_udp_full" send 10.0.0.2 "$1" "$count" "$2"
	local rc=$?
	wait $recv
	local rrc=$?
	cat "$tmp/recv.log"
	[[ $rc -eq 0 && $rrc -eq 0 ]] || { echo "FAIL ($2): sender $rc, receiver $rrc"; exit 1; }
}
run_pair 7300 exit
run_pair 7301 close
echo "every datagram the sockets reported sent arrived"

# A burst of datagrams in fragments that the receiver reads only once it is over: all must
# have been kept (reassembled datagrams hold buffers of their own until read). RUN WRAP
# IP: the receiver (a command prefix), the sender's prefix, the receiver's address.
burst=${BURST:-32}
hold_burst() {
	local rx=$1 tx=$2 ip=$3
	rm -f "$tmp/go"
	mkfifo "$tmp/go"
	timeout 60 $rx "$build/preload_udp_full" hold 7302 "$burst" <"$tmp/go" >"$tmp/hold.log" 2>&1 &
	local recv=$!
	pids+=($recv)
	exec 9>"$tmp/go"
	for _ in $(seq 100); do grep -qs listening "$tmp/hold.log" && break; sleep 0.1; done
	timeout 60 $tx "$build/preload_udp_full" burst "$ip" 7302 "$burst"
	local rc=$?
	echo go >&9
	exec 9>&-
	wait $recv
	local rrc=$?
	cat "$tmp/hold.log"
	[[ $rc -eq 0 && $rrc -eq 0 ]] || { echo "FAIL (held burst): sender $rc, receiver $rrc"; exit 1; }
}
hold_burst "$build/myrio-run --device simd:nic1@$sock --ip 10.0.0.2/24 --" \
	"$build/myrio-run --device simd:nic0@$sock --ip 10.0.0.1/24 --" 10.0.0.2

# ---- the kernel's sockets, the same program ----
na=myrio-ufa$$ nb=myrio-ufb$$
if ! [[ $(id -u) -eq 0 ]] || ! command -v tc >/dev/null || ! ip netns add "$na" 2>/dev/null; then
	echo "skip: the kernel's sockets (needs root, tc, network namespaces)"
	exit 0
fi
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; ip netns del "$na"; ip netns del "$nb" 2>/dev/null; rm -rf "$tmp"' EXIT
ip netns add "$nb" &&
	ip link add ufa$$ netns "$na" type veth peer name ufb$$ netns "$nb" &&
	ip -n "$na" addr add 10.9.0.1/24 dev ufa$$ && ip -n "$nb" addr add 10.9.0.2/24 dev ufb$$ &&
	ip -n "$na" link set ufa$$ up && ip -n "$nb" link set ufb$$ up &&
	ip netns exec "$na" tc qdisc add dev ufa$$ root tbf rate 10mbit burst 16kb limit 8mb ||
	{ echo "FAIL: veth setup"; exit 1; }
ip netns exec "$nb" timeout 60 "$build/preload_udp_full" recv 7300 "$count" >"$tmp/krecv.log" 2>&1 &
recv=$!
pids+=($recv)
for _ in $(seq 100); do grep -qs listening "$tmp/krecv.log" && break; sleep 0.1; done
ip netns exec "$na" timeout 60 "$build/preload_udp_full" send 10.9.0.2 7300 "$count" exit
rc=$?
wait $recv
rrc=$?
cat "$tmp/krecv.log"
[[ $rc -eq 0 && $rrc -eq 0 ]] || { echo "FAIL (kernel): sender $rc, receiver $rrc"; exit 1; }
hold_burst "ip netns exec $nb" "ip netns exec $na" 10.9.0.2
echo "the kernel's sockets agree"
