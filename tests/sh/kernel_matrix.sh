#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tcp_lite against the Linux stack with non-default settings on either side: one row per
# setting, each a fresh network namespace whose TAP device ends in our stack
# (tools/myrio-tcpcheck, as tests/sh/kernel_interop.sh uses it). Every row moves 20 MB
# each way, byte-exact (the pattern is checked by both ends), unless it says otherwise.
# The kernel's side is varied with the namespace's sysctls and socket options in a small
# python3 peer; ours with myrio-tcpcheck's options. A table of the rows ends the output.
# Every row must pass.
#
# usage: kernel_matrix.sh BUILD_DIR
#   MYRIO_MATRIX_ROWS="name name..." runs only those rows; MYRIO_MATRIX_BYTES (20M) the
#   size each way; MYRIO_MATRIX_VIA (pair) the link for rows that do not need the model;
#   MYRIO_MATRIX_VERBOSE=1 prints all of our side's counters for each row.
# exit 77 (skipped) without root, network namespaces or /dev/net/tun.
set -u
build=${1:?usage: $0 BUILD_DIR}
tool=$build/myrio-tcpcheck
bytes=${MYRIO_MATRIX_BYTES:-20M}
via=${MYRIO_MATRIX_VIA:-pair}
py=/usr/bin/python3
[ -x "$tool" ] || { echo "skip: $tool not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: needs root (network namespace, TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "skip: no /dev/net/tun"; exit 77; }
[ -x $py ] || { echo "skip: needs $py"; exit 77; }
command -v ip >/dev/null || { echo "skip: needs iproute2"; exit 77; }
ip netns add myrio-km-probe$$ 2>/dev/null || { echo "skip: cannot create a network namespace"; exit 77; }
ip netns del myrio-km-probe$$

tmp=$(mktemp -d)
nss=()
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in "${nss[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

cat > $tmp/peer.py <<'PY'
"""The kernel's end of a row. server: accepts connections and checks the pattern of each
(i % 251 at stream offset i); client: sends the pattern to tcp_lite. Options:
rcvbuf=N, maxseg=N (set before listen/connect), pause=BYTES:SECONDS (the reader stops
after BYTES for SECONDS), conns=N (accept N connections), closefirst (shut our side as soon
as n bytes are in, without waiting for the peer's FIN: both sides close at once)."""
import socket, struct, sys, time

BLK = bytes(i % 251 for i in range(251 * 1024))

def size(s):
    m = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    return int(float(s[:-1]) * m[s[-1]]) if s[-1] in m else int(s)

def opts(args):
    o = {}
    for a in args:
        k, _, v = a.partition('=')
        o[k] = v
    return o

def tune(s, o):
    if 'rcvbuf' in o: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(o['rcvbuf']))
    if 'maxseg' in o: s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, int(o['maxseg']))

def serve_one(c, n, o):
    got = 0; bad = False
    pause_at, pause_s = -1, 0
    if 'pause' in o:
        a, b = o['pause'].split(':'); pause_at, pause_s = size(a), float(b)
    while True:
        if pause_at >= 0 and got >= pause_at:
            time.sleep(pause_s); pause_at = -1
        want = 1 << 16 if pause_at < 0 else min(1 << 16, max(1, pause_at - got))
        d = c.recv(want)
        if not d: break
        if d != BLK[got % 251:got % 251 + len(d)]: bad = True
        got += len(d)
        if 'closefirst' in o and got == n:
            c.shutdown(socket.SHUT_WR)      # our FIN while theirs is on its way
    c.close()
    return got, bad

def server(port, n, o, ready):
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tune(ls, o)
    ls.bind(('0.0.0.0', port)); ls.listen(64)
    open(ready, 'w').close()
    conns = int(o.get('conns', 1)); ok = 0; total = 0; t0 = time.time()
    ls.settimeout(float(o.get('tmo', 120)))
    for _ in range(conns):
        try: c, _ = ls.accept()
        except socket.timeout: break
        c.settimeout(float(o.get('tmo', 120)))
        try: got, bad = serve_one(c, n, o)
        except OSError as e: print(f"kernel server: {e!r}"); break
        ok += (got == n and not bad); total += got
    dt = time.time() - t0
    print(f"kernel server: {ok}/{conns} connections, {total} bytes from tcp_lite in {dt:.2f} s")
    return 0 if ok == conns else 1

