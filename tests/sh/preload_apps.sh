#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Unmodified Debian programs on tcp_lite through libmyrio-preload.so (myrio-run): each pair
# runs as two preloaded processes on the two cabled NICs of the model daemon (10.0.0.1 and
# 10.0.0.2), and, with root, against the Linux kernel through a TAP cable. Every row checks
# its result: bytes compared, counts from the programs' own reports.
#   nc, socat: a random file relayed byte-exact      curl <- python3 -m http.server: the same
#   python's socket.sendfile (sendfile(2)) into nc: the same
#   iperf3 TCP and UDP (-u -b): bytes sent = bytes received, UDP loss bounded
#   sockperf ping-pong/throughput (UDP and TCP): replies counted
#   nuttcp -t -T 5 -w 128 -v against nuttcp -1 --nofork (both ends speak on the control
#   socket through stdio): the bytes both ends report, equal; and -u -R 50m: a result
# A program missing from the machine skips its row; a row that fails fails the test.
set -uo pipefail
build=${1:?build directory}
for p in myrio-simd myrio-run libmyrio-preload.so; do
	[[ -e $build/$p ]] || { echo "no $build/$p"; exit 77; }
done
# A sanitized build's library needs the sanitizer runtime loaded first (myrio-run appends).
asan_env=
if grep -q "MYRIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
	rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
	[[ -f $rt ]] || { echo "skip: no ASan runtime to preload"; exit 77; }
	asan_env="env LD_PRELOAD=$rt ASAN_OPTIONS=detect_leaks=0"
fi
tmp=$(mktemp -d)
pids=()
ns=
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -n $ns ]] && ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
have() { command -v "$1" >/dev/null || { echo "skip row: no $1"; return 1; }; }

daemon() { # daemon NAME ARGS...: starts myrio-simd on $tmp/NAME.sock
	local sock=$tmp/$1.sock
	shift
	"$build/myrio-simd" --socket "$sock" "$@" >"$tmp/simd.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do [[ -S $sock ]] && return 0; sleep 0.1; done
	cat "$tmp/simd.log"
	echo "daemon did not start"
	exit 1
}
daemon model
A="$asan_env $build/myrio-run --device simd:nic0@$tmp/model.sock --ip 10.0.0.1/24 --"
B="$asan_env $build/myrio-run --device simd:nic1@$tmp/model.sock --ip 10.0.0.2/24 --"
run() { timeout 60 "$@"; }
bg() { # bg LOG CMD...: a server in the background; its pid in $bgpid
	local log=$1
	shift
	timeout 60 "$@" >"$log" 2>&1 &
	bgpid=$!
	pids+=($bgpid)
	sleep 1
}
head -c 3000000 /dev/urandom >"$tmp/file"

# ---- nc: the file one way, a smaller one back on the same connection (nc writes
# without reading, so both ways at once must fit the windows) ----
if have nc; then
	head -c 200000 "$tmp/file" >"$tmp/small"
	timeout 60 $B nc -l -p 5000 -N <"$tmp/small" >"$tmp/nc.out" 2>&1 & # (bg's stdin is /dev/null)
	bgpid=$!
	pids+=($bgpid)
	sleep 1
	run $A nc -N 10.0.0.2 5000 <"$tmp/file" >"$tmp/nc.back" 2>"$tmp/nc.err"
	wait $bgpid
	if cmp -s "$tmp/file" "$tmp/nc.out" && cmp -s "$tmp/small" "$tmp/nc.back"; then
		echo "nc: 3000000 bytes there, 200000 back, byte-exact"
	else
		fail "nc: server got $(stat -c %s "$tmp/nc.out"), client $(stat -c %s "$tmp/nc.back") bytes"
	fi
fi

# ---- socat: a file relayed into a file ----
if have socat; then
	bg "$tmp/socat.srv" $B socat -u TCP4-LISTEN:6000,reuseaddr "OPEN:$tmp/socat.out,creat,trunc"
	run $A socat -u "OPEN:$tmp/file" TCP4:10.0.0.2:6000 || fail "socat client exit $?"
	wait $bgpid || fail "socat server exit"
	cmp -s "$tmp/file" "$tmp/socat.out" && echo "socat: file relayed byte-exact" ||
		fail "socat: the relayed file differs"
fi

# ---- curl <- python3 -m http.server ----
if [[ -n $asan_env ]]; then
	echo "skip row: python3 hangs at start with the ASan runtime preloaded (libmyrio or not)"
