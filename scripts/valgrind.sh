#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the integration tests once under valgrind memcheck: any invalid read or write, use of
# uninitialised memory, or definite/indirect leak fails the run.
#   scripts/valgrind.sh [BUILD_DIR] [TEST_NAME_REGEX]
# BUILD_DIR (default build) must be a normal build (no sanitizers). $MYRIO_VALGRIND_BUDGET
# (seconds, default unlimited) stops starting new tests once spent, for bounded runs in the
# suite; tests not run are listed. Integration tests use shared memory and threads, both
# fine under memcheck; the stepped model keeps them deterministic.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
filter=${2:-.}
budget=${MYRIO_VALGRIND_BUDGET:-0}
command -v valgrind >/dev/null || {
	echo "valgrind not found (apt-get install valgrind)"
	exit 77
}
if grep -q 'MYRIO_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
	echo "$build is a sanitizer build; valgrind needs a normal one"
	exit 2
fi
# Whatever generator the build directory was made with: configure only a new one.
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$src" -B "$build" >/dev/null || exit 1
fi
cmake --build "$build" -j2 >/dev/null || exit 1
logdir="$build/valgrind"
mkdir -p "$logdir"
start=$(date +%s)
status=0
skipped=()
for src_file in "$src"/tests/integration/test_*.c; do
	t=$(basename "$src_file" .c)
	[[ $t =~ $filter ]] || continue
	exe="$build/tests/$t"
	[ -x "$exe" ] || continue
	if [ "$budget" -gt 0 ] && [ $(($(date +%s) - start)) -ge "$budget" ]; then
		skipped+=("$t")
		continue
	fi
	t0=$(date +%s)
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
		--track-origins=yes --num-callers=30 --suppressions="$src/scripts/valgrind.supp" \
		--log-file="$logdir/$t.log" \
		"$exe" >"$logdir/$t.out" 2>&1
	rc=$?
	errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$logdir/$t.log" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "ok    $t ($(($(date +%s) - t0)) s, ${errs:-0} errors)"
	else
		echo "FAIL  $t (exit $rc, ${errs:-?} errors): $logdir/$t.log"
		grep -E 'Invalid|uninitialised|definitely lost|indirectly lost|FAILED' "$logdir/$t.log" \
			"$logdir/$t.out" | head -5
		status=1
	fi
done
[ ${#skipped[@]} -gt 0 ] && echo "budget of ${budget} s spent; not run: ${skipped[*]}"
exit $status