def tcpext():
    """This namespace's TcpExt counters (the kernel's reasons for retransmitting)."""
    with open('/proc/net/netstat') as f:
        lines = [l.split() for l in f if l.startswith('TcpExt:')]
    return dict(zip(lines[0][1:], map(int, lines[1][1:])))

def client(ip, port, n, o):
    before = tcpext()
    c = socket.socket(); tune(c, o); c.settimeout(float(o.get('tmo', 120)))
    c.connect((ip, port)); sent = 0; t0 = time.time()
    while sent < n:
        k = min(n - sent, 1 << 16)
        sent += c.send(BLK[sent % 251:sent % 251 + k])
    c.shutdown(socket.SHUT_WR)
    while c.recv(4096): pass
    dt = time.time() - t0
    # tcpi_total_retrans: on a link that loses nothing, retransmissions mean our ACKs
    # misled the kernel (e.g. duplicate ACKs that were window updates, RFC 5681 §4.2).
    # Those after a timeout (the first segment, then the rest in slow start) or a loss
    # probe mean no ACK came in time instead: the row excuses them only if our side
    # stalled that long (kernel_matrix.sh), so they are counted apart; the row checks.
    retrans = struct.unpack_from('I', c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 100)[0]
    after = tcpext()
    d = {k: after.get(k, 0) - before.get(k, 0) for k in
         ('TCPFastRetrans', 'TCPSlowStartRetrans', 'TCPTimeouts', 'TCPLossProbes')}
    limit = int(o.get('retrans', 20))
    timed = d['TCPTimeouts'] + d['TCPSlowStartRetrans']
    print(f"kernel client: {sent} bytes to tcp_lite in {dt:.2f} s, {retrans} segments retransmitted: "
          f"{d['TCPFastRetrans']} fast, {timed} after {d['TCPTimeouts']} timeouts, "
          f"{d['TCPLossProbes']} loss probes")
    print(f"retrans {retrans} {timed} {d['TCPLossProbes']} {limit}")
    return 0

cmd = sys.argv[1]
if cmd == 'server': sys.exit(server(int(sys.argv[2]), size(sys.argv[3]), opts(sys.argv[5:]), sys.argv[4]))
if cmd == 'client': sys.exit(client(sys.argv[2], int(sys.argv[3]), size(sys.argv[4]), opts(sys.argv[5:])))
PY

kern=10.77.0.1
ours=10.77.0.2
results=()
status=0
rowno=0