elif have curl && have python3; then
	mkdir -p "$tmp/www" && cp "$tmp/file" "$tmp/www/f.bin"
	(cd "$tmp/www" && exec timeout 60 $B python3 -u -m http.server 8000 --bind 10.0.0.2) \
		>"$tmp/http.log" 2>&1 &
	hp=$!
	pids+=($hp)
	# python starts slowly on a loaded machine: until it made its socket, nic1 has no stack
	# to answer ARP, and a connect then ends unreachable (not refused, which curl retries)
	for _ in $(seq 600); do grep -qs "Serving HTTP" "$tmp/http.log" && break; sleep 0.1; done
	run $A curl -sS --retry 10 --retry-delay 1 --retry-connrefused -o "$tmp/got" \
		http://10.0.0.2:8000/f.bin || { fail "curl exit $?"; tail -n 20 "$tmp/http.log"; }
	kill $hp
	wait $hp 2>/dev/null # one process on a NIC at a time
	cmp -s "$tmp/file" "$tmp/got" && echo "curl: 3000000 bytes from http.server, byte-exact" ||
		fail "curl: the fetched file differs"
fi

# ---- sendfile(2): python's socket.sendfile into nc, byte-exact ----
if [[ -z $asan_env ]] && have nc && have python3; then
	timeout 60 $B nc -l -p 5002 -N >"$tmp/sf.out" </dev/null 2>&1 &
	bgpid=$!
	pids+=($bgpid)
	sleep 1
	run $A python3 -c 'import socket, sys
s = socket.create_connection(("10.0.0.2", 5002))
n = s.sendfile(open(sys.argv[1], "rb"))
s.close()
print("sendfile:", n, "bytes sent")' "$tmp/file" || fail "python sendfile exit"
	wait $bgpid
	cmp -s "$tmp/file" "$tmp/sf.out" && echo "sendfile: the file arrived byte-exact" ||
		fail "sendfile: nc got $(stat -c %s "$tmp/sf.out") bytes, not the file"
fi

# ---- iperf3 TCP and UDP ----
iperf_check() { # LOG KIND: bytes the client sent = bytes the server received
	python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if "error" in r:
    print("iperf3:", r["error"]); sys.exit(1)
e = r["end"]
if sys.argv[2] == "tcp":
    # the server stops counting at the test's end: what was in flight then is not counted
    s, g = e["sum_sent"]["bytes"], e["sum_received"]["bytes"]
    print(f"iperf3 tcp: sent {s} received {g} bytes, {e['sum_received']['bits_per_second']/1e9:.2f} Gb/s")
    sys.exit(0 if s > 10**6 and s >= g > 0.9 * s else 1)
u = e["sum"]
print(f"iperf3 udp: {u['packets']} datagrams, {u['lost_packets']} lost")
sys.exit(0 if u["packets"] > 1000 and u["lost_packets"] * 10 <= u["packets"] else 1)
PY
}
if have iperf3; then
	bg "$tmp/iperf.srv" $B iperf3 -s -1 -B 10.0.0.2
	run $A iperf3 -c 10.0.0.2 -t 2 -J >"$tmp/iperf.json" || fail "iperf3 tcp exit"
	wait $bgpid
	iperf_check "$tmp/iperf.json" tcp || fail "iperf3 tcp"
	bg "$tmp/iperfu.srv" $B iperf3 -s -1 -B 10.0.0.2
	run $A iperf3 -c 10.0.0.2 -u -b 50M -t 2 -J >"$tmp/iperfu.json" || fail "iperf3 udp exit"
	wait $bgpid
	iperf_check "$tmp/iperfu.json" udp || fail "iperf3 udp"
fi

# ---- sockperf: server, ping-pong, throughput; UDP and TCP ----
if have sockperf; then
	for proto in udp tcp; do
		opt=
		[[ $proto == tcp ]] && opt=--tcp
		bg "$tmp/sp.srv" $B sockperf server -i 10.0.0.2 -p 11111 $opt
		run $A sockperf ping-pong -i 10.0.0.2 -p 11111 -t 2 $opt >"$tmp/pp.log" 2>&1
		run $A sockperf throughput -i 10.0.0.2 -p 11111 -t 2 $opt >"$tmp/tp.log" 2>&1
		kill $bgpid
		wait $bgpid 2>/dev/null
		read -r sent got < <(sed -n 's/.*SentMessages=\([0-9]*\); ReceivedMessages=\([0-9]*\).*/\1 \2/p' "$tmp/pp.log")
		med=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$tmp/pp.log")
		tp=$(sed -n 's/.*Total of \([0-9]*\) messages sent.*/\1/p' "$tmp/tp.log")
		echo "sockperf $proto: ping-pong $sent sent, $got answered, median ${med:-?} us; throughput $tp messages"
		[[ -n ${sent:-} && $got -gt 100 && $((sent - got)) -le 1 ]] || fail "sockperf $proto ping-pong"
		[[ -n $tp && $tp -gt 1000 ]] || fail "sockperf $proto throughput"
	done
