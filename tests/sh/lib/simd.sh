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
