#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Cables into the Linux kernel, at the daemon level: a TAP cable whose device is moved into
# a network namespace, and an AF_PACKET cable on one end of a veth pair with the daemon
# itself inside a namespace. The kernel's frames (ARP requests) must reach the cables
# (counted in `myrio-simd status`), and the TAP device must go away with the daemon.
# Needs root; exits 77 (skipped) otherwise. Usage: simd_kernel_cables.sh BUILD_DIR
set -u
build=${1:?build dir}
simd=$build/myrio-simd
if [ "$(id -u)" -ne 0 ] || [ ! -e /dev/net/tun ] || ! command -v ip >/dev/null; then
	echo "skipped: needs root, /dev/net/tun and iproute2"
	exit 77
fi
if ! ip netns add "myrio-probe-$$" 2>/dev/null; then
	echo "skipped: cannot create network namespaces"
	exit 77
fi
ip netns del "myrio-probe-$$"

tmp=$(mktemp -d /tmp/myrio-simd-kc.XXXXXX)
ns=myrio-kc$$
tap=mkt$$
pid=
# The kernel sends an ARP request for a neighbour it does not know: a UDP datagram to an
# address on the link is enough (no ping needed).
kernel_sends() {
	ip netns exec "$ns" bash -c "for i in 1 2 3; do echo x >/dev/udp/$1/9; sleep 0.2; done" \
		2>/dev/null
}
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	ip link del "$tap" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$tmp/log" 2>/dev/null; exit 1; }

wait_socket() {
	for _ in $(seq 100); do
		"$simd" status --socket "$1" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

# Column 4 (FROM KERNEL) of the kernel-end line for a NIC in the status report.
from_kernel() {
	"$simd" status --socket "$1" | awk -v nic="$2" '$1 == nic && $2 ~ /^(tap|packet):/ { print $4 }'
}

ip netns add "$ns" || fail "ip netns add"
# No IPv6 chatter: the only frames the kernel sends are the ones this test asks for.
ip netns exec "$ns" sh -c 'for f in all default; do
	echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6; done' 2>/dev/null

# --- TAP ---
sock=$tmp/tap.sock
"$simd" --socket "$sock" --nic "nic0,cable=tap:$tap" --nic "nic1,cable=nic2" --nic nic2 \
	>"$tmp/log" 2>&1 &
pid=$!
wait_socket "$sock" || fail "daemon did not come up"
ip link show "$tap" >/dev/null 2>&1 || fail "TAP device $tap not created"
ip link set "$tap" netns "$ns" || fail "moving $tap into $ns"
ip -n "$ns" link set "$tap" up
ip -n "$ns" addr add 10.212.0.1/24 dev "$tap"
[ "$(from_kernel "$sock" nic0)" = 0 ] || fail "frames from the kernel before it sent any"
kernel_sends 10.212.0.2
n=$(from_kernel "$sock" nic0)
echo "tap: $n frames from the kernel"
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "no kernel frame reached the TAP cable"
"$simd" status --socket "$sock"
kill -TERM "$pid"; wait "$pid" || fail "daemon exit status"
pid=
ip -n "$ns" link show "$tap" >/dev/null 2>&1 && fail "TAP device outlived the daemon"

# --- AF_PACKET on a veth pair, daemon inside the namespace ---
sock=$tmp/pkt.sock
ip -n "$ns" link add mv0 type veth peer name mv1 || fail "veth"
ip -n "$ns" link set mv0 up
ip -n "$ns" link set mv1 up
ip -n "$ns" addr add 10.212.1.1/24 dev mv1
ip netns exec "$ns" "$simd" --socket "$sock" --nic "nic0,cable=packet:mv0" >"$tmp/log" 2>&1 &
pid=$!
wait_socket "$sock" || fail "daemon did not come up in the namespace"
[ "$(from_kernel "$sock" nic0)" = 0 ] || fail "frames from the kernel before it sent any"
kernel_sends 10.212.1.2
n=$(from_kernel "$sock" nic0)
echo "packet: $n frames from the kernel"
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "no kernel frame reached the AF_PACKET cable"
# A missing interface is a clear error, not a crash.
"$simd" --socket "$tmp/bad.sock" --nic "nic0,cable=packet:nonexistent0" >"$tmp/log2" 2>&1
[ $? -ne 0 ] || fail "daemon started on a missing interface"
grep -q "no such interface" "$tmp/log2" || fail "no clear message: $(cat "$tmp/log2")"
kill -TERM "$pid"; wait "$pid" || fail "daemon exit status"
pid=
echo PASS
