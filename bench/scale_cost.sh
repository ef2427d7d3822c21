#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What idle connections cost tcp_lite: ns per poll with 100 connections and with CONNS
# (nothing due, and one connection probed every millisecond), ns per readiness-set wait
# with 100 and CONNS connections registered (none ready), ns per SYN to a full table, and
# the memory per connection. Two stacks over the stepped device model in one process
# (tests/integration/test_load_idle_conns.c, which also asserts the poll cost stays within
# 2x); the figures are wall-clock, so run it on a quiet machine.
#
#   bench/scale_cost.sh [BUILD_DIR] [CONNS]      (default build, 100000)
set -euo pipefail
B=${1:-build}
CONNS=${2:-100000}
t=$B/tests/test_load_idle_conns
[ -x "$t" ] || { echo "build first: $t not found" >&2; exit 1; }
MYRIO_SCALE_CONNS=$CONNS "$t" | sed -n 's/^  //p'
