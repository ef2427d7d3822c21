#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tcp_lite against the Linux stack: our stack's link ends in a TAP device inside a private
# network namespace, and the kernel pings us, exchanges UDP with us (also datagrams that
# travel in IPv4 fragments), sends us a stream, receives one from us, and gets a RST from a
# closed port (and gives us one).
# The Linux stack is the reference: when it and tcp_lite disagree, tcp_lite is wrong.
#
# The stack runs on a NIC of the in-process device model (the real driver) whose cable ends
# in the TAP device; MYRIO_KERNEL_VIA=pair uses the in-memory pair port instead, and
# MYRIO_KERNEL_FAULTS=loss=0.01,... makes the model's cable lose, reorder and duplicate;
# MYRIO_KERNEL_CUBIC=1 runs our side with CUBIC; MYRIO_KERNEL_COOKIES=1 makes our listener
# answer every SYN with a SYN cookie, and the kernel's client checks that timestamps, SACK
# and window scaling were negotiated all the same.
#
# usage: kernel_interop.sh BUILD_DIR    (MYRIO_KERNEL_BYTES sets the stream size, default 100M)
# exit 77 (skipped) without root, network namespaces or /dev/net/tun.
set -u
build=${1:?usage: $0 BUILD_DIR}
tool=$build/myrio-tcpcheck
bytes=${MYRIO_KERNEL_BYTES:-100M}
via=${MYRIO_KERNEL_VIA:-sim}
faults=${MYRIO_KERNEL_FAULTS:-}   # model cable faults, e.g. loss=0.01,reorder=0.01,dup=0.01
py=/usr/bin/python3
[ -x "$tool" ] || { echo "skip: $tool not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: needs root (network namespace, TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "skip: no /dev/net/tun"; exit 77; }
[ -x $py ] || { echo "skip: needs $py"; exit 77; }
command -v ip >/dev/null || { echo "skip: needs iproute2"; exit 77; }

ns=myrio-kt$$
tmp=$(mktemp -d)
ip netns add $ns 2>/dev/null || { echo "skip: cannot create a network namespace"; exit 77; }
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del $ns 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
inns() { ip netns exec $ns "$@"; }

cat > $tmp/peer.py <<'PY'
import os, socket, struct, sys, time

def block():
    return bytes(i % 251 for i in range(251 * 1024))
BLK = block()

def size(s):
    m = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    return int(float(s[:-1]) * m[s[-1]]) if s[-1] in m else int(s)

def server(port, n):
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('0.0.0.0', port)); ls.listen(1)
    open(sys.argv[-1], 'w').close()            # listening
    c, _ = ls.accept(); got = 0; bad = False; t0 = time.time()
    while True:
        d = c.recv(1 << 16)
        if not d: break
        o = got % 251
        if d != BLK[o:o + len(d)]: bad = True
        got += len(d)
    c.close(); dt = time.time() - t0
    print(f"kernel server: {got} bytes from tcp_lite in {dt:.2f} s, pattern {'WRONG' if bad else 'intact'}")
    return 0 if got == n and not bad else 1

def negotiated(c):
    """Options of an established socket, from TCP_INFO: tcpi_options, tcpi_{snd,rcv}_wscale."""
    i = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return {'ts': bool(i[5] & 1), 'sack': bool(i[5] & 2), 'ws': bool(i[5] & 4),
            'snd_wscale': i[6] & 15, 'rcv_wscale': i[6] >> 4}

def client(ip, port, n):
    c = socket.create_connection((ip, port), timeout=60); sent = 0; t0 = time.time()
    opts = negotiated(c)
    print(f"kernel client: options with tcp_lite {opts}")
    if os.environ.get('MYRIO_KERNEL_COOKIES') and not (opts['ts'] and opts['sack'] and opts['ws']
                                                       and opts['snd_wscale'] > 0):
        print("kernel client: a SYN cookie lost options"); return 1
    while sent < n:
        o = sent % 251; k = min(n - sent, 1 << 16)
        sent += c.send(BLK[o:o + k])
    c.shutdown(socket.SHUT_WR)
    while c.recv(4096): pass                    # until tcp_lite closes too
    dt = time.time() - t0
    print(f"kernel client: {sent} bytes to tcp_lite in {dt:.2f} s ({sent / dt / 1e6:.1f} MB/s)")
    return 0

def udp(ip, port, n, need):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5)
    ok = 0
    for i in range(n):
        msg = bytes((i + j) % 256 for j in range(1 + (i * 37) % 1472))
        s.sendto(msg, (ip, port))
        try:                                    # skip duplicates and late echoes
            while True:
                d, a = s.recvfrom(2048)
                if d == msg and a == (ip, port): ok += 1; break
        except socket.timeout:
            pass
    print(f"kernel udp: {ok}/{n} datagrams echoed intact (need {need})")
    return 0 if ok >= need else 1

