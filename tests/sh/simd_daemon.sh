#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# myrio-simd from the command line: config file, status, refusing a second daemon on the
# same socket, taking over a stale socket file, bad settings, clean shutdown on SIGTERM.
# Usage: simd_daemon.sh BUILD_DIR
set -u
build=${1:?build dir}
simd=$build/myrio-simd
[ -x "$simd" ] || { echo "no $simd"; exit 1; }
tmp=$(mktemp -d /tmp/myrio-simd-sh.XXXXXX)
sock=$tmp/simd.sock
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && cat "$tmp/log"; exit 1; }

wait_socket() {
	for _ in $(seq 100); do
		"$simd" status --socket "$1" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

cat >"$tmp/simd.conf" <<CONF
# two NICs cabled together, a third unplugged
socket $sock
mode 0640
link unlimited
seed 42
nic a0,mac=02:00:00:00:aa:01,cable=a1,loss=0.0
nic a1
nic lonely,mac=02:00:00:00:aa:03
CONF

"$simd" --config "$tmp/simd.conf" >"$tmp/log" 2>&1 &
pid=$!
wait_socket "$sock" || fail "daemon did not come up"
out=$("$simd" status --socket "$sock") || fail "status failed"
echo "$out"
echo "$out" | grep -q "3 NICs, 0 attached" || fail "status: NIC count"
echo "$out" | grep -Eq "^a0 +02:00:00:00:aa:01 +a1 " || fail "status: a0 line"
echo "$out" | grep -Eq "^a1 +02:60:dd:00:00:02 +a0 " || fail "status: a1 cabled back to a0"
echo "$out" | grep -Eq "^lonely .*\(unplugged\)" || fail "status: unplugged NIC"

[ "$(stat -c %a "$sock")" = 640 ] || fail "socket mode $(stat -c %a "$sock"), expected 640"

# The socket from the environment works for status too.
MYRIO_SIMD_SOCKET=$sock "$simd" status | grep -q "3 NICs" || fail "MYRIO_SIMD_SOCKET"

# A second daemon on the same socket refuses to start and leaves the first alone.
"$simd" --socket "$sock" >"$tmp/log2" 2>&1 && fail "second daemon started"
grep -q "another myrio-simd is serving" "$tmp/log2" || fail "no clear message: $(cat "$tmp/log2")"
"$simd" status --socket "$sock" >/dev/null || fail "first daemon hurt"

# Bad settings: clear message, exit status 2, nothing left behind.
for bad in "--nic x,cable=nowhere" "--nic x,loss=2" "--nic x,mac=01:00:00:00:00:01" \
	"--nic x --nic x" "--nic x,cable=y --nic y,cable=z --nic z" "--link bogus" \
	"--nic x,cable=tap:" "--mode 999" "--frobnicate"; do
	# shellcheck disable=SC2086
	"$simd" --socket "$tmp/bad.sock" $bad >"$tmp/log3" 2>&1
	rc=$?
	[ $rc -eq 2 ] || fail "'$bad' exited $rc"
	grep -q "error" "$tmp/log3" || grep -q usage "$tmp/log3" || fail "'$bad': no message"
	[ -e "$tmp/bad.sock" ] && fail "'$bad' left a socket"
done

# Clean shutdown: exit status 0, socket file removed.
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
[ -e "$sock" ] && fail "socket file left behind"

# A stale socket file (a daemon that was SIGKILLed) is taken over.
"$simd" --socket "$sock" >"$tmp/log" 2>&1 &
pid=$!
wait_socket "$sock" || fail "daemon did not come up"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
[ -S "$sock" ] || fail "expected a stale socket file"
"$simd" status --socket "$sock" >/dev/null 2>&1 && fail "status from a dead daemon"
"$simd" --socket "$sock" >"$tmp/log" 2>&1 &
pid=$!
wait_socket "$sock" || fail "stale socket not taken over"
kill -INT "$pid"
wait "$pid" || fail "exit status after SIGINT"
pid=
[ -e "$sock" ] && fail "socket left after SIGINT"
echo "PASS"
