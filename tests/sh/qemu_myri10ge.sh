#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Linux's own myri10ge driver judges the device model: builds QEMU 7.2 (Debian's source) with
# the model as a PCI device (tests/qemu/build-qemu.sh, cached), boots Debian's 6.1 kernel in
# a TCG guest (q35, emulated Intel IOMMU) with two model NICs joined by one model cable, and
# runs tests/qemu/init-myri10ge.sh there: the kernel's myri10ge probes both (adopting the
# running firmware, then again with myrio-mkfw images through handoff), each NIC in its own
# network namespace: pings up to 8972 bytes, UDP, checked TCP streams each way at MTU 1500
# and 9000 with the driver's offloads on and off, counters, link down/up, unload/reload.
#
# usage: qemu_myri10ge.sh BUILD_DIR    exit 0 pass, 77 skip (QEMU's source or the guest
# kernel cannot be fetched), else fail. MYRIO_MYRI10GE_BYTES: each stream's length.
set -euo pipefail
build=$(cd "${1:?usage: qemu_myri10ge.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MYRIO_QEMU_CACHE:-$src/tests/qemu/cache}
out=$build/qemu-myri10ge
bytes=${MYRIO_MYRI10GE_BYTES:-50000000}
start=$SECONDS
mkdir -p "$out"

rc=0
qemu=$(bash "$src/tests/qemu/build-qemu.sh" "$src" | tail -n 1) || rc=$?
if ((rc == 77)); then
	echo "qemu_myri10ge: SKIP: QEMU's source package cannot be fetched"
	exit 77
fi
((rc == 0)) || { echo "qemu_myri10ge: building QEMU with the model device failed"; exit 1; }
echo "qemu_myri10ge: QEMU with the model device ready after $((SECONDS - start)) s"

rc=0
bash "$src/tests/qemu/fetch-kernel.sh" "$cache" >/dev/null || rc=$?
if ((rc == 77)); then
	echo "qemu_myri10ge: SKIP: the guest kernel cannot be fetched"
	exit 77
fi
((rc == 0)) || exit 1
t=$SECONDS
bash "$src/tests/qemu/build-guest.sh" "$src" "$cache" "$out" "$src/tests/qemu/init-myri10ge.sh"
# Firmware images for the second probe, under the names Linux asks for.
gcc -O2 -std=gnu11 -D_GNU_SOURCE -I"$src/src" -I"$src/include" -o "$out/myrio-mkfw" \
	"$src/tools/myrio-mkfw.c" "$out/libmyrio_guest.a"
mkdir -p "$out/initramfs/fw"
for f in eth ethp rss_eth rss_ethp; do
	"$out/myrio-mkfw" "$f" "$out/initramfs/fw/myri10ge_${f}_z8e.dat"
done
(cd "$out/initramfs" && find . | cpio -o -H newc --quiet) >"$out/initramfs.cpio"
echo "qemu_myri10ge: guest built in $((SECONDS - t)) s"

t=$SECONDS
rc=0
source "$src/tests/qemu/guest-args.sh"
guest_args "$out" 1G "myrio_bytes=$bytes"
# The binary was built outside a QEMU install: the firmware is the system's.
timeout --foreground -k 5 1200 "$qemu" -L /usr/share/qemu -L /usr/share/seabios "${GUEST_ARGS[@]}" \
	-device myri10ge-model,cable=c0,addr=0x10 -device myri10ge-model,cable=c0,addr=0x11 \
	</dev/null >"$out/console.log" 2>&1 || rc=$?
grep -a '^guest:\|MYRIO-MYRI10GE\|myri10ge-model\|^qemu' "$out/console.log" | tr -d '\r'
echo "qemu_myri10ge: QEMU exited with $rc after $((SECONDS - t)) s"

log=$out/console.log
result=$(grep -a 'MYRIO-MYRI10GE-RESULT:' "$log" | tr -d '\r' | tail -n 1 || true)
if [[ $result != *"RESULT: PASS"* ]]; then
	echo "qemu_myri10ge: ${result:-no result line from the guest}"
	tail -n 25 "$log" | tr -d '\r' | sed 's/^/  | /'
	exit 1
fi
# Every checked stream arrived whole (the guest fails on any, this says how many ran).
n=$(grep -ac "guest: .* [ab]->[ab]: tcp_pattern: recv $bytes bytes ok" "$log" || true)
((n == 10)) || { echo "qemu_myri10ge: $n of 10 streams arrived intact"; exit 1; }
# Linux's driver said nothing amiss (kernel level warning or worse). The first probe adopts
# the running firmware on purpose, after the firmware loader found no image, and says so.
adopt_ok='firmware: failed to load (myri10ge_eth_z8e.dat|adopted) \(-2\)|Direct firmware load for (myri10ge_eth_z8e.dat|adopted) failed|hotplug firmware loading failed|Using firmware currently running|performance consider loading|via hotplug'
{
	grep -a 'guest: kmsg adopt: <[0-4]>.*myri10ge' "$log" | grep -avE "$adopt_ok" || true
	grep -a 'guest: kmsg \(images\|vfio\): <[0-4]>.*myri10ge' "$log" || true
	grep -a 'guest: kmsg [a-z]*: <[0-4]>.*\(vfio\|DMAR.*fault\)' "$log" || true
} | tr -d '\r' >"$out/warnings"
if [[ -s $out/warnings ]]; then
	echo "qemu_myri10ge: myri10ge complained:"
	cat "$out/warnings"
	exit 1
fi
# libmyrio's driver through vfio-pci: the kernel's stream arrived whole in stream_recv, and
# stream_send's in the kernel (the guest fails on either; this says the steps ran).
grep -aq "guest: stream_recv: summary: $bytes bytes .* 0 bad, 0 lost" "$log" &&
	grep -aq 'guest: libmyrio->kernel: tcp_pattern: recv [1-9][0-9]* bytes ok' "$log" ||
	{ echo "qemu_myri10ge: libmyrio's streams over VFIO did not both arrive intact"; exit 1; }
echo "qemu_myri10ge: PASS in $((SECONDS - start)) s"
