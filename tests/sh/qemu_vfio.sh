#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves libmyrio's PCI/VFIO bus (src/pci/) on real VFIO: boots a QEMU guest (TCG, q35,
# emulated Intel IOMMU) with two e1000e NICs on an isolated hub, binds them to vfio-pci
# with myrio-setup, and runs tests/qemu/vfio_e1000e_test: BAR access, hugepage DMA through
# the IOMMU, frames A->B and B->A byte for byte, a blocked DMA to an unmapped IOVA, MSI-X
# into an eventfd. Then the same NICs as ports of libmyrio's e1000e driver (src/e1000e/):
# frames and counters through the port API, examples/raw_frames, and tcp_lite on one NIC
# against the guest kernel's stack on the other (ping, a TCP stream each way). The frames
# NIC A put on the wire are checked again on the host from QEMU's packet dump.
#
# usage: qemu_vfio.sh BUILD_DIR        exit 0 pass, 77 skip (no QEMU), else fail
# The guest kernel (Debian's linux-image-6.1.*-amd64) is cached in $MYRIO_QEMU_CACHE,
# default tests/qemu/cache/ in the source tree (ignored by git).
set -euo pipefail
build=$(cd "${1:?usage: qemu_vfio.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MYRIO_QEMU_CACHE:-$src/tests/qemu/cache}
out=$build/qemu-vfio
start=$SECONDS

qemu=${MYRIO_QEMU:-qemu-system-x86_64}
need=("$qemu" busybox cpio gcc)
missing=()
for t in "${need[@]}"; do command -v "$t" >/dev/null || missing+=("$t"); done
if ((${#missing[@]})) && [[ $(id -u) -eq 0 ]]; then
	echo "qemu_vfio: installing qemu-system-x86 busybox-static cpio"
	export DEBIAN_FRONTEND=noninteractive
	pkgs=(qemu-system-x86 busybox-static cpio gcc)
	apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
			apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1; } || true
	missing=()
	for t in "${need[@]}"; do command -v "$t" >/dev/null || missing+=("$t"); done
fi
if ((${#missing[@]})); then
	echo "qemu_vfio: SKIP: missing ${missing[*]} (apt-get install qemu-system-x86 busybox-static cpio)"
	exit 77
fi

bash "$src/tests/qemu/build-guest.sh" "$src" "$cache" "$out"
echo "qemu_vfio: guest built in $((SECONDS - start)) s"

source "$src/tests/qemu/guest-args.sh"
guest_args "$out" 512M
mac_a=52:54:00:4d:59:0a
mac_b=52:54:00:4d:59:0b
run_guest() {
	rm -f "$out"/a.pcap "$out"/console.log
	rc=0
	timeout --foreground -k 5 300 "$qemu" "${GUEST_ARGS[@]}" \
		-netdev hubport,id=na,hubid=1 -device e1000e,netdev=na,mac=$mac_a,romfile=,addr=0x10 \
		-netdev hubport,id=nb,hubid=1 -device e1000e,netdev=nb,mac=$mac_b,romfile=,addr=0x11 \
		-object filter-dump,id=da,netdev=na,file="$out/a.pcap" \
		</dev/null >"$out/console.log" 2>&1 || rc=$?
}
run_guest
# A TCG guest on a heavily loaded host can panic in early boot (timing checks) before our
# init runs: that says nothing about the code under test, so boot once more.
if ! grep -aq 'MYRIO-VFIO-RESULT:' "$out/console.log" && grep -aq 'Kernel panic' "$out/console.log" &&
	! grep -aq '^guest:' "$out/console.log"; then
	echo "qemu_vfio: the guest kernel panicked before init ($(grep -a -m1 'Kernel panic' "$out/console.log" | tr -d '\r')); booting again"
	run_guest
fi
sed -n '/^guest:\|^port \|MYRIO-VFIO-PORT\|^0000:\|MAC \|->\|negative test\|interrupts\|counters\|open\|close\|FAIL\|REFUSED\|MEMLOCK\|NOPERM\|myrio\|^  \(ok\|FIX\)/p' \
	"$out/console.log" | tr -d '\r'
echo "qemu_vfio: QEMU exited with $rc after $((SECONDS - start)) s"

result=$(grep -a 'MYRIO-VFIO-RESULT:' "$out/console.log" | tr -d '\r' | tail -n 1 || true)
echo "${result:-qemu_vfio: no result line from the guest (see $out/console.log)}"
if [[ $result != *"MYRIO-VFIO-RESULT: PASS"* ]]; then
	echo "qemu_vfio: last lines of the guest console:"
	tail -n 25 "$out/console.log" | tr -d '\r' | sed 's/^/  | /'
	[[ $rc -eq 124 ]] && echo "qemu_vfio: QEMU was stopped by the 300 s timeout"
	exit 1
fi

# The doctor, on the unprepared guest, named each fix; once set up, it found nothing.
for fix in "-> myrio-setup hugepages 512" "-> modprobe vfio-pci" "-> myrio-setup bind 0000:00:10.0" \
	"-> mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages"; do
	grep -aqF -- "$fix" "$out/console.log" || { echo "qemu_vfio: myrio-setup check did not say '$fix'"; exit 1; }
done
grep -aq 'check before setup exited 1' "$out/console.log" || { echo "qemu_vfio: check before setup did not fail"; exit 1; }
grep -aq 'check after setup exited 0' "$out/console.log" || { echo "qemu_vfio: check after setup found problems"; exit 1; }

# Before binding, the open path refused the device held by e1000e.
grep -aq 'MYRIO-VFIO-REFUSED: PASS' "$out/console.log" || { echo "qemu_vfio: open of a device held by e1000e was not refused as expected"; exit 1; }
grep -aq "bound to e1000e, not vfio-pci: run 'myrio-setup bind 0000:00:10.0'" "$out/console.log" || { echo "qemu_vfio: no fix named for a device held by e1000e"; exit 1; }
# A memlock limit too small for the DMA memory, and no permission on /dev/vfio/N, were both
# refused on the real kernel with the fix named.
grep -aq 'MYRIO-VFIO-MEMLOCK: PASS' "$out/console.log" || { echo "qemu_vfio: memlock refusal not as expected"; exit 1; }
grep -aq 'MYRIO-VFIO-NOPERM: PASS' "$out/console.log" || { echo "qemu_vfio: permission refusal not as expected"; exit 1; }
# myrio-setup unbind gave the device back to its kernel driver.
grep -aq 'driver after unbind: e1000e' "$out/console.log" || { echo "qemu_vfio: unbind did not return the NIC to e1000e"; exit 1; }

# The guest kernel logged the IOMMU's refusals: a read (transmit) and a write (receive).
grep -aq 'DMA Read.*\[00:10.0\] fault addr' "$out/console.log" || { echo "qemu_vfio: no DMAR read fault logged"; exit 1; }
grep -aq 'DMA Write.*\[00:11.0\] fault addr' "$out/console.log" || { echo "qemu_vfio: no DMAR write fault logged"; exit 1; }

# The IOVA allocator got the valid ranges from the kernel (the MSI window is a hole).
grep -aq '0000:00:10.0: IOMMU page sizes .*, 2 valid IOVA ranges, first 0x0-0xfedfffff' "$out/console.log" ||
	{ echo "qemu_vfio: the IOVA ranges of the IOMMU were not read"; exit 1; }

# The MACs the guest read through BAR0 are the ones QEMU was given.
grep -aq "MAC 0000:00:10.0 $mac_a" "$out/console.log" || { echo "qemu_vfio: NIC A's MAC wrong"; exit 1; }
grep -aq "MAC 0000:00:11.0 $mac_b" "$out/console.log" || { echo "qemu_vfio: NIC B's MAC wrong"; exit 1; }

# The e1000e driver as a port: opened by myrio_port_open from the PCI address, frames and
# counters through the port API, the raw example across both NICs, myrio-info on one.
grep -aq 'MYRIO-VFIO-PORT: PASS' "$out/console.log" || { echo "qemu_vfio: the e1000e port test failed"; exit 1; }
grep -aq 'guest: raw_frames exited 0' "$out/console.log" || { echo "qemu_vfio: raw_frames over the e1000e ports failed"; exit 1; }
grep -aq 'guest: myrio-info: link            up' "$out/console.log" || { echo "qemu_vfio: myrio-info did not see the link up"; exit 1; }
grep -aq "guest: myrio-info: MAC             $mac_b" "$out/console.log" || { echo "qemu_vfio: myrio-info showed the wrong MAC"; exit 1; }
# tcp_lite on the e1000e port against the guest kernel: ping, a stream from the kernel
# checked byte for byte by stream_recv, a stream from stream_send checked by the kernel side.
grep -aq 'guest: ping: 3 packets transmitted, 3 packets received' "$out/console.log" || { echo "qemu_vfio: the kernel's pings were not all answered"; exit 1; }
grep -aq 'guest: stream_recv exited 0' "$out/console.log" &&
	grep -aq 'guest: stream_recv: summary: 1004000 bytes .* 0 bad' "$out/console.log" ||
	{ echo "qemu_vfio: the kernel's stream did not reach stream_recv intact"; exit 1; }
grep -aq 'guest: kernel received [1-9][0-9]* bytes from tcp_lite, the pattern' "$out/console.log" ||
	{ echo "qemu_vfio: stream_send's stream did not reach the kernel intact"; exit 1; }

# What NIC A really put on the wire: 11 test frames (8, then 1 after the transmit negative
# test, 2 in the receive negative test), and not the one whose buffer was unmapped (marker
# byte 0x55 after the Ethernet header). The port test's frames have EtherType 0x88b6,
# raw_frames' are 1100 bytes long, a length the bus test never sends.
if command -v tcpdump >/dev/null; then
	bus_test="ether src $mac_a and ether proto 0x88b5 and not len = 1100"
	sent=$(tcpdump -r "$out/a.pcap" -nn "$bus_test" 2>/dev/null | grep -c "^[0-9]" || true)
	leaked=$(tcpdump -r "$out/a.pcap" -nn "$bus_test and ether[14] = 0x55" 2>/dev/null | grep -c "^[0-9]" || true)
	ported=$(tcpdump -r "$out/a.pcap" -nn "ether src $mac_a and ether proto 0x88b6" 2>/dev/null | grep -c "^[0-9]" || true)
	raw=$(tcpdump -r "$out/a.pcap" -nn "ether src $mac_a and ether proto 0x88b5 and len = 1100" 2>/dev/null | grep -c "^[0-9]" || true)
	echo "qemu_vfio: packet dump of NIC A: port test $ported frames, raw_frames $raw"
	[[ $ported -eq 600 && $raw -eq 3000 ]] || { echo "qemu_vfio: packet dump disagrees with the port test"; exit 1; }
	echo "qemu_vfio: packet dump of NIC A: $sent test frames sent, $leaked from the unmapped buffer"
	[[ $sent -eq 11 && $leaked -eq 0 ]] || { echo "qemu_vfio: packet dump disagrees"; exit 1; }
fi
echo "qemu_vfio: PASS in $((SECONDS - start)) s"
