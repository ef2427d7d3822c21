#!/usr/bin/env bash
# Short fuzzing pass in the test suite: builds the libFuzzer targets (clang, ASan + UBSan)
# in their own directory under the build dir given as $1, then runs each target for
# $MYRIO_FUZZ_SECONDS (default 12) from the committed seed corpus and the regression
# inputs. Any crash, leak, sanitizer report or broken invariant fails the test.
# Skipped (77) when clang with libFuzzer is missing. Long runs: scripts/fuzz.sh.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build_root=${1:?usage: fuzz_short.sh BUILD_DIR}
build="$build_root/fuzz-short"
secs=${MYRIO_FUZZ_SECONDS:-12}
# shellcheck source=../../scripts/fuzz_lib.sh
. "$src/scripts/fuzz_lib.sh"

if ! fuzz_have_libfuzzer; then
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
exit $status
