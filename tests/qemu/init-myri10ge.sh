#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# Init of the Myri-10G model guest (tests/sh/qemu_myri10ge.sh): Linux's own myri10ge driver
# on two model NICs joined by one model cable, each NIC in a network namespace of its own,
# so that every frame crosses the cable. The driver adopts the running firmware; then it is
# reloaded with myrio-mkfw images in /lib/firmware (handoff). Prints "guest: ..." lines and
# one MYRIO-MYRI10GE-RESULT line; the host script judges the details.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /run /var/run /lib/firmware
mount -t tmpfs tmpfs /run
export PATH=/bin
# iproute2's ip (namespaces) and ethtool, never busybox's applet of the same name
ip() { /sbin/ip "$@"; }
ethtool() { /sbin/ethtool "$@"; }
fail=""
note() { echo "guest: $*"; }
bad() { echo "guest: FAIL $*"; fail="$fail; $*"; }
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
BYTES=$(arg myrio_bytes)
BYTES=${BYTES:-50000000}
SEND_S=$(arg myrio_send_s)
SEND_S=${SEND_S:-10}

insmod /lib/modules/dca.ko || bad "insmod dca"

# The model NICs, in PCI order: A then B.
nics=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor)" = 0x14c1 ] && [ "$(cat $d/device)" = 0x0008 ] && nics="$nics ${d##*/}"
done
set -- $nics
note "model NICs:$nics"
[ $# -eq 2 ] || bad "expected 2 model NICs, found $#"
pa=$1 pb=$2

ifname() { ls /sys/bus/pci/devices/$1/net/ 2>/dev/null; }
# Each NIC into its namespace, addressed, up; waits for the carrier.
setup() {
	ia=$(ifname $pa) ib=$(ifname $pb)
	[ -n "$ia" ] && [ -n "$ib" ] || { bad "no interfaces after probe ($ia/$ib)"; return 1; }
	ip netns add a 2>/dev/null
	ip netns add b 2>/dev/null
	ip link set "$ia" netns a && ip link set "$ib" netns b || { bad "netns move"; return 1; }
	ip -n a addr add 10.9.0.1/24 dev "$ia"
	ip -n b addr add 10.9.0.2/24 dev "$ib"
	ip -n a link set lo up; ip -n b link set lo up
	ip -n a link set "$ia" up; ip -n b link set "$ib" up
	for t in $(seq 1 50); do
		ip -n a link show "$ia" | grep -q 'LOWER_UP' && ip -n b link show "$ib" | grep -q 'LOWER_UP' && break
		sleep 0.2
	done
	ip -n a link show "$ia" | grep -q LOWER_UP || bad "link of $ia did not come up"
	note "links up: $ia (a) $ib (b)"
}
A() { /sbin/ip netns exec a "$@"; }
B() { /sbin/ip netns exec b "$@"; }
pings() { # sizes...
	for s in "$@"; do
		if A ping -c 2 -W 5 -s "$s" 10.9.0.2 >/tmp/ping 2>&1; then
			note "ping $s: $(grep -o '[0-9]* packets received' /tmp/ping)"
		else
			bad "ping $s bytes: $(tail -n 2 /tmp/ping | tr '\n' ' ')"
		fi
	done
}
# A checked TCP stream of $BYTES each way.
streams() { # label
	B /tcp_pattern recv 5001 "$BYTES" >/tmp/r1 2>&1 &
	r=$!
	A /tcp_pattern send 10.9.0.2 5001 "$BYTES" >/tmp/s1 2>&1 || bad "$1 a->b send: $(cat /tmp/s1)"
	wait $r || bad "$1 a->b recv: $(cat /tmp/r1)"
	note "$1 a->b: $(cat /tmp/r1)"
	A /tcp_pattern recv 5002 "$BYTES" >/tmp/r2 2>&1 &
	r=$!
	B /tcp_pattern send 10.9.0.1 5002 "$BYTES" >/tmp/s2 2>&1 || bad "$1 b->a send: $(cat /tmp/s2)"
	wait $r || bad "$1 b->a recv: $(cat /tmp/r2)"
	note "$1 b->a: $(cat /tmp/r2)"
}
udp() {
	B /tcp_pattern udprecv 5003 20 >/tmp/u 2>&1 &
	u=$!
	sleep 0.5
	A /tcp_pattern udpsend 10.9.0.2 5003 20 >/dev/null
	wait $u || bad "udp: $(cat /tmp/u)"
	note "udp: $(cat /tmp/u)"
}
mtu() {
	ip -n a link set "$ia" mtu "$1" && ip -n b link set "$ib" mtu "$1" || bad "mtu $1"
	sleep 1
}
offload() { # on|off
	for x in "A $ia" "B $ib"; do
		set -- $x
		$1 /sbin/ethtool -K "$2" tso "$OFF" tx "$OFF" rx "$OFF" sg "$OFF" 2>&1 | sed 's/^/guest: ethtool: /'
	done
}
counters() {
	for x in "A $ia" "B $ib"; do
		set -- $x
		$1 /sbin/ethtool -S "$2" >/tmp/st 2>&1
		note "$2 ethtool -S: $(grep -E ' (rx_packets|tx_packets|rx_bytes|tx_bytes|dropped_[a-z_]*|link_changes|tx_boundary|tx_req|tx_done|serial_number|watchdog_resets):' /tmp/st | tr -s ' \n' ' ')"
		note "$2 ip -s: $($1 /sbin/ip -s link show "$2" | tr -s ' \n' ' ')"
	done
}
# The kernel's messages of a phase, with their levels (<4> warning, <3> error...), cleared.
kmsg() {
	dmesg -r -c | grep -aiE 'myri10ge|dmar|vfio|iommu|call trace|bug' | sed "s/^/guest: kmsg $1: /"
}
teardown() {
	ip netns del a; ip netns del b
	sleep 1
}

# --- 1. probe adopting the running firmware (no image in /lib/firmware) ---
t0=$(cut -d' ' -f1 /proc/uptime)
insmod /lib/modules/myri10ge.ko || bad "insmod myri10ge"
note "probe took $(awk -v t=$t0 '{print $1 - t}' /proc/uptime) s"
setup
pings 56 1000 1472
udp
streams "mtu 1500 offload on"
mtu 9000
pings 1500 8972
streams "mtu 9000 offload on"
OFF=off offload
streams "mtu 9000 offload off"
mtu 1500
streams "mtu 1500 offload off"
OFF=on offload
counters
ip -n a link set "$ia" down; ip -n b link set "$ib" down
ip -n a link set "$ia" up; ip -n b link set "$ib" up
sleep 2
pings 56
note "down/up done"
teardown
rmmod myri10ge || bad "rmmod myri10ge"
kmsg adopt

# --- 2. probe with myrio-mkfw images: the driver loads one and hands off to it ---
cp /fw/*.dat /lib/firmware/
insmod /lib/modules/myri10ge.ko || bad "insmod myri10ge (images)"
setup
pings 56 1472
streams "images mtu 1500"
counters
teardown
rmmod myri10ge || bad "rmmod myri10ge (images)"
kmsg images

# --- 3. libmyrio's driver on NIC A through vfio-pci and the IOMMU; the kernel's on B ---
for m in irqbypass vfio vfio_virqfd vfio_iommu_type1 vfio-pci-core vfio-pci; do
	insmod /lib/modules/$m.ko || bad "insmod $m"
done
insmod /lib/modules/myri10ge.ko || bad "insmod myri10ge (vfio part)"
mkdir -p /dev/hugepages
mount -t hugetlbfs nodev /dev/hugepages
/myrio-setup hugepages 64 >/dev/null
/myrio-setup bind "$pa" || bad "myrio-setup bind $pa"
/myrio-setup check "$pa" >/tmp/check 2>&1 || bad "myrio-setup check $pa found problems"
sed 's/^/guest: myrio-setup check: /' /tmp/check
/myrio-info "$pa" >/tmp/info 2>&1 || bad "myrio-info $pa"
sed 's/^/guest: myrio-info: /' /tmp/info
grep -q '^link  *up' /tmp/info || bad "myrio-info: link not up"
ib=$(ifname $pb)
ip netns add b
ip link set "$ib" netns b
ip -n b addr add 10.9.0.2/24 dev "$ib"
ip -n b link set lo up
ip -n b link set "$ib" up
sleep 2
# the kernel's stream to tcp_lite, checked by stream_recv; pings meanwhile
/stream_recv --ip 10.9.0.1 --duration 600 "$pa" >/tmp/recv.log 2>&1 &
r=$!
for t in $(seq 1 30); do grep -q 'stream_recv: TCP' /tmp/recv.log && break; sleep 1; done
B ping -c 3 -W 5 10.9.0.1 >/tmp/ping 2>&1
note "vfio ping: $(grep -o '[0-9]* packets received' /tmp/ping)"
grep -q '3 packets received' /tmp/ping || bad "the kernel's pings of tcp_lite"
B ping -c 2 -W 5 -s 1472 10.9.0.1 >/tmp/ping 2>&1
note "vfio ping 1472: $(grep -o '[0-9]* packets received' /tmp/ping)"
B /tcp_pattern -e send 10.9.0.1 5001 "$BYTES" >/tmp/s3 2>&1 || bad "kernel->libmyrio send: $(cat /tmp/s3)"
note "kernel->libmyrio: $(cat /tmp/s3)"
kill -INT $r 2>/dev/null
wait $r
note "stream_recv exited $?"
grep -v ' Gb/s .*pkts/s' /tmp/recv.log | sed 's/^/guest: stream_recv: /'
grep -q "summary: $BYTES bytes .* 0 bad, 0 lost" /tmp/recv.log || bad "stream_recv did not get the kernel's $BYTES bytes intact"
# tcp_lite's stream to the kernel, checked by tcp_pattern
B /tcp_pattern -e recv 5002 0 >/tmp/r4 2>&1 &
r=$!
sleep 1
/stream_send --ip 10.9.0.1 --peer 10.9.0.2 --port 5002 --duration "$SEND_S" "$pa" 2>&1 |
	grep -v ' Gb/s .*pkts/s' | sed 's/^/guest: stream_send: /'
wait $r || bad "libmyrio->kernel: $(cat /tmp/r4)"
note "libmyrio->kernel: $(cat /tmp/r4)"
ip netns del b

kmsg vfio
if [ -z "$fail" ]; then
	echo "MYRIO-MYRI10GE-RESULT: PASS"
else
	echo "MYRIO-MYRI10GE-RESULT: FAIL$fail"
fi
sync
poweroff -f
