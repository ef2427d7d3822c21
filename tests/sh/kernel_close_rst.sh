#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Closes that lose data, against the Linux kernel through a TAP cable. One socket program
# plays our side under myrio-run (tcp_lite on a NIC of the model daemon, cabled to a TAP in
# a namespace); the kernel's socket in the namespace is the peer. Our side closes:
# - unread:      with the peer's data unread (RFC 2525 §2.17: a RST, not a FIN);
# - unread_fin:  the same after the peer's FIN;
# - late:        with nothing unread, and the peer sends data after it saw our FIN (RFC 1122
#                §4.2.2.13: a RST answers it);
# - linger0:     with SO_LINGER 0 (a RST at once).
# The peer waits for the reset (POLLERR) and reports what its next recv and send return.
# The same program first runs on two kernel sockets in the namespace: that is the reference,
# and our side must give the peer exactly what the kernel's gives it. Twice: the kernel with
# its defaults, and with timestamps, SACK and window scaling off.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so
py=/usr/bin/python3
[[ -x $py ]] || { echo "skip: needs $py"; exit 77; }
[[ $(id -u) -eq 0 && -c /dev/net/tun ]] || { echo "skip: needs root and /dev/net/tun"; exit 77; }
preload_asan_env
ns=myrio-cr$$
ip netns add "$ns" 2>/dev/null || { echo "skip: cannot create a network namespace"; exit 77; }
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; ip netns del "$ns"; rm -rf "$tmp"' EXIT
simd_tap_in_ns "$ns" "mcr$$" "$tmp/simd.sock" "$tmp/simd.log" 10.0.0.2/24 ||
	{ cat "$tmp/simd.log"; echo "FAIL: TAP setup"; exit 1; }
K=(ip netns exec "$ns")

cat >"$tmp/closer.py" <<'PY'
import ctypes, errno, os, select, socket, struct, sys, termios, time

DATA = bytes(i % 251 for i in range(1000))

def wait_for(cond, secs):
    end = time.time() + secs
    while not cond():
        if time.time() > end:
            return False
        time.sleep(0.01)
    return True

libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]

def unread(c):
    # FIONREAD into an aligned int, as a C program's (fcntl.ioctl hands the call a copy of
    # its buffer at any alignment)
    n = ctypes.c_int(0)
    if libc.ioctl(c.fileno(), termios.FIONREAD, ctypes.byref(n)) < 0:
        raise OSError(ctypes.get_errno(), 'FIONREAD')
    return n.value

def ours(mode, port, ready, done):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('0.0.0.0', port))
    ls.listen(1)
    open(ready, 'w').close()
    c, _ = ls.accept()
    if mode.startswith('unread'):   # the peer's data (and FIN) in, none of it read
        if not wait_for(lambda: unread(c) >= len(DATA), 30):
            print('ours: the data never arrived'); return 1
        if mode == 'unread_fin':
            p = select.poll(); p.register(c, select.POLLRDHUP)
            if not p.poll(30000):
                print('ours: no FIN from the peer'); return 1
    if mode == 'linger0':               # once the peer's connect() has returned
        if c.recv(1) != b'g':
            print('ours: no go from the peer'); return 1
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    c.close()
    wait_for(lambda: os.path.exists(done), 60)  # stay, so that our side can still answer
    return 0

def outcome(f):
    try:
        r = f()
        return 'EOF' if r in (b'', 0) else f'ok({r if isinstance(r, int) else len(r)})'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def peer(mode, ip, port):
    s = socket.create_connection((ip, port), timeout=30)
    if mode.startswith('unread'):
        s.sendall(DATA)
        if mode == 'unread_fin':
            s.shutdown(socket.SHUT_WR)
    elif mode == 'linger0':
        s.sendall(b'g')
    elif mode == 'late':
        s.settimeout(30)
        if s.recv(1) != b'':
            print(f'{mode}: no FIN from our side'); return 1
        s.sendall(DATA)                     # after our close: nobody reads it
    p = select.poll(); p.register(s, 0)     # POLLERR and POLLHUP come anyway
    ev = p.poll(30000)
    if not ev or not ev[0][1] & select.POLLERR:
        print(f'{mode}: no reset within 30 s (events {ev})'); return 1
    s.setblocking(False)
    print(f'{mode}: recv={outcome(lambda: s.recv(100))} send={outcome(lambda: s.send(b"x"))}')
    return 0

