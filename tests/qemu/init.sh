#!/bin/busybox sh
# Init of the VFIO test guest: the doctor on an unprepared system, then reserve hugepages,
# load VFIO and give both e1000e functions to vfio-pci with myrio-setup, run the test
# program (which prints the result line), give a NIC back to e1000e, power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
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
/myrio-setup hugepages 16

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
echo "guest: DMAR faults logged: $(dmesg | grep -ci 'dmar.*fault')"
dmesg | grep 'DMAR: \[DMA .*fault addr' | head -n 4 | sed 's/^/guest: dmesg: /'
sync
poweroff -f
