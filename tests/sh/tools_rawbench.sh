#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/myrio-rawbench's CPU accounting, the figures bench/compare.sh judges raw frames on:
# - step: frames moved, every one received, and the thread's CPU split between the
#   application's rounds and the model's steps, both parts positive and adding up to it;
# - rate: the application thread's CPU within the process's, and the share of its polls
#   that moved frames a fraction whose CPU is within the thread's.
# It asserts no rate (a shared machine), only that the figures are there and consistent.
set -euo pipefail
build=${1:?build directory}
bin=$build/myrio-rawbench
[[ -x $bin ]] || { echo "no $bin"; exit 77; }
export MYRIO_LOG=1
step=$(timeout 120 "$bin" step -s 60 -n 50000)
rate=$(timeout 120 "$bin" rate -s 60 -t 0.3)
printf '%s\n' "$step" "$rate"
python3 - "$step" "$rate" <<'PY'
import re, sys
step, rate = sys.argv[1:]
n = re.search(r"^step: (\d+) frames of 60 bytes sent, (\d+) received$", step, re.M)
assert n and int(n.group(2)) >= 50000 and int(n.group(1)) >= int(n.group(2)), step
c = re.search(r"^step cpu: thread ([\d.]+) s, application ([\d.]+) ns per frame, model "
              r"([\d.]+) ns per frame \(thread CPU clock x wall-clock share\): (\d+) frames "
              r"per application CPU-second, (\d+) with the model$", step, re.M)
assert c, step
thread, app, model, per_app, per_all = map(float, c.groups())
rx = int(n.group(2))
# both parts positive (the application's as frames per CPU-second: at a small wall-clock
# share its ns per frame may print as 0.0)
assert thread > 0 and per_app > 0 and model > 0, step
# the two shares add up to the thread's CPU (rounding of the printed figures aside)
assert abs((app + model) * rx / 1e9 - thread) <= 0.01 * thread + 2e-3, step
# the application's ns per frame is printed to 0.1 ns: at a few ns (a loaded machine's
# wall-clock share) that rounding alone is several percent of it
assert abs(1e9 / per_app - app) <= 0.05 + 1e-3 and per_all < per_app, step

r = re.search(r"^rate: 60-byte frames, link unlimited: (\d+) frames/s .* over ([\d.]+) s", rate, re.M)
assert r and int(r.group(1)) > 0, rate
p = re.search(r"^cpu: process ([\d.]+) s \(model thread ([\d.]+) s\)", rate, re.M)
a = re.search(r"^application thread: ([\d.]+) s, polls that moved frames ([\d.]+)% of the "
              r"run: ([\d.]+) s, (\d+) frames per busy CPU-second$", rate, re.M)
assert p and a, rate
proc, nic = map(float, p.groups())
app_cpu, share, busy, per_busy = map(float, a.groups())
assert 0 < app_cpu <= proc - nic + 0.01, rate
# the share and busy are printed to 0.1 % and 1 ms: on a loaded machine (the model's thread
# seldom on a core) they round to 0; the frames per busy CPU-second say busy was not 0
assert 0 <= share <= 100 and per_busy > 0 and 0 <= busy <= app_cpu + 0.001, rate
assert abs(busy - app_cpu * share / 100) <= 0.002 + 0.01 * busy, rate
print("myrio-rawbench: step and rate CPU figures consistent")
PY
