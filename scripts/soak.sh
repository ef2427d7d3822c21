#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Soak with random faults: connections churn and move checked data both ways between two
# stacks over the device model while the weather changes every 50 ms of model time (loss,
# reordering, duplication, corruption), links flap and completion entries with impossible
# lengths appear. Fails on any lost, duplicated or reordered byte, any connection error,
# or heap growth. Not part of the suite (it runs for minutes).
#   scripts/soak.sh [SECONDS=600] [BUILD_DIR=build] [SEED=1] [CONNS=32]
# A sanitizer build dir (build-asan) works too and also checks memory safety and leaks.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-600}
build=${2:-$src/build}
seed=${3:-1}
conns=${4:-32}
if [ ! -f "$build/build.ninja" ]; then
	cmake -S "$src" -B "$build" -G Ninja >/dev/null || exit 1
fi
ninja -C "$build" -j2 test_load_soak >/dev/null || exit 1
echo "soak: ${secs} s, seed ${seed}, ${conns} connections, build ${build}"
start=$(date +%s)
MYRIO_SOAK_SECONDS=$secs MYRIO_SOAK_SEED=$seed MYRIO_SOAK_CONNS=$conns \
	"$build/tests/test_load_soak" 2>&1 | grep -v 'no hugepages'
rc=${PIPESTATUS[0]}
echo "soak: exit $rc after $(($(date +%s) - start)) s"
exit "$rc"
