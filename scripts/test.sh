#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite, from a fresh Debian 12 machine: set-up, a normal build and a
# sanitizer build (AddressSanitizer + UBSan), ctest on both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build
bash scripts/build.sh build-asan asan
status=0
echo "== tests (release build)"
ctest --test-dir build --output-on-failure -j2 || status=1
echo "== tests (AddressSanitizer + UBSan build)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j2 -LE sh || status=1
exit $status
