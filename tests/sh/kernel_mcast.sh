#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Multicast with the Linux kernel as the peer: three NICs of the model daemon on TAP cables,
# enslaved to a Linux bridge in a network namespace. The bridge snoops IGMP and is the
# link's querier (from 0.0.0.0, its default), once as IGMPv2 and once as IGMPv3; its own
# address is a kernel host with UDP sockets (python3, IP_ADD_MEMBERSHIP). Checked:
#  - the bridge's multicast database lists our two receivers' ports for their groups (the
#    kernel understood our reports) and they answer its queries;
#  - a kernel socket in the group gets every datagram examples/mcast_send sends, byte-exact;
#  - our receivers (two sockets on one, one on the other) get both our sender's and the
#    kernel's datagrams;
#  - when a receiver leaves, the bridge drops its port from the group (in v2, only from
#    the group no kernel host is in: RFC 2236 lets a third member take the leave over).
# Needs root, /dev/net/tun, iproute2 and python3; exits 77 (skipped) otherwise.
# Usage: kernel_mcast.sh BUILD_DIR
set -u
build=${1:?build dir}
for p in myrio-simd mcast_send mcast_recv; do
	[ -x "$build/$p" ] || { echo "no $build/$p"; exit 77; }
done
if [ "$(id -u)" -ne 0 ] || [ ! -e /dev/net/tun ] || ! command -v ip >/dev/null ||
	! command -v bridge >/dev/null || ! command -v python3 >/dev/null; then
	echo "skipped: needs root, /dev/net/tun, iproute2 and python3"
	exit 77
fi
if ! ip netns add "myrio-probe-$$" 2>/dev/null; then
	echo "skipped: cannot create network namespaces"
	exit 77
fi
ip netns del "myrio-probe-$$"

tmp=$(mktemp -d /tmp/myrio-kmc.XXXXXX)
ns=myrio-kmc$$
taps=(kmca$$ kmcb$$ kmcc$$)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	for t in "${taps[@]}"; do ip link del "$t" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log; do echo "== $f"; tail -20 "$f"; done
	exit 1
}

G1=239.1.1.1
G2=239.1.1.2
PORT=9100
N_OURS=500
N_KERNEL=300

# The kernel's side: a member that counts byte-exact datagrams, and a sender, in the
# examples' format (8-byte sequence number, then byte i = i % 251 from offset 8).
cat >"$tmp/kpeer.py" <<'PY'
import socket, struct, sys, time
mode, group, ifaddr, port, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if mode == "recv":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Room for every datagram of the run: python, descheduled on a loaded host, must not
    # lose them to a full socket buffer (SO_RCVBUFFORCE: above rmem_max, as root).
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 4 << 20)
    s.bind(("", port))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton(group) + socket.inet_aton(ifaddr))
    print("ready", flush=True)
    # Our sender starts once the script's waits are over (a minute on a loaded host): the
    # first datagram gets as long as the receivers' --seconds, the next ones 15 s each.
    s.settimeout(150)
    got = bad = 0
    try:
        while got + bad < n:
            d, src = s.recvfrom(2048)
            s.settimeout(15)
            ok = len(d) >= 8 and all(d[i] == i % 251 for i in range(8, len(d)))
            got, bad = got + ok, bad + (not ok)
    except socket.timeout:
        pass
    print(f"kernel got {got} bad {bad}", flush=True)
    sys.exit(0 if got == n and bad == 0 else 1)
else:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
    body = bytes(i % 251 for i in range(8, 200))
    for i in range(n):
        s.sendto(struct.pack("<Q", i) + body, (group, port))
        time.sleep(0.001)
    print(f"kernel sent {n}", flush=True)
PY

# Ports of the bridge that the multicast database lists for a group.
mdb_ports() {
	bridge -n "$ns" mdb show dev br0 2>/dev/null | awk -v g="$1" '$0 ~ " grp " g " " { for (i = 1; i < NF; i++) if ($i == "port") print $(i + 1) }' | sort -u | tr '\n' ' '
}