fi

# ---- nuttcp, the seeds' command (the server in the foreground: nuttcp -1 forks after
# listening otherwise, and a fork's child has no stack) ----
nuttcp_mb() { sed -n "s/^nuttcp-$1: *\([0-9.]*\) MB in .*/\1/p" "$2" | tail -1; }
if have nuttcp; then
	bg "$tmp/nut.srv" $B nuttcp -1 --nofork
	run $A nuttcp -t -T 5 -w 128 -v 10.0.0.2 >"$tmp/nut.log" 2>&1 ||
		{ fail "nuttcp exit"; tail -n 20 "$tmp/nut.log" "$tmp/nut.srv"; }
	wait $bgpid
	t=$(nuttcp_mb t "$tmp/nut.log")
	r=$(nuttcp_mb r "$tmp/nut.log") # the server reports through the control connection
	grep Mbps "$tmp/nut.log"
	# the receiver stops at its own -T too: what was in flight then is not counted
	[[ -n $t && -n $r ]] && awk -v t="$t" -v r="$r" 'BEGIN { exit !(t > 1 && r <= t && r >= 0.95 * t) }' &&
		echo "nuttcp: $t MB sent, $r MB received" || fail "nuttcp: sent ${t:-?} MB, received ${r:-?} MB"
	# UDP at a set rate: the client polls its control connection by fileno(), and tests
	# errno once its timer ends the sending loop
	bg "$tmp/nutu.srv" $B nuttcp -1 --nofork
	run $A nuttcp -u -R 50m -T 2 10.0.0.2 >"$tmp/nutu.log" 2>&1 ||
		{ fail "nuttcp -u exit"; tail -n 5 "$tmp/nutu.log" "$tmp/nutu.srv"; }
	wait $bgpid
	grep -q 'Mbps.*drop/pkt' "$tmp/nutu.log" && grep 'Mbps' "$tmp/nutu.log" ||
		fail "nuttcp -u: no result line"
fi

# ---- the Linux kernel through a TAP cable ----
if [[ $(id -u) -eq 0 && -c /dev/net/tun ]] && command -v ip >/dev/null &&
	ip netns add "myrio-pl$$" 2>/dev/null; then
	ns=myrio-pl$$
	tap=mpl$$
	daemon tap --nic "nic0,cable=tap:$tap"
	ip link set "$tap" netns "$ns" && ip -n "$ns" link set "$tap" up &&
		ip -n "$ns" link set lo up && ip -n "$ns" addr add 10.0.0.2/24 dev "$tap" ||
		fail "TAP setup"
	K=(ip netns exec "$ns")
	A="$asan_env $build/myrio-run --device simd:nic0@$tmp/tap.sock --ip 10.0.0.1/24 --"
	if have iperf3; then
		bg "$tmp/kiperf.srv" "${K[@]}" iperf3 -s -1 -B 10.0.0.2
		run $A iperf3 -c 10.0.0.2 -t 2 -J >"$tmp/kiperf.json" || fail "iperf3 to the kernel"
		wait $bgpid
		iperf_check "$tmp/kiperf.json" tcp || fail "iperf3 tcp to the kernel"
	fi
	if have socat; then
		"${K[@]}" timeout 60 socat -u TCP4-LISTEN:6001,reuseaddr "OPEN:$tmp/ksocat.out,creat,trunc" &
		pids+=($!)
		kp=$!
		sleep 1
		run $A socat -u "OPEN:$tmp/file" TCP4:10.0.0.2:6001 || fail "socat to the kernel"
		wait $kp
		cmp -s "$tmp/file" "$tmp/ksocat.out" && echo "socat to the kernel: byte-exact" ||
			fail "socat to the kernel: the file differs"
	fi
else
	echo "skip rows: the kernel through TAP (needs root, /dev/net/tun, network namespaces)"
fi
[[ $failed -eq 0 ]] && echo PASS
exit $failed
