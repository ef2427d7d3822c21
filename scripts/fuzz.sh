#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Long fuzzing runs: builds the libFuzzer targets in build-fuzz/ and runs each one for
# SECONDS (default 600), one after the other (the machine has few cores).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   MYRIO_FUZZ_MERGE=1 scripts/fuzz.sh ...   also minimizes the inputs found into
#                                             fuzz/corpus/<target>/ (commit them)
# Crashes land in build-fuzz/artifacts/; reproduce with
#   MYRIO_FUZZ_LOG=1 build-fuzz/fuzz/fuzz_<target> build-fuzz/artifacts/<file>
# and add the input to tests/regress/<target>/ once fixed.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${MYRIO_FUZZ_BUILD:-build-fuzz}
secs=${1:-600}
shift || true
. scripts/fuzz_lib.sh
fuzz_have_libfuzzer || {
	echo "clang with libFuzzer is required (apt-get install clang)"
	exit 1
}
mkdir -p "$build"
fuzz_build "$src" "$build" || exit 1
targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(fuzz_targets "$build")
status=0
for t in "${targets[@]}"; do
	fuzz_run "$src" "$build" "$t" "$secs" || status=1
	if [ "${MYRIO_FUZZ_MERGE:-0}" = 1 ]; then
		"$build/fuzz/fuzz_$t" -merge=1 "fuzz/corpus/$t" "$build/corpus/$t" >/dev/null 2>&1 &&
			echo "$t: corpus merged into fuzz/corpus/$t"
	fi
done
exit $status