wait_for() { # seconds, then a command that must succeed
	local t=$1
	shift
	for _ in $(seq $((t * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}

lists() { # group, port: whether the bridge lists the port for the group
	[[ " $(mdb_ports "$1") " == *" $2 "* ]]
}

run_version() {
	local v=$1 sock=$tmp/simd$1.sock t0=$SECONDS
	"$build/myrio-simd" --socket "$sock" --nic "nic0,cable=tap:${taps[0]}" \
		--nic "nic1,cable=tap:${taps[1]}" --nic "nic2,cable=tap:${taps[2]}" \
		>"$tmp/simd$v.log" 2>&1 &
	local simd=$!
	pids+=($simd)
	for _ in $(seq 100); do [ -S "$sock" ] && ip link show "${taps[2]}" >/dev/null 2>&1 && break; sleep 0.05; done
	ip netns add "$ns" || fail "ip netns add"
	ip netns exec "$ns" sh -c 'for f in all default; do
		echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6; done' 2>/dev/null
	# The querier: 2 s between queries, 1 s to answer.
	ip -n "$ns" link add br0 type bridge mcast_snooping 1 mcast_querier 1 \
		mcast_igmp_version "$v" mcast_query_interval 200 \
		mcast_query_response_interval 100 mcast_startup_query_interval 50 ||
		fail "bridge with IGMPv$v querier"
	for t in "${taps[@]}"; do
		ip link set "$t" netns "$ns" || fail "moving $t"
		ip -n "$ns" link set "$t" master br0 up
	done
	ip -n "$ns" link set br0 up
	ip -n "$ns" addr add 10.213.0.254/24 dev br0

	local dev="@$sock"
	# The receivers end on their count; --seconds only bounds a broken run (the setup's
	# waits below can take tens of seconds on a loaded host).
	"$build/mcast_recv" --ip 10.213.0.2 --groups "$G1,$G2" --sockets 2 \
		--count $((N_OURS + N_KERNEL)) --seconds 150 "simd:nic1$dev" >"$tmp/recv1_$v.log" 2>&1 &
	local r1=$!
	pids+=($r1)
	"$build/mcast_recv" --ip 10.213.0.3 --groups "$G1,$G2" --sockets 1 \
		--count $((N_OURS + N_KERNEL)) --seconds 150 "simd:nic2$dev" >"$tmp/recv2_$v.log" 2>&1 &
	local r2=$!
	pids+=($r2)
	ip netns exec "$ns" python3 "$tmp/kpeer.py" recv "$G1" 10.213.0.254 $PORT $N_OURS \
		>"$tmp/krecv$v.log" 2>&1 &
	local kr=$!
	pids+=($kr)
	wait_for 10 grep -q ready "$tmp/krecv$v.log" || fail "v$v: kernel receiver"
	wait_for 10 grep -q joined "$tmp/recv1_$v.log" || fail "v$v: receiver 1"
	wait_for 10 grep -q joined "$tmp/recv2_$v.log" || fail "v$v: receiver 2"
	# The kernel host's own report, as the bridge understood it: until then the bridge does
	# not hand the group's datagrams to br0 (its report can miss the start; it answers the
	# next query).
	wait_for 10 lists $G1 br0 || fail "v$v: bridge does not list its host (br0) for $G1"

	# Our reports, as the kernel understood them.
	wait_for 10 lists $G1 "${taps[1]}" || fail "v$v: bridge does not list ${taps[1]} for $G1: $(mdb_ports $G1)"
	wait_for 10 lists $G1 "${taps[2]}" || fail "v$v: bridge does not list ${taps[2]} for $G1"
	wait_for 10 lists $G2 "${taps[1]}" || fail "v$v: bridge does not list ${taps[1]} for $G2"
	echo "IGMPv$v: bridge lists for $G1: $(mdb_ports $G1); for $G2: $(mdb_ports $G2)" \
		"($((SECONDS - t0)) s after the daemon started)"

	"$build/mcast_send" --ip 10.213.0.1 --group $G1 --count $N_OURS --rate 2000 --size 200 \
		"simd:nic0$dev" >"$tmp/send$v.log" 2>&1 || fail "v$v: mcast_send"
	ip netns exec "$ns" python3 "$tmp/kpeer.py" send "$G2" 10.213.0.254 $PORT $N_KERNEL \
		>"$tmp/ksend$v.log" 2>&1 || fail "v$v: kernel sender"
	wait "$kr" || fail "v$v: the kernel did not get our $N_OURS datagrams: $(cat "$tmp/krecv$v.log")"
	wait "$r1" || fail "v$v: receiver 1: $(tail -1 "$tmp/recv1_$v.log")"
	wait "$r2" || fail "v$v: receiver 2: $(tail -1 "$tmp/recv2_$v.log")"
	echo "IGMPv$v: $(tail -1 "$tmp/krecv$v.log")"
	echo "IGMPv$v: receiver 1 $(tail -1 "$tmp/recv1_$v.log")"
	echo "IGMPv$v: receiver 2 $(tail -1 "$tmp/recv2_$v.log")"
	# they heard the bridge's queries (from 0.0.0.0) and answered
	for f in "$tmp/recv1_$v.log" "$tmp/recv2_$v.log"; do
		q=$(sed -n 's/.*igmp_queries_rx \([0-9]*\).*/\1/p' "$f")
		[ "${q:-0}" -ge 1 ] || fail "v$v: no query heard ($f)"
	done
	# The receivers left when they ended: the bridge lets their ports go. In v3 each sends
	# its leave for both groups. In v2 only a host that holds the "last reporter" flag does
	# (RFC 2236 §6): a host whose pending report was suppressed by another's gave it up,
	# unless it reported again since; one that never was suppressed holds it. So v2 is
	# checked on $G2, whose only members are our two receivers: of two, the later reporter
	# holds its flag. $G1 also has the kernel host on br0, whose report can suppress both of
	# ours; then neither leaves and the bridge keeps both ports until the membership times
	# out, as it would for two Linux hosts.
	local groups=("$G1" "$G2") port_of=([1]=${taps[1]} [2]=${taps[2]})
	((v == 2)) && groups=("$G2")
	local g must=() gone
	for r in 1 2; do
		local sup
		sup=$(sed -n 's/.*igmp_reports_suppressed \([0-9]*\).*/\1/p' "$tmp/recv${r}_$v.log")
		((v == 3 || ${sup:-0} == 0)) && must+=("${port_of[$r]}")
	done
	for g in "${groups[@]}"; do
		if ((${#must[@]})); then
			gone=$(printf " && ! bridge -n $ns mdb show dev br0 | grep -q 'port %s grp $g'" "${must[@]}")
			gone=${gone# && }
		else # both were suppressed: the later reporter of the two still holds its flag
			gone="! bridge -n $ns mdb show dev br0 | grep -q 'port ${taps[1]} grp $g'"
			gone="$gone || ! bridge -n $ns mdb show dev br0 | grep -q 'port ${taps[2]} grp $g'"
		fi
		wait_for 15 bash -c "$gone" ||
			fail "v$v: a receiver's port did not let go of $g after it left (${must[*]:-either} must): $(mdb_ports "$g")"
		echo "IGMPv$v: after the leaves, $g: $(mdb_ports "$g")"
	done
	kill "$simd"
	wait "$simd" 2>/dev/null
	ip netns del "$ns"
}

run_version 2
run_version 3
echo ok
