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
# One counter of a NIC's ethtool -S.
ctr() { # A|B ifname name
	$1 /sbin/ethtool -S "$2" | sed -n "s/^ *$3: //p"
}
# ethtool -S agrees with what was sent: COUNT datagrams of 1000 bytes (1042-byte frames)
# a -> b after the peer's MAC is known. Every frame a counts as sent, b counts as received
# or as dropped by its multicast filter (the cable loses nothing); beyond the datagrams,
# only frames the test does not control (ARP, IPv6) within a small tolerance, and one of
# those may be in flight when the counters are read.
counted() {
	A ping -c 1 -W 5 10.9.0.2 >/dev/null 2>&1
	sleep 1 # a counts a frame sent when the NIC reports it done: after b received it
	tp0=$(ctr A "$ia" tx_packets) tb0=$(ctr A "$ia" tx_bytes)
	rp0=$(ctr B "$ib" rx_packets) rb0=$(ctr B "$ib" rx_bytes)
	mf0=$(ctr B "$ib" dropped_multicast_filtered)
	B /tcp_pattern udprecv 5004 50 >/tmp/u 2>&1 &
	u=$!
	sleep 0.5
	A /tcp_pattern udpsend 10.9.0.2 5004 50 >/dev/null
	wait $u || bad "counted udp: $(cat /tmp/u)"
	sleep 1
	tp=$(($(ctr A "$ia" tx_packets) - tp0)) tb=$(($(ctr A "$ia" tx_bytes) - tb0))
	rp=$(($(ctr B "$ib" rx_packets) - rp0)) rb=$(($(ctr B "$ib" rx_bytes) - rb0))
	mf=$(($(ctr B "$ib" dropped_multicast_filtered) - mf0))
	note "counters for 50 datagrams: a tx $tp frames $tb bytes; b rx $rp frames $rb bytes, $mf filtered"
	[ "$tp" -ge 50 ] && [ "$tp" -le 54 ] || bad "a's tx_packets moved by $tp for 50 datagrams"
	[ "$tb" -ge 52100 ] && [ "$tb" -le $((52100 + 4 * 1514)) ] ||
		bad "a's tx_bytes moved by $tb for 50 frames of 1042 bytes"
	# one frame of a's own may be on the cable at either snapshot
	d=$((rp + mf - tp))
	[ $d -ge -1 ] && [ $d -le 1 ] || bad "b received $rp and filtered $mf of a's $tp frames"
	[ "$rb" -ge 52100 ] && [ "$rb" -le "$tb" ] || bad "b received $rb bytes of a's $tb"
}
# 20 multicast groups on a (more than the firmware's filter may hold: Linux joins each,
# and on a refusal leaves filtering off), then frames to one of them reach it; then
# promiscuous and all-multicast on and off. Linux must not complain (kmsg).
groups() {
	for g in $(seq 1 20); do
		ip -n a maddr add "01:00:5e:01:01:$(printf %02x $g)" dev "$ia" || bad "maddr add $g"
	done
	note "groups on a: $(ip -n a maddr show dev "$ia" | grep -c 'link  01:00:5e:01:01')"
	ip -n b route add 239.0.0.0/8 dev "$ib"
	rp0=$(ctr A "$ia" rx_packets)
	B /tcp_pattern udpsend 239.1.1.7 5005 10 >/dev/null
	sleep 0.5
	rp=$(($(ctr A "$ia" rx_packets) - rp0))
	note "multicast to a joined group: a received $rp of 10 frames"
	[ "$rp" -ge 10 ] || bad "a received $rp of 10 frames sent to a joined group"
	for m in promisc allmulticast; do
		ip -n a link set "$ia" $m on && pings 56 && ip -n a link set "$ia" $m off ||
			bad "$m on/off"
	done
	for g in $(seq 1 20); do
		ip -n a maddr del "01:00:5e:01:01:$(printf %02x $g)" dev "$ia"
	done
	pings 56
}
# The kernel's messages of a phase, with their levels (<4> warning, <3> error...), cleared.
kmsg() {
	dmesg -r -c | grep -aiE 'myri10ge|dmar|vfio|iommu|call trace|bug' | sed "s/^/guest: kmsg $1: /"
}
teardown() {
	ip netns del a; ip netns del b
	sleep 1
}

finish() {
	if [ -z "$fail" ]; then
		echo "MYRIO-MYRI10GE-RESULT: PASS"
	else
		echo "MYRIO-MYRI10GE-RESULT: FAIL$fail"
	fi
	sync
	poweroff -f
}