if sys.argv[1] == 'ours':
    sys.exit(ours(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]))
sys.exit(peer(sys.argv[2], sys.argv[3], int(sys.argv[4])))
PY

# round WHO MODE PORT: our side (WHO: kernel or tcp_lite) and the kernel's peer; the peer's
# report is appended to $tmp/WHO.out, our side's output to $tmp/WHO.ours.
round() {
	local who=$1 mode=$2 port=$3 ip ours
	rm -f "$tmp/ready" "$tmp/done"
	if [[ $who == kernel ]]; then
		ip=127.0.0.1
		ours=("${K[@]}" "$py")
	else
		ip=10.0.0.1
		ours=($asan_env "$build/myrio-run" --device "simd:nic0@$tmp/simd.sock" --ip 10.0.0.1/24 -- "$py")
	fi
	timeout 90 "${ours[@]}" "$tmp/closer.py" ours "$mode" "$port" "$tmp/ready" "$tmp/done" \
		>>"$tmp/$who.ours" 2>&1 &
	local opid=$!
	pids+=($opid)
	for _ in $(seq 400); do [[ -e $tmp/ready ]] && break; sleep 0.05; done
	[[ -e $tmp/ready ]] || { cat "$tmp/$who.ours"; echo "FAIL: $who's side of $mode does not listen"; exit 1; }
	"${K[@]}" timeout 60 "$py" "$tmp/closer.py" peer "$mode" "$ip" "$port" >>"$tmp/$who.out" 2>&1 ||
		echo "$mode: the peer failed" >>"$tmp/$who.out"
	touch "$tmp/done"
	wait $opid || echo "$mode: our side ended with $?" >>"$tmp/$who.out"
}

# The kernel with its defaults, then with timestamps, SACK and window scaling off (the
# namespace's sysctls, for both of its sockets in the reference).
modes=(unread unread_fin late linger0)
port=7000
status=0
for opts in defaults no_options; do
	if [[ $opts == no_options ]]; then
		for k in tcp_timestamps tcp_sack tcp_window_scaling; do
			"${K[@]}" sysctl -qw "net.ipv4.$k=0" || { echo "FAIL: sysctl $k"; exit 1; }
		done
	fi
	rm -f "$tmp/kernel.out" "$tmp/tcp_lite.out"
	for who in kernel tcp_lite; do
		for mode in "${modes[@]}"; do
			port=$((port + 1))
			round "$who" "$mode" "$port"
		done
	done
	echo "the kernel ($opts) as the peer, our side on the kernel's sockets:"
	sed 's/^/  /' "$tmp/kernel.out"
	echo "the kernel ($opts) as the peer, our side on tcp_lite:"
	sed 's/^/  /' "$tmp/tcp_lite.out"
	# The reference must be what the test is about: every close reset the peer.
	if grep -vq ': recv=' "$tmp/kernel.out" || grep -q 'recv=ok\|recv=EOF send=ok' "$tmp/kernel.out"; then
		echo "FAIL: the kernel-to-kernel reference did not reset as expected"
		cat "$tmp/kernel.ours"
		status=1
	fi
	if ! cmp -s "$tmp/kernel.out" "$tmp/tcp_lite.out"; then
		echo "FAIL: the kernel's peer saw tcp_lite close otherwise than the kernel"
		cat "$tmp/tcp_lite.ours"
		status=1
	fi
done
((status == 0)) && echo "every close: the kernel's peer saw what the kernel's own close gives"
exit $status
