# SPDX-License-Identifier: BSD-3-Clause
# Shared by scripts/fuzz.sh and tests/sh/fuzz_short.sh (sourced, not run).
# fuzz_build SRC BUILD: configures and builds the libFuzzer targets with clang (those
#   only: the tools and examples are not needed).
# fuzz_run SRC BUILD TARGET SECONDS: runs one target from the committed seed corpus,
#   writing new inputs to BUILD/corpus/TARGET and crashes to BUILD/artifacts/; prints
#   "TARGET: N execs in S s (R/s), coverage C" and returns non-zero on a crash.

fuzz_have_libfuzzer() {
	command -v clang >/dev/null 2>&1 || return 1
	local t
	t=$(mktemp -d)
	printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$t/f.c"
	clang -fsanitize=fuzzer "$t/f.c" -o "$t/f" >/dev/null 2>&1
	local rc=$?
	rm -rf "$t"
	return $rc
}

fuzz_build() {
	local src=$1 build=$2
	cmake -S "$src" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DMYRIO_FUZZ=ON \
		-DMYRIO_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
		ninja -C "$build" -j2 fuzz/all >"$build/build.log" 2>&1 || {
		tail -30 "$build/build.log" 2>/dev/null
		return 1
	}
}

fuzz_targets() {
	local build=$1 f
	for f in "$build"/fuzz/fuzz_*; do
		[ -x "$f" ] && basename "$f" | sed 's/^fuzz_//'
	done
}

fuzz_run() {
	local src=$1 build=$2 t=$3 secs=$4
	mkdir -p "$build/corpus/$t" "$build/artifacts"
	local log="$build/fuzz_$t.log"
	local seeds="$src/fuzz/corpus/$t"
	local regress=()
	[ -d "$src/tests/regress/$t" ] && regress=("$src/tests/regress/$t")
	# First directory receives new inputs; the committed seeds stay untouched.
	"$build/fuzz/fuzz_$t" "$build/corpus/$t" "$seeds" "${regress[@]}" \
		-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
		-print_final_stats=1 -artifact_prefix="$build/artifacts/${t}-" >"$log" 2>&1
	local rc=$?
	local execs rate cov
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	echo "$t: ${execs:-?} execs in ${secs} s (${rate:-?}/s), coverage ${cov:-?} edges"
	if [ $rc -ne 0 ]; then
		echo "$t: FAILED (exit $rc); log: $log"
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5
		return 1
	fi
	return 0
}