# --- The TAP guest (myrio_phase=tap, booted with pci=nomsi): one model NIC whose cable
# ends at a QEMU tap netdev, the host kernel (10.10.0.1) at the other end; Linux's driver
# on INTx with the deassert wait. The host sends TAP_BYTES to port 5011 and receives as
# many on 5010. ---
tap_phase() {
	TAP_BYTES=$(arg myrio_tap_bytes)
	insmod /lib/modules/myri10ge.ko || bad "insmod myri10ge (tap)"
	i=$(ifname $pa)
	[ -n "$i" ] || { bad "no interface on $pa"; return; }
	ip addr add 10.10.0.2/24 dev "$i"
	ip link set "$i" up
	for t in $(seq 1 50); do ip link show "$i" | grep -q LOWER_UP && break; sleep 0.2; done
	ip link show "$i" | grep -q LOWER_UP || bad "link of $i did not come up"
	note "tap: interrupts: $(grep "$i" /proc/interrupts | tr -s ' ')"
	grep "$i" /proc/interrupts | grep -q MSI && bad "$i took MSI with pci=nomsi"
	for sz in 56 1472; do
		ping -c 3 -W 5 -s $sz 10.10.0.1 >/tmp/ping 2>&1
		note "tap: ping host $sz: $(grep -o '[0-9]* packets received' /tmp/ping)"
		grep -q ' 0 packets received\|100% packet loss' /tmp/ping && bad "ping of the host, $sz bytes"
	done
	/tcp_pattern recv 5011 "$TAP_BYTES" >/tmp/tr 2>&1 &
	r=$!
	/tcp_pattern send 10.10.0.1 5010 "$TAP_BYTES" >/tmp/ts 2>&1 || bad "guest->host: $(cat /tmp/ts)"
	note "tap: guest->host: $(cat /tmp/ts)"
	wait $r || bad "host->guest: $(cat /tmp/tr)"
	note "tap: host->guest: $(cat /tmp/tr)"
	n=$(grep "$i" /proc/interrupts | awk '{print $2}')
	note "tap: INTx interrupts taken: $n"
	[ "${n:-0}" -gt 0 ] || bad "no INTx interrupt counted"
	ethtool -S "$i" >/tmp/st 2>&1
	note "tap: ethtool -S: $(grep -E ' (rx_packets|tx_packets|tx_req|tx_done|watchdog_resets):' /tmp/st | tr -s ' \n' ' ')"
	ip link set "$i" down
	rmmod myri10ge || bad "rmmod myri10ge (tap)"
	kmsg tap
}
if [ "$(arg myrio_phase)" = tap ]; then
	tap_phase
	finish
