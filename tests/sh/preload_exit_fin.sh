#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A preloaded program that writes and exits at once still ends its stream: at exit the
# preload waits until the peer acknowledged the data and the FIN (docs/preload.md).
# - Over the model with 5% loss (LOSS), socat sends a file and exits, 40 times (ROUNDS);
#   the receiving socat (also preloaded) must see the end of the stream and the file whole
#   each time. Chance decides whether a lost FIN shows here; the rows below make sure.
# - With root, against the Linux kernel through a TAP cable, the kernel drops every FIN from
#   us for 6 s (nftables): the sender must stay past that and deliver its FIN; and with
#   MYRIO_EXIT_LINGER_MS=1500 and the FINs dropped for good, the sender must reset the
#   connection at its bound, so the kernel's socat ends (ECONNRESET) instead of waiting.
set -uo pipefail
build=$(cd "${1:?build directory}" && pwd)
source "$(dirname "$0")/lib/simd.sh"
simd_need myrio-simd myrio-run libmyrio-preload.so
command -v socat >/dev/null || { echo "no socat"; exit 77; }
# A sanitized build's library needs the sanitizer runtime loaded first (myrio-run appends).
asan_env=
if grep -q "MYRIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
	rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
	[[ -f $rt ]] || { echo "skip: no ASan runtime to preload"; exit 77; }
	asan_env="env LD_PRELOAD=$rt ASAN_OPTIONS=detect_leaks=0"
fi
simd_start --model "loss=${LOSS:-0.05},seed=7"
A="$asan_env $build/myrio-run --device simd:nic0@$sock --ip 10.0.0.1/24 --"
B="$asan_env $build/myrio-run --device simd:nic1@$sock --ip 10.0.0.2/24 --"
head -c 20000 /dev/urandom >"$tmp/file"
# waits until socat's log (-d -d) says it listens
listening() { for _ in $(seq 100); do grep -qs "listening on" "$1" && return 0; sleep 0.05; done; return 1; }
rounds=${ROUNDS:-40}
for i in $(seq "$rounds"); do
	rm -f "$tmp/out"
	timeout 30 $B socat -d -d -u TCP4-LISTEN:6000,reuseaddr "OPEN:$tmp/out,creat,trunc" \
		2>"$tmp/srv.log" &
	srv=$!
	listening "$tmp/srv.log" || { cat "$tmp/srv.log"; echo "FAIL: the receiver does not listen"; exit 1; }
	timeout 30 $A socat -u "OPEN:$tmp/file" TCP4:10.0.0.2:6000 2>"$tmp/cli.log" ||
		echo "round $i: the sender exited with $?"
	if ! wait $srv; then
		tail -n 5 "$tmp/srv.log" "$tmp/cli.log"
		echo "FAIL: round $i: the receiver did not see the end of the stream"
		exit 1
	fi
	cmp -s "$tmp/file" "$tmp/out" || { echo "FAIL: round $i: the file arrived damaged"; exit 1; }
done
echo "$rounds rounds over a lossy cable: every stream ended, every file whole"

# ---- the Linux kernel through a TAP cable, its firewall dropping our FINs ----
ns=myrio-xf$$
if ! [[ $(id -u) -eq 0 && -c /dev/net/tun ]] || ! command -v nft >/dev/null ||
	! ip netns add "$ns" 2>/dev/null; then
	echo "skip rows: the kernel through TAP (needs root, /dev/net/tun, nft, network namespaces)"
	exit 0
fi
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; ip netns del "$ns"; rm -rf "$tmp"' EXIT
tap=mxf$$
simd_tap_in_ns "$ns" "$tap" "$tmp/tap.sock" "$tmp/tap.log" 10.0.0.2/24 ||
	{ echo "FAIL: TAP setup"; exit 1; }
K=(ip netns exec "$ns")
drop_fins() {
	"${K[@]}" nft -f - <<'NFT'
table ip exitfin {
	chain input {
		type filter hook input priority 0;
		ip saddr 10.0.0.1 tcp flags & fin == fin drop
	}
}
NFT
}
if ! drop_fins; then
	echo "skip rows: nftables does not work here"
	exit 0
fi
A="$asan_env $build/myrio-run --device simd:nic0@$tmp/tap.sock --ip 10.0.0.1/24 --"
# kernel_receive PORT: socat in the namespace, into $tmp/kout; its pid in $kpid
kernel_receive() {
	rm -f "$tmp/kout"
	rm -f "$tmp/ksrv.log"
	"${K[@]}" timeout 40 socat -d -d -lf "$tmp/ksrv.log" -u "TCP4-LISTEN:$1,reuseaddr" \
		"OPEN:$tmp/kout,creat,trunc" &
	kpid=$!
	listening "$tmp/ksrv.log" || { cat "$tmp/ksrv.log"; echo "FAIL: the kernel's socat"; exit 1; }
}
failed=0
kernel_receive 6001
start=$SECONDS
timeout 40 $A socat -u "OPEN:$tmp/file" TCP4:10.0.0.2:6001 2>"$tmp/cli.log" &
snd=$!
sleep 6 # past the 5 s the exit once waited at most
"${K[@]}" nft delete table ip exitfin
wait $snd || echo "the sender exited with $?"
if ! wait $kpid; then
	tail -n 5 "$tmp/ksrv.log" "$tmp/cli.log"
	echo "FAIL: the kernel did not see the end of the stream once FINs went through again"
	failed=1
elif ! cmp -s "$tmp/file" "$tmp/kout"; then
	echo "FAIL: the file arrived damaged at the kernel"
	failed=1
else
	echo "FINs dropped for 6 s: the sender stayed $((SECONDS - start)) s, the kernel saw the end"
fi

drop_fins || exit 1
kernel_receive 6002
start=$SECONDS
MYRIO_EXIT_LINGER_MS=1500 timeout 40 $A socat -u "OPEN:$tmp/file" TCP4:10.0.0.2:6002 \
	2>"$tmp/cli.log"
wait $kpid
krc=$?
# socat -u ends with status 0 on a reset, saying so in its log
if ((krc == 124)) || ! grep -q "reset by peer" "$tmp/ksrv.log"; then
	tail -n 5 "$tmp/ksrv.log" "$tmp/cli.log"
	echo "FAIL: FINs dropped for good: the kernel's socat ended with $krc, not on a reset"
	failed=1
else
	echo "FINs dropped for good: reset at the bound, the kernel's socat ended in $((SECONDS - start)) s"
fi
"${K[@]}" nft delete table ip exitfin
exit $failed
