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
