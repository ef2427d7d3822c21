#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Path MTU discovery against Linux (RFC 1191): tcp_lite on a 9000-byte MTU link, a Linux
# router namespace whose route onwards allows only 1500 bytes, and the kernel behind it
# (MTU 9000 too, so both ends agree on jumbo MSSs). Every full-size segment of ours is too
# large for the hop: the router answers "fragmentation needed" and tcp_lite must lower its
# MSS and resend, or the stream is a black hole. 20 MB each way, byte-exact; the stack's
# counters must show the MSS lowered.
# ICMP errors from Linux too: a connect to a host the router cannot reach ends with
# EHOSTUNREACH once the router gives up on ARP (seconds, not the 2 min of SYN retries), and
# a datagram to a closed port of the kernel's gives the connected socket ECONNREFUSED.
#
#   tcp_lite (TAP mkp0, 10.77.0.2, MTU 9000) -- router ns: 10.77.0.1 | 10.78.0.1, route to
#   10.78.0.0/24 with "mtu lock 1500" -- veth -- kernel ns: 10.78.0.2 (MTU 9000)
#
# usage: kernel_pmtu.sh BUILD_DIR   (MYRIO_KERNEL_BYTES: stream size, default 20M;
#                                    MYRIO_KERNEL_TIMEOUT: seconds, default 240)
# exit 77 (skipped) without root, network namespaces or /dev/net/tun.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: $0 BUILD_DIR}
tool=$build/myrio-tcpcheck
bytes=${MYRIO_KERNEL_BYTES:-20M}
py=/usr/bin/python3
[ -x "$tool" ] || { echo "skip: $tool not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: needs root (network namespaces, TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "skip: no /dev/net/tun"; exit 77; }
[ -x $py ] || { echo "skip: needs $py"; exit 77; }
command -v ip >/dev/null || { echo "skip: needs iproute2"; exit 77; }

rt=myrio-pr$$ # the router, where the TAP device (our link) lives
kn=myrio-pk$$ # the kernel peer
tmp=$(mktemp -d)
ip netns add $rt 2>/dev/null || { echo "skip: cannot create a network namespace"; exit 77; }
ip netns add $kn || exit 77
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del $rt 2>/dev/null
	ip netns del $kn 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
inrt() { ip netns exec $rt "$@"; }
inkn() { ip netns exec $kn "$@"; }

# The kernel's stream peer: the same one kernel_interop.sh uses (server checks the pattern
# our side sends, client sends it to us).
sed -n "/^cat > \$tmp\/peer.py <<'PY'\$/,/^PY\$/p" "$here/kernel_interop.sh" | sed '1d;$d' >$tmp/peer.py
grep -q "def server" $tmp/peer.py || { echo "FAIL: no peer program in kernel_interop.sh"; exit 1; }

ours=10.77.0.2
gw=10.77.0.1
kern=10.78.0.2
nobody=10.78.0.99 # on the router's link, answers no ARP: the router says host unreachable
inrt ip link set lo up
inkn ip link set lo up
ip link add r0 netns $rt type veth peer name k0 netns $kn || { echo "skip: no veth"; exit 77; }
inrt ip link set r0 mtu 9000 up
inkn ip link set k0 mtu 9000 up
inrt ip addr add 10.78.0.1/24 dev r0
inkn ip addr add $kern/24 dev k0
inkn ip route add default via 10.78.0.1
inrt sysctl -qw net.ipv4.ip_forward=1
# The 1500-byte hop: forwarding towards the kernel allows 1500 bytes (locked, so that the
# router answers larger DF datagrams with "fragmentation needed", RFC 1191 §4).
inrt ip route replace 10.78.0.0/24 dev r0 mtu lock 1500

inkn $py $tmp/peer.py server 5002 "$bytes" $tmp/listening >$tmp/server.out 2>&1 &
spid=$!
pids+=($spid)
for _ in $(seq 400); do [ -e $tmp/listening ] && break; sleep 0.05; done
inrt "$tool" --tap mkp0 --mtu 9000 --ip $ours/24 --gw $gw --listen 5001 --expect-conns 1 \
	--send $kern:5002:"$bytes" --expect-unreachable $nobody:80 --udp-refused $kern:9 --ready $tmp/ready --go $tmp/go --stats --timeout "${MYRIO_KERNEL_TIMEOUT:-240}" \
	>$tmp/tool.out 2>&1 &
tpid=$!
pids+=($tpid)
for _ in $(seq 400); do [ -e $tmp/ready ] && break; sleep 0.05; done
[ -e $tmp/ready ] || { echo "FAIL: myrio-tcpcheck did not start"; cat $tmp/tool.out; exit 1; }
inrt ip link set mkp0 mtu 9000
inrt ip addr add $gw/24 dev mkp0
inrt ip link set mkp0 up
touch $tmp/go
status=0
inkn $py $tmp/peer.py client $ours 5001 "$bytes" || status=1
wait $tpid || status=1
# A stream that never got through leaves the kernel's server waiting: it has 5 s more.
for _ in $(seq 50); do kill -0 $spid 2>/dev/null || break; sleep 0.1; done
kill $spid 2>/dev/null
wait $spid || status=1
cat $tmp/server.out
pids=()
grep -Ev '^ *[a-z_0-9]+ +0$' $tmp/tool.out # the counters that moved, and the tool's lines
if ! grep -Eq '^ *tcp_pmtu_lowered +[1-9]' $tmp/tool.out; then
	echo "FAIL: the MSS was never lowered"
	status=1
fi
frag=$(inrt cat /proc/net/snmp | awk '/^Icmp:/ { if (h) { for (i = 1; i <= NF; i++) if (n[i] == "OutDestUnreachs") print $i } else { h = 1; for (i = 1; i <= NF; i++) n[i] = $i } }')
echo "router: ${frag:-?} destination unreachables sent"
[ $status = 0 ] && echo "PASS: path MTU discovery through a 1500-byte hop, $bytes each way intact; ICMP errors heard" ||
	echo "FAIL"
exit $status
