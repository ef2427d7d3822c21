#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs of bench/compare.sh (JSON lines on stdin) with each value made operations per
CPU-second of one CPU field (cpu_app_s, cpu_nic_s or cpu_proc_s); a run without that
field, or a failed one, has no figure.

usage: per_cpu.py FIELD <runs >runs
"""
import json
import sys

field = sys.argv[1]
for line in sys.stdin:
    if not line.strip():
        continue
    r = json.loads(line)
    c = r.get(field)
    ok = r.get("ok", r.get("value") is not None)
    r["value"] = r["ops"] / c if ok and r.get("ops") and c and c > 0 else None
    r["ok"] = r["value"] is not None
    print(json.dumps(r))
