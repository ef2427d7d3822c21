#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds into build/ (or $1), optionally with sanitizers: scripts/build.sh build-asan asan
# (ThreadSanitizer: scripts/build.sh build-tsan tsan [TARGET...])
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMYRIO_WERROR=ON)
[[ ${2:-} == asan ]] && flags+=(-DMYRIO_SANITIZE=ON -DCMAKE_C_COMPILER=clang)
[[ ${2:-} == tsan ]] && flags+=(-DMYRIO_TSAN=ON -DCMAKE_C_COMPILER=clang)
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" "${@:3}"
