# SPDX-License-Identifier: BSD-3-Clause
# For test scripts that run programs on NICs of the model daemon (source it; needs $build).

# Exits 77 (skipped) unless every named program of the build exists.
simd_need() {
	for p in "$@"; do
		[[ -x $build/$p ]] || { echo "no $build/$p"; exit 77; }
	done
}

# Starts the daemon (with the given options); sets tmp (a directory removed at exit), sock, and pids (processes
# killed at exit, the daemon first among them).
simd_start() {
	tmp=$(mktemp -d)
	sock=$tmp/simd.sock
	pids=()
	trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
	"$build/myrio-simd" --socket "$sock" "$@" >"$tmp/simd.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
	[[ -S $sock ]] || { cat "$tmp/simd.log"; echo "daemon did not start"; exit 1; }
}

# Sets asan_env: the command prefix that loads the sanitizer runtime before a sanitized
# build's preload library (myrio-run appends the library); empty for other builds. Exits 77
# when the runtime cannot be found.
preload_asan_env() {
	asan_env=
	grep -q "MYRIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null || return 0
	local rt
	rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
	[[ -f $rt ]] || { echo "skip: no ASan runtime to preload"; exit 77; }
	asan_env="env LD_PRELOAD=$rt ASAN_OPTIONS=detect_leaks=0"
}

# Starts a daemon whose nic0 is cabled to a new TAP interface, moves the TAP into a network
# namespace with an address (lo up too) and adds the daemon to pids. Usage:
# simd_tap_in_ns NS TAP SOCKET LOG ADDR/LEN; fails when the set-up does.
simd_tap_in_ns() {
	local ns=$1 tap=$2 sock=$3 log=$4 addr=$5
	"$build/myrio-simd" --socket "$sock" --nic "nic0,cable=tap:$tap" >"$log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
	ip link set "$tap" netns "$ns" && ip -n "$ns" link set "$tap" up &&
		ip -n "$ns" link set lo up && ip -n "$ns" addr add "$addr" dev "$tap"
}
