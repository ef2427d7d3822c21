#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# Init of the VFIO test guest: the doctor on an unprepared system, then reserve hugepages,
# load VFIO and give both e1000e functions to vfio-pci with myrio-setup, run the test
# program (which prints the result line), the same NICs as libmyrio ports, give a NIC back
# to e1000e and run tcp_lite on the other against the kernel, power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp
export PATH=/bin

insmod /lib/modules/e1000e.ko || echo "guest: insmod e1000e failed"
nics=""
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat $d/vendor)" = 0x8086 ] && [ "$(cat $d/device)" = 0x10d3 ]; then
		nics="$nics ${d##*/}"
	fi
done
echo "guest: e1000e functions:$nics; IOMMU groups: $(ls /sys/kernel/iommu_groups | wc -l)"
set -- $nics

echo "guest: myrio-setup check before setup:"
/myrio-setup check "$1"
echo "guest: check before setup exited $?"

for m in irqbypass vfio vfio_virqfd vfio_iommu_type1 vfio-pci-core vfio-pci; do
	insmod /lib/modules/$m.ko || echo "guest: insmod $m failed"
done
/myrio-setup hugepages 64

[ $# -ge 1 ] && /vfio_e1000e_test expect-refused "$1"

for a in $nics; do
	echo "guest: $a driver before: $(basename "$(readlink /sys/bus/pci/devices/$a/driver)")"
	/myrio-setup bind "$a" || echo "guest: myrio-setup bind $a failed"
done
echo "guest: myrio-setup check after setup:"
/myrio-setup check "$1"
echo "guest: check after setup exited $?"
echo "guest: reset method of $1: $(cat /sys/bus/pci/devices/$1/reset_method 2>/dev/null)"
echo "guest: /dev/vfio: $(ls /dev/vfio | tr '\n' ' ')"

if [ $# -eq 2 ]; then
	MYRIO_LOG=2 /vfio_e1000e_test "$1" "$2"
	# The same NICs as ports (the e1000e driver, chosen by myrio_port_open from the IDs).
	MYRIO_LOG=2 /vfio_e1000e_test port "$1" "$2"
	/raw_frames -n 3000 -s 1100 "$1" "$2" | sed 's/^/guest: raw_frames: /'
	echo "guest: raw_frames exited $?"
	/myrio-info "$2" | sed 's/^/guest: myrio-info: /'
else
	echo "MYRIO-VFIO-RESULT: FAIL reason: expected 2 e1000e functions, found $#"
fi
# The limits of an ordinary user, provoked for real: memlock, and /dev/vfio/N permissions.
/vfio_e1000e_test expect-memlock-refusal "$1"
grp=$(basename "$(readlink /sys/bus/pci/devices/$1/iommu_group)")
chmod 000 /dev/vfio/$grp
/vfio_e1000e_test expect-permission-refusal "$1"
chmod 600 /dev/vfio/$grp

/myrio-setup unbind "$1"
echo "guest: $1 driver after unbind: $(basename "$(readlink /sys/bus/pci/devices/$1/driver)")"

# tcp_lite on NIC B (libmyrio's e1000e port) against the guest kernel's stack on NIC A.
ifc=$(ls /sys/bus/pci/devices/$1/net/ 2>/dev/null)
ip addr add 10.0.0.1/24 dev "$ifc" && ip link set "$ifc" up
# Stream byte i is i % 251 (examples/common.h): 251 bytes, doubled to 8 MiB or so.
i=0
: >/tmp/p
while [ $i -lt 251 ]; do printf "\\$(printf %o $i)" >>/tmp/p; i=$((i + 1)); done
for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do cat /tmp/p /tmp/p >/tmp/q && mv /tmp/q /tmp/p; done
head -c 1004000 /tmp/p >/tmp/p1m
/stream_recv --ip 10.0.0.2 --duration 60 "$2" >/tmp/recv.log 2>&1 &
rpid=$!
for t in 1 2 3 4 5 6 7 8 9 10; do grep -q 'stream_recv: TCP' /tmp/recv.log && break; sleep 1; done
ping -c 3 -W 5 10.0.0.2 | sed 's/^/guest: ping: /'
nc -w 3 10.0.0.2 5001 </tmp/p1m
wait $rpid
echo "guest: stream_recv exited $?"
sed 's/^/guest: stream_recv: /' /tmp/recv.log | grep -v ' Gb/s .*pkts/s'
nc -l -p 5002 >/tmp/got &
npid=$!
sleep 1
/stream_send --ip 10.0.0.2 --peer 10.0.0.1 --port 5002 --duration 1 "$2" | grep summary | sed 's/^/guest: stream_send: /'
wait $npid
got=$(wc -c </tmp/got)
n=$(wc -c </tmp/p)
[ "$got" -lt "$n" ] && n=$got
head -c "$n" /tmp/p >/tmp/want
if [ "$got" -gt 0 ] && head -c "$n" /tmp/got | cmp -s - /tmp/want; then
	echo "guest: kernel received $got bytes from tcp_lite, the pattern (first $n checked)"
else
	echo "guest: kernel received $got bytes from tcp_lite, NOT the pattern"
fi
echo "guest: DMAR faults logged: $(dmesg | grep -ci 'dmar.*fault')"
dmesg | grep 'DMAR: \[DMA .*fault addr' | head -n 4 | sed 's/^/guest: dmesg: /'
sync
poweroff -f
