#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run by tests/sh/qemu_myri10ge.sh in a network namespace of its own (unshare -n), so that
# its TAP and addresses meet nothing else on the machine: the TAP guest (init-myri10ge.sh,
# myrio_phase=tap, pci=nomsi) with one model NIC whose cable ends at a QEMU tap netdev,
# and the host kernel at 10.10.0.1 on the TAP: a checked TCP stream of BYTES each way.
#
# usage: run-tap-guest.sh QEMU OUT BYTES   leaves OUT/tap-console.log, tap-host-*.log
set -uo pipefail
qemu=$1 out=$2 bytes=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
tap=myrtap0
ip link set lo up
ip tuntap add dev $tap mode tap || exit 1
ip addr add 10.10.0.1/24 dev $tap
ip link set $tap up
"$out/tcp_pattern" recv 5010 "$bytes" >"$out/tap-host-recv.log" 2>&1 &
recv=$!
# the guest listens once its link is up: try until it does
(for _ in $(seq 1 600); do
	"$out/tcp_pattern" send 10.10.0.2 5011 "$bytes" >"$out/tap-host-send.log" 2>&1 && exit 0
	sleep 1
done; exit 1) &
send=$!
source "$src/tests/qemu/guest-args.sh"
guest_args "$out" 512M pci=nomsi myrio_phase=tap "myrio_tap_bytes=$bytes"
rc=0
timeout --foreground -k 5 600 "$qemu" -L /usr/share/qemu -L /usr/share/seabios "${GUEST_ARGS[@]}" \
	-netdev tap,id=n0,ifname=$tap,script=no,downscript=no \
	-device myri10ge-model,netdev=n0,addr=0x10 </dev/null >"$out/tap-console.log" 2>&1 || rc=$?
kill $send 2>/dev/null
wait $send
s=$?
timeout 10 tail --pid=$recv -f /dev/null
kill $recv 2>/dev/null
wait $recv
r=$?
echo "host: send exit $s: $(cat "$out/tap-host-send.log")"
echo "host: recv exit $r: $(cat "$out/tap-host-recv.log")"
exit $rc