def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack(f'!{len(b) // 2}H', b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff

def ping(ip, n, need):
    # 5 s per echo: a loaded machine can delay the first one (ARP, scheduling) that long.
    # Sizes beyond the MTU travel in fragments both ways (reassembly, fragmented replies).
    # An echo without an answer is sent once more (a new sequence number) before it counts
    # as lost: with the suite's jobs in parallel, a frame can be lost to the load.
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(5)
    ok = 0
    sizes = [56, 1472, 4000, 20000, 56]
    for k in range(n):
        payload = os.urandom(sizes[k % len(sizes)])
        for seq in (2 * k, 2 * k + 1):
            h = struct.pack('!BBHHH', 8, 0, 0, 0x4d59, seq)
            pkt = struct.pack('!BBHHH', 8, 0, csum(h + payload), 0x4d59, seq) + payload
            s.sendto(pkt, (ip, 0))
            t = time.time(); got = False
            while time.time() - t < 5 and not got:
                try: d, a = s.recvfrom(65535)
                except socket.timeout: break
                ihl = (d[0] & 15) * 4; r = d[ihl:]
                got = (a[0] == ip and r[0] == 0 and r[4:8] == pkt[4:8] and r[8:] == payload
                       and csum(r) == 0)
            if got:
                break
            print(f"kernel ping: no reply to echo {seq} of {len(payload)} bytes")
        ok += got
    print(f"kernel ping: {ok}/{n} echoes of 56..20000 bytes answered by tcp_lite (need {need})")
    return 0 if ok >= need else 1

def udp_big(ip, port, need):
    """Datagrams of up to 65507 bytes travel in IPv4 fragments both ways: tcp_lite
    reassembles them and echoes them back in fragments."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
    sizes = [1473, 2000, 2961, 8000, 30000, 65507]; ok = 0
    for n in sizes:
        msg = bytes((n + j * 7) % 256 for j in range(n))
        s.sendto(msg, (ip, port))
        try:
            while True:
                d, a = s.recvfrom(65535)
                if d == msg and a == (ip, port): ok += 1; break
        except socket.timeout:
            pass
    print(f"kernel udp: {ok}/{len(sizes)} datagrams of 1473..65507 bytes echoed intact in fragments (need {need})")
    return 0 if ok >= need else 1

def refused(ip, port):
    try:
        socket.create_connection((ip, port), timeout=5)
    except ConnectionRefusedError:
        print(f"kernel connect to tcp_lite closed port {port}: refused (RST)"); return 0
    except Exception as e:
        print(f"kernel connect to closed port: {e!r}"); return 1
    print("kernel connect to closed port: accepted?!"); return 1

cmd = sys.argv[1]
if cmd == 'server': sys.exit(server(int(sys.argv[2]), size(sys.argv[3])))
if cmd == 'client': sys.exit(client(sys.argv[2], int(sys.argv[3]), size(sys.argv[4])))
if cmd == 'udp': sys.exit(udp(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
if cmd == 'udpbig': sys.exit(udp_big(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
if cmd == 'ping': sys.exit(ping(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
if cmd == 'refused': sys.exit(refused(sys.argv[2], int(sys.argv[3])))
PY

kern=10.77.0.1
ours=10.77.0.2
inns ip link set lo up
# The kernel's server for our stream, listening before anything else starts.
inns $py $tmp/peer.py server 5002 "$bytes" $tmp/listening > $tmp/server.out 2>&1 &
spid=$!; pids+=($spid)
for _ in $(seq 400); do [ -e $tmp/listening ] && break; sleep 0.05; done
# tcp_lite: TCP sink on 5001, UDP echo on 7; sends to the kernel once told to go; expects
# the kernel's RST from port 5003 where nothing listens.
inns "$tool" ${MYRIO_KERNEL_CUBIC:+--cubic} ${MYRIO_KERNEL_COOKIES:+--syncookies --stats} --via $via ${faults:+--sim "$faults" --stats} --tap mkt0 --ip $ours/24 --listen 5001 --expect-conns 1 --udp-echo 7 \
	--send $kern:5002:"$bytes" --expect-refused $kern:5003 --ready $tmp/ready --go $tmp/go \
	--timeout 300 > $tmp/tool.out 2>&1 &
tpid=$!; pids+=($tpid)
for _ in $(seq 400); do [ -e $tmp/ready ] && break; sleep 0.05; done
[ -e $tmp/ready ] || { echo "FAIL: myrio-tcpcheck did not start"; cat $tmp/tool.out; exit 1; }
inns ip addr add $kern/24 dev mkt0
inns ip link set mkt0 up
if [ -n "${MYRIO_KERNEL_PCAP:-}" ] && command -v tcpdump >/dev/null; then
	# the kernel's view of the link, headers only, for debugging
	inns tcpdump -i mkt0 -s 128 -w "$MYRIO_KERNEL_PCAP" >/dev/null 2>&1 &
	pids+=($!)
	sleep 0.5
fi
touch $tmp/go
status=0
# Ping and UDP have no recovery: on a faulty cable most, not all, make the round trip.
inns $py $tmp/peer.py ping $ours 5 $([ -n "$faults" ] && echo 3 || echo 5) || status=1
inns $py $tmp/peer.py udp $ours 7 200 $([ -n "$faults" ] && echo 150 || echo 200) || status=1
inns $py $tmp/peer.py udpbig $ours 7 $([ -n "$faults" ] && echo 2 || echo 6) || status=1
inns $py $tmp/peer.py refused $ours 5999 || status=1
inns $py $tmp/peer.py client $ours 5001 "$bytes" || status=1
wait $spid || status=1
cat $tmp/server.out
wait $tpid || status=1
cat $tmp/tool.out
if [ -n "${MYRIO_KERNEL_COOKIES:-}" ] && ! grep -Eq '^ *tcp_syncookies_ok +[1-9]' $tmp/tool.out; then
	echo "FAIL: no connection came through a SYN cookie"
	status=1
fi
pids=()
[ $status = 0 ] && echo "PASS: tcp_lite and the Linux stack agree" || echo "FAIL"
exit $status
