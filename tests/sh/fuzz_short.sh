#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Short fuzzing pass in the test suite: builds the libFuzzer targets (clang, ASan + UBSan)
# in their own directory under the build dir given as $1, then runs each target for
# $MYRIO_FUZZ_SECONDS (default 12) from the committed seed corpus and the regression
# inputs, and the live daemon fuzzer (tests/integration/test_simd_fuzz.c) for as long.
# Any crash, leak, sanitizer report or broken invariant fails the test.
# Skipped (77) when clang with libFuzzer is missing. Long runs: scripts/fuzz.sh.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build_root=${1:?usage: fuzz_short.sh BUILD_DIR}
build="$build_root/fuzz-short"
secs=${MYRIO_FUZZ_SECONDS:-12}
# shellcheck source=../../scripts/fuzz_lib.sh
. "$src/scripts/fuzz_lib.sh"

# The live daemon's fuzzer (protocol and BAR0 stores, seeded): from the suite's build.
live_status=0
if [ -x "$build_root/tests/test_simd_fuzz" ]; then
	MYRIO_FUZZ_SECONDS=$secs "$build_root/tests/test_simd_fuzz" >"$build_root/simd_fuzz_live.out" \
		2>"$build_root/simd_fuzz_live.log"
	rc=$?
	grep '^#' "$build_root/simd_fuzz_live.out"
	[ $rc -eq 0 ] || {
		echo "simd live fuzz: FAILED; log: $build_root/simd_fuzz_live.log"
		live_status=1
	}
fi
if ! fuzz_have_libfuzzer; then
	[ $live_status -eq 0 ] || exit 1
	echo "clang with libFuzzer not found: skipping (apt-get install clang)"
	exit 77
fi
mkdir -p "$build"
fuzz_build "$src" "$build" || {
	echo "building the fuzz targets failed"
	exit 1
}
status=0
for t in $(fuzz_targets "$build"); do
	fuzz_run "$src" "$build" "$t" "$secs" || status=1
done
[ $live_status -eq 0 ] || status=1
exit $status
