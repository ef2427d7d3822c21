#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A bounded memcheck pass in the suite: the fault-injection, load and model-stack tests that
# run quickly under valgrind (about a minute together), with a time budget so a slow
# machine skips the rest instead of timing out. The full pass is scripts/valgrind.sh.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: valgrind_integration.sh BUILD_DIR}
command -v valgrind >/dev/null || {
	echo "valgrind not found: skipping"
	exit 77
}
if grep -q 'MYRIO_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
	echo "sanitizer build: valgrind does not run on it; skipping"
	exit 77
fi
MYRIO_LOAD_CONNS=${MYRIO_LOAD_CONNS:-1000} MYRIO_VALGRIND_BUDGET=${MYRIO_VALGRIND_BUDGET:-90} exec bash "$src/scripts/valgrind.sh" "$build" \
	'^test_(fault_device|fault_reboot|load_conns|stack_tcp_sim|sim_bus)$'