fi
[ $# -eq 2 ] || bad "expected 2 model NICs, found $#"

# --- 1. probe adopting the running firmware (no image in /lib/firmware) ---
t0=$(cut -d' ' -f1 /proc/uptime)
insmod /lib/modules/myri10ge.ko || bad "insmod myri10ge"
note "probe took $(awk -v t=$t0 '{print $1 - t}' /proc/uptime) s"
setup
pings 56 1000 1472
udp
counted
groups
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

# --- 2b. slices: Linux loads the RSS image (myri10ge_rss_eth_z8e.dat from myrio-mkfw) and
# runs two slices, an MSI-X vector each (myri10ge_max_slices: the guest has one CPU) ---
insmod /lib/modules/myri10ge.ko myri10ge_max_slices=2 || bad "insmod myri10ge (slices)"
setup
note "slices: $(grep -o 'eth[0-9]:slice-[0-9]*' /proc/interrupts | tr '\n' ' ')"
[ "$(grep -c 'eth[0-9]:slice-' /proc/interrupts)" -ge 4 ] || bad "two MSI-X vectors per NIC"
note "slices: queues of a: $(A ls /sys/class/net/$ia/queues | tr '\n' ' ')"
pings 56 1472
streams "slices"
note "slices: interrupts: $(grep 'slice-' /proc/interrupts | tr -s ' ' | tr '\n' ';')"
counters
teardown
rmmod myri10ge || bad "rmmod myri10ge (slices)"
kmsg slices

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
# MSI through vfio-pci: the interrupts the guest kernel took for libmyrio's port
irqs() {
	grep "vfio-msi\[0\]($pa)" /proc/interrupts | awk '{n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n}'
}
# the kernel's stream to tcp_lite, checked by stream_recv; pings meanwhile
/stream_recv --ip 10.9.0.1 --duration 600 "$pa" >/tmp/recv.log 2>&1 &
r=$!
for t in $(seq 1 30); do grep -q 'stream_recv: TCP' /tmp/recv.log && break; sleep 1; done
# one at a time: busybox waits only twice the longest round trip for a count's last reply,
# which a loaded TCG host can exceed; -W waits for the one reply
n=0
for t in 1 2 3; do B ping -c 1 -W 5 10.9.0.1 >/dev/null 2>&1 && n=$((n + 1)); done
note "vfio ping: $n of 3 answered"
[ $n = 3 ] || bad "the kernel's pings of tcp_lite: $n of 3 answered"
B ping -c 2 -W 5 -s 1472 10.9.0.1 >/tmp/ping 2>&1
note "vfio ping 1472: $(grep -o '[0-9]* packets received' /tmp/ping)"
# stream_recv closes its port (and its interrupt) when the stream ends: sampled meanwhile
i0=$(irqs)
(while sleep 0.5; do n=$(irqs); [ -n "$n" ] && echo "$n" >/tmp/irqs; done) &
w=$!
B /tcp_pattern -e send 10.9.0.1 5001 "$BYTES" >/tmp/s3 2>&1 || bad "kernel->libmyrio send: $(cat /tmp/s3)"
note "kernel->libmyrio: $(cat /tmp/s3)"
kill $w
i1=$(cat /tmp/irqs 2>/dev/null)
note "vfio MSI: ${i0:-none} before the transfer, ${i1:-none} during it"
[ "${i1:-0}" -gt "${i0:-0}" ] || bad "no MSI reached libmyrio's eventfd during the transfer"
kill -INT $r 2>/dev/null
wait $r
note "stream_recv exited $?"
grep -v ' Gb/s .*pkts/s' /tmp/recv.log | sed 's/^/guest: stream_recv: /'
grep -q "summary: $BYTES bytes .* 0 bad, 0 lost" /tmp/recv.log || bad "stream_recv did not get the kernel's $BYTES bytes intact"
grep -q 'MSI could not be enabled\|polling busily' /tmp/recv.log && bad "libmyrio's port ran polled"
# UDP echo: tcp_lite answers the kernel's datagrams, then the kernel answers tcp_lite's
/udp_rpc --server --ip 10.9.0.1 --port 9000 "$pa" >/tmp/rpcs.log 2>&1 &
r=$!
for t in $(seq 1 30); do grep -q 'answering' /tmp/rpcs.log && break; sleep 1; done
B /tcp_pattern udpask 10.9.0.1 9000 100 >/tmp/ask 2>&1 || bad "kernel->tcp_lite udp echo: $(cat /tmp/ask)"
note "kernel->tcp_lite udp echo: $(cat /tmp/ask)"
kill -INT $r 2>/dev/null
wait $r
note "udp_rpc server: $(grep summary /tmp/rpcs.log)"
B /tcp_pattern udpecho 9001 1000000 >/dev/null 2>&1 &
e=$!
sleep 0.5
/udp_rpc --requests 200 --timeout-ms 500 --ip 10.9.0.1 --peer 10.9.0.2 --port 9001 "$pa" >/tmp/rpcc.log 2>&1 ||
	bad "tcp_lite->kernel udp echo: $(tail -n 3 /tmp/rpcc.log)"
kill $e
note "tcp_lite->kernel udp echo: $(grep summary /tmp/rpcc.log)"
# tcp_lite's stream to the kernel, checked by tcp_pattern
B /tcp_pattern -e recv 5002 0 >/tmp/r4 2>&1 &
r=$!
sleep 1
/stream_send --ip 10.9.0.1 --peer 10.9.0.2 --port 5002 --duration "$SEND_S" "$pa" 2>&1 |
	grep -v ' Gb/s .*pkts/s' | sed 's/^/guest: stream_send: /'
wait $r || bad "libmyrio->kernel: $(cat /tmp/r4)"
note "libmyrio->kernel: $(cat /tmp/r4)"
kmsg vfio

# --- 4. a send descriptor at an IOVA never mapped: the IOMMU refuses the model's read
# (a DMAR fault), the model counts it, libmyrio's watchdog resets the NIC, and the stream
# still arrives whole (MYRIO_FAULT_TX_IOVA: the driver's test-only fault injection) ---
note "fault phase begins"
B /tcp_pattern -e recv 5006 0 >/tmp/r5 2>&1 &
r=$!
sleep 1
MYRIO_FAULT_TX_IOVA=300 /stream_send --ip 10.9.0.1 --peer 10.9.0.2 --port 5006 --duration 5 "$pa" >/tmp/fault.log 2>&1
grep -v ' Gb/s .*pkts/s' /tmp/fault.log | sed 's/^/guest: fault: /'
wait $r || bad "the stream with a faulted descriptor: $(cat /tmp/r5)"
note "fault stream: $(cat /tmp/r5)"
grep -q 'RDMA tags were lost: reloading and reopening' /tmp/fault.log || bad "libmyrio's watchdog did not reset the NIC"
kmsg fault
note "fault phase ends"
ip netns del b

# --- 5. the raw example across the two NICs, both libmyrio's through vfio-pci ---
/myrio-setup bind "$pb" || bad "myrio-setup bind $pb"
/raw_frames -n 5000 -s 1000 "$pa" "$pb" >/tmp/raw 2>&1 || bad "raw_frames: $(tail -n 2 /tmp/raw)"
sed 's/^/guest: raw_frames: /' /tmp/raw
kmsg raw

finish
