#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Linux's own myri10ge driver judges the device model: builds QEMU 7.2 (Debian's source) with
# the model as a PCI device (tests/qemu/build-qemu.sh, cached), boots Debian's 6.1 kernel in
# a TCG guest (q35, emulated Intel IOMMU) with two model NICs joined by one model cable, and
# runs tests/qemu/init-myri10ge.sh there: the kernel's myri10ge probes both (adopting the
# running firmware, then again with myrio-mkfw images through handoff), each NIC in its own
# network namespace: pings up to 8972 bytes, UDP, checked TCP streams each way at MTU 1500
# and 9000 with the driver's offloads on and off, counters checked against what was sent,
# 20 multicast groups, promiscuous and all-multicast, link down/up, unload/reload. Then
# libmyrio's driver on one NIC through vfio-pci (MSI, the IOMMU, an unmapped IOVA that the
# watchdog recovers from, UDP echo both ways, the raw example across both NICs). A second,
# short boot without MSI (pci=nomsi: Linux's driver on INTx) has its NIC's cable on a QEMU
# tap netdev, with the host kernel at the other end (tests/qemu/run-tap-guest.sh).
#
# usage: qemu_myri10ge.sh BUILD_DIR    exit 0 pass, 77 skip (QEMU's source or the guest
# kernel cannot be fetched), else fail. MYRIO_MYRI10GE_BYTES: each stream's length.
set -euo pipefail
build=$(cd "${1:?usage: qemu_myri10ge.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MYRIO_QEMU_CACHE:-$src/tests/qemu/cache}
out=$build/qemu-myri10ge
bytes=${MYRIO_MYRI10GE_BYTES:-50000000}
tap_bytes=${MYRIO_MYRI10GE_TAP_BYTES:-5000000}
start=$SECONDS
mkdir -p "$out"

# shellcheck source=../qemu/model-qemu.sh
. "$src/tests/qemu/model-qemu.sh"
model_qemu qemu_myri10ge "$src"
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
((n == 12)) || { echo "qemu_myri10ge: $n of 12 streams arrived intact"; exit 1; }
# Linux's driver said nothing amiss (kernel level warning or worse). The first probe adopts
# the running firmware on purpose, after the firmware loader found no image, and says so.
# The fault phase wants its DMAR fault; nothing else may fault.
adopt_ok='firmware: failed to load (myri10ge_eth_z8e.dat|adopted) \(-2\)|Direct firmware load for (myri10ge_eth_z8e.dat|adopted) failed|hotplug firmware loading failed|Using firmware currently running|performance consider loading|via hotplug'
{
	grep -a 'guest: kmsg adopt: <[0-4]>.*myri10ge' "$log" | grep -avE "$adopt_ok" || true
	grep -a 'guest: kmsg \(images\|slices\|vfio\): <[0-4]>.*myri10ge' "$log" || true
	grep -a 'guest: kmsg [a-z]*: <[0-4]>.*\(vfio\|DMAR.*fault\)' "$log" | grep -av 'kmsg fault:' || true
	grep -a 'guest: kmsg \(raw\|fault\): <[0-4]>.*myri10ge' "$log" || true
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
# MSI reached libmyrio's eventfd (the guest counted them); the unmapped IOVA: refused by
# the guest's IOMMU, counted by the model (only then), and the port recovered.
grep -a 'guest: vfio MSI:' "$log" | tr -d '\r'
fault_start=$(grep -an 'guest: fault phase begins' "$log" | cut -d: -f1)
fault_end=$(grep -an 'guest: fault phase ends' "$log" | cut -d: -f1)
[[ -n $fault_start && -n $fault_end ]] || { echo "qemu_myri10ge: the fault phase did not run"; exit 1; }
early=$(head -n "$fault_start" "$log" | grep -a 'myri10ge-model.*failed DMA' || true)
[[ -z $early ]] || { echo "qemu_myri10ge: failed DMA before the fault phase: $early"; exit 1; }
sed -n "${fault_start},${fault_end}p" "$log" | grep -aq 'myri10ge-model 00:10.0: [1-9][0-9]* failed DMA' ||
	{ echo "qemu_myri10ge: the model counted no failed DMA in the fault phase"; exit 1; }
grep -aq 'guest: kmsg fault: <[0-7]>.*DMAR.*\[00:10.0\] fault addr' "$log" ||
	{ echo "qemu_myri10ge: no DMAR fault in the guest's log for the unmapped IOVA"; exit 1; }
grep -a 'guest: kmsg fault: .*DMAR\|myri10ge-model.*failed DMA' "$log" | tr -d '\r' | head -n 4

# The TAP guest: INTx, and the host kernel through a QEMU netdev.
t=$SECONDS
rc=0
unshare -n bash "$src/tests/qemu/run-tap-guest.sh" "$qemu" "$out" "$tap_bytes" || rc=$?
tlog=$out/tap-console.log
grep -a '^guest:\|MYRIO-MYRI10GE\|myri10ge-model\|^qemu\|^host:' "$tlog" | tr -d '\r'
echo "qemu_myri10ge: the TAP guest exited with $rc after $((SECONDS - t)) s"
grep -aq 'MYRIO-MYRI10GE-RESULT: PASS' "$tlog" ||
	{ echo "qemu_myri10ge: the TAP guest failed"; tail -n 25 "$tlog" | tr -d '\r' | sed 's/^/  | /'; exit 1; }
grep -aq "tcp_pattern: recv $tap_bytes bytes ok" "$out/tap-host-recv.log" ||
	{ echo "qemu_myri10ge: the host did not receive the guest's stream intact"; exit 1; }
# Without MSI (pci=nomsi), Linux says it falls back to INTx: that is the case under test.
grep -a 'guest: kmsg tap: <[0-4]>.*myri10ge' "$tlog" |
	grep -avE "$adopt_ok|Error -22 setting up MSI; falling back to xPIC" && {
	echo "qemu_myri10ge: myri10ge complained on INTx"; exit 1; }
echo "qemu_myri10ge: PASS in $((SECONDS - start)) s"