wait_file() {
	for _ in $(seq 400); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

# The kernel client's retransmissions against its limit (peer.py: "retrans TOTAL
# AFTER_TIMEOUTS LOSS_PROBES LIMIT"). What our side's stalls explain does not count: the
# process not scheduled on a loaded machine reads nothing from the TAP and acknowledges
# nothing. A frame the TAP dropped before our side read it explains one retransmission; a
# gap of 5 ms or more in our loop one loss probe (the kernel probes 2 RTTs plus 2 ms after
# its last segment); and a gap of 200 ms (TCP_RTO_MIN) the retransmissions after timeouts.
# Retransmissions our ACKs caused (fast retransmits, the storm this limit is for) always
# count, and so do probes and timeouts without a stall to explain them.
# retrans_verdict ROW_DIR TAPDROPS: prints the count and fails if over the limit.
retrans_verdict() {
	local r=$1 drops=$2 total timed probes limit gap stalls
	read -r _ total timed probes limit < <(grep '^retrans ' $r/client.out) || return 0
	read -r gap stalls < <(sed -n 's/^loop: longest gap between passes \([0-9]*\).* ms, \([0-9]*\) gaps.*/\1 \2/p' \
		$r/tool.out)
	gap=${gap:-0} stalls=${stalls:-0}
	local excused=$((drops + (probes < stalls ? probes : stalls)))
	[ "$gap" -ge 200 ] && excused=$((excused + timed))
	local counted=$((total > excused ? total - excused : 0))
	echo "retransmissions counted: $counted of $total (at most $limit; excused: $drops TAP drops," \
		"$stalls stalls of our side of 5 ms or more, the longest $gap ms)"
	[ $counted -le "$limit" ]
}

# row NAME DESCRIPTION TIMEOUT SYSCTLS PEER_OPTS TOOL_OPTS [route]
#   SYSCTLS: "key=value ..." set in the kernel's namespace (net.ipv4. omitted);
#   PEER_OPTS: options of peer.py (both directions); TOOL_OPTS: myrio-tcpcheck's.
#   A TOOL_OPTS containing --repeat sends only (no kernel client); PEER_OPTS "conns=N"
#   must then match it. "route" puts a router namespace with a 1500-byte hop between.
row() {
	local name=$1 desc=$2 tmo=$3 sysctls=$4 peer=$5 topts=$6 route=${7:-}
	local bytes=${rowbytes:-$bytes} # a row may move less (rowbytes=N row ...)
	if [ -n "${MYRIO_MATRIX_ROWS:-}" ] && ! [[ " $MYRIO_MATRIX_ROWS " == *" $name "* ]]; then
		return
	fi
	rowno=$((rowno + 1))
	local ns=myrio-km$$-$rowno
	local kns=$ns r=$tmp/$name
	mkdir -p "$r"
	ip netns add $ns
	nss+=($ns)
	local kip=$kern gwopt=() link=$via tapmtu=1500
	if [ -n "$route" ]; then
		# ours --TAP, MTU 9000-- router $ns --1500-- router $ns-m --9000-- kernel $ns-k:
		# both ends offer an MSS of 8960; the middle hop answers "fragmentation needed"
		kns=$ns-k
		local mns=$ns-m
		ip netns add $kns
		ip netns add $mns
		nss+=($kns $mns)
		ip link add vr$rowno netns $ns type veth peer name vm$rowno netns $mns
		ip link add vn$rowno netns $mns type veth peer name vk$rowno netns $kns
		ip netns exec $ns ip addr add 10.78.0.1/24 dev vr$rowno
		ip netns exec $ns ip link set vr$rowno mtu 1500 up
		ip netns exec $mns ip addr add 10.78.0.2/24 dev vm$rowno
		ip netns exec $mns ip link set vm$rowno mtu 1500 up
		ip netns exec $mns ip addr add 10.79.0.1/24 dev vn$rowno
		ip netns exec $mns ip link set vn$rowno mtu 9000 up
		ip netns exec $kns ip addr add 10.79.0.2/24 dev vk$rowno
		ip netns exec $kns ip link set vk$rowno mtu 9000 up
		ip netns exec $kns ip link set lo up
		ip netns exec $kns ip route add default via 10.79.0.1
		ip netns exec $mns ip route add 10.77.0.0/24 via 10.78.0.1
		ip netns exec $ns ip route add 10.79.0.0/24 via 10.78.0.2
		ip netns exec $ns sysctl -qw net.ipv4.ip_forward=1
		ip netns exec $mns sysctl -qw net.ipv4.ip_forward=1
		kip=10.79.0.2
		gwopt=(--gw $kern)
		link=sim # the pair port's buffers take no jumbo frames
		tapmtu=9000
	fi
	ip netns exec $ns ip link set lo up
	for kv in $sysctls; do ip netns exec $kns sysctl -qw "net.ipv4.$kv" || return 1; done
	local t0=$SECONDS ok=1
	ip netns exec $kns $py $tmp/peer.py server 5002 "$bytes" $r/listening $peer tmo=$tmo > $r/server.out 2>&1 &
	local spid=$!
	pids+=($spid)
	wait_file $r/listening || ok=0
	local listen=(--listen 5001 --expect-conns 1)
	[[ "$topts" == *--repeat* ]] && listen=()
	ip netns exec $ns "$tool" $topts --via $link --tap mkt$rowno \
		--ip $ours/24 "${gwopt[@]}" "${listen[@]}" --send $kip:5002:"$bytes" \
		--ready $r/ready --go $r/go --timeout $tmo --stats > $r/tool.out 2>&1 &
	local tpid=$!
	pids+=($tpid)
	wait_file $r/ready || ok=0
	ip netns exec $ns ip addr add $kern/24 dev mkt$rowno
	# The TAP's queue stands in for the wire and our receive ring: its default of 1,000
	# frames is less than one window of the maxseg_88 row's 76-byte segments (262,144 bytes,
	# about 3,450 frames), and frames beyond it are dropped before our side reads them.
	ip netns exec $ns ip link set mkt$rowno mtu $tapmtu txqueuelen 5000 up
	touch $r/go
	if [ ${#listen[@]} -gt 0 ]; then
		timeout $tmo ip netns exec $kns $py $tmp/peer.py client $ours 5001 "$bytes" $peer tmo=$tmo \
			> $r/client.out 2>&1 || ok=0
	fi
	# Frames the kernel's side of the TAP dropped (read while our side still holds it).
	local tapdrops
	tapdrops=$(ip netns exec $ns cat /sys/class/net/mkt$rowno/statistics/tx_dropped 2>/dev/null)
	wait $tpid || ok=0
	wait $spid || ok=0
	local verdict
	verdict=$(retrans_verdict $r "${tapdrops:-0}") || ok=0
	local secs=$((SECONDS - t0))
	local res=PASS
	[ $ok = 1 ] || { res=FAIL; status=1; }
	echo "---- $name: $desc: $res in ${secs} s"
	cat $r/server.out 2>/dev/null
	grep -v '^retrans ' $r/client.out 2>/dev/null
	[ -n "$verdict" ] && echo "$verdict"
	echo "tap: ${tapdrops:-(not read, the TAP was gone)} frames from the kernel dropped before our side read them"
	grep -E '^(sent|inbound|send:|timeout)|tcp_(retransmits|fast_retransmits|rto_expired|zero_window_probes|resets_sent|resets_rcvd|timeouts) ' $r/tool.out
	[ -n "${MYRIO_MATRIX_VERBOSE:-}" ] && cat $r/tool.out
	results+=("$(printf '%-14s %-58s %4s s  %s' "$name" "$desc" "$secs" "$res")")
	for n in $ns $ns-k $ns-m; do ip netns del $n 2>/dev/null; done
}

row ws_off "kernel window scaling off" 90 "tcp_window_scaling=0" "" ""
row sack_off "kernel SACK off" 90 "tcp_sack=0" "" ""
row ts_off "kernel timestamps off" 90 "tcp_timestamps=0" "" ""
row all_off "kernel scaling, SACK and timestamps off" 90 \
	"tcp_window_scaling=0 tcp_sack=0 tcp_timestamps=0" "" ""
row rcvbuf_1k "kernel SO_RCVBUF 1 KiB" 90 "" "rcvbuf=1024" ""
row maxseg_88 "kernel TCP_MAXSEG 88" 90 "" "maxseg=88" ""
row maxseg_536 "kernel TCP_MAXSEG 536" 90 "" "maxseg=536" ""
row ecn "kernel ECN on (tcp_ecn=1)" 90 "tcp_ecn=1" "" ""
row newreno "our side NewReno" 90 "" "" ""
row cubic "our side CUBIC" 90 "" "" "--cubic"
# the kernel's own first jumbo segments are lost before its path MTU drops: retransmitted
row mtu9000_hop "MTU 9000 on our link, a 1500-byte hop between" 90 "" "retrans=200" "--mtu 9000" \
	route
row reader_pause "kernel reader stops 30 s after 1 MB, resumes" 150 "" "pause=1M:30" ""
rowbytes=10K row conns_1000 "1,000 connections of 10 KiB back to back (TIME_WAIT)" 180 "" "conns=1000" \
	"--repeat 1000"
row close_both "both sides close at once" 90 "" "closefirst" ""

echo
echo "kernel matrix (each row ${bytes} each way unless it says otherwise):"
for l in "${results[@]}"; do echo "  $l"; done
pids=()
[ $status = 0 ] && echo "PASS: every row" || echo "FAIL: some rows failed"
exit $status
