#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One row of bench/compare.sh from its runs (JSON lines, one per run).

A run: {"side": "ours"|"peer", "ok": bool, "value": x, "ops": n, "cpu_app_s": s,
"cpu_nic_s": s, "cpu_proc_s": s, "secs": s, "load": l, "steal_pct": p, "error": why}; secs,
when given, is the window the CPU was read over. CPU fields may be null (not measured):
app = the application's threads (myrio-perf: the thread CPU time of the busy polls that
did work, or all of it when sleeping on interrupts; peers: both processes), nic = the model's
thread (pthread_getcpuclockid), process = getrusage(RUSAGE_SELF) of myrio-perf, or both
peer processes. The row prints each side's median [min-max], the CPU per operation (median
over runs) and the verdict:

  vs a peer:   ratio per interleaved pair (ours/peer, or peer/ours when lower is better);
               MET when every run of both sides succeeded and every pair reaches the
               target, NOT MET when no pair does, else INCONCLUSIVE.
  vs a target: the same with ours against target = fraction x computed ceiling.

A failed run is a failure: it is counted, never contributes a figure, and keeps the row
from MET. A good run's figure counts whatever it is (0 fails a rate target). Fewer than 3
good pairs (or runs) give INCONCLUSIVE. A side whose process CPU over a run's window
exceeds the machine's CPUs is flagged: its CPU figures were read over the wrong span.

usage: verdict.py FILE NAME UNIT PER_OP_UNIT LOWER(0|1) PEER_NAME TARGET [CEILING]
  TARGET: a ratio vs the peer, or (with CEILING, no peer) a fraction of the ceiling;
  "-" for none.
"""
import json
import os
import statistics
import sys


def rng(v, fmt="{:.4g}"):
    if not v:
        return "n/a"
    return (fmt + " [" + fmt + "-" + fmt + "]").format(statistics.median(v), min(v), max(v))


def per_op(runs, field, scale):
    v = [r[field] / r["ops"] * scale for r in runs
         if r.get(field) is not None and r.get(field) >= 0 and r.get("ops")]
    return "{:.3g}".format(statistics.median(v)) if v else "-"


def side(runs, unit, per_unit):
    good = [r for r in runs if r.get("ok") and r.get("value") is not None]
    fails = len(runs) - len(good)
    # CPU seconds per GB; microseconds per transaction or frame
    scale, what = (1, "CPU-s/GB") if per_unit == "GB" else (1e6, "CPU-us/" + per_unit)
    cpu = "app {} nic {} process {} {}".format(
        per_op(good, "cpu_app_s", scale), per_op(good, "cpu_nic_s", scale),
        per_op(good, "cpu_proc_s", scale), what)
    # CPU per op x ops/s cannot exceed the CPUs there are (10% for the clock ticks)
    over = [r["cpu_proc_s"] / r["secs"] for r in good if r.get("cpu_proc_s") is not None
            and r.get("secs") and r["cpu_proc_s"] / r["secs"] > 1.1 * os.cpu_count()]
    if over:
        cpu += " [FLAG: process CPU {:.2f} CPUs > {} CPUs in {} runs]".format(
            max(over), os.cpu_count(), len(over))
    errs = [r.get("error", "") for r in runs if r not in good]
    why = f"; last failure: {errs[-1]}" if errs else ""
    return good, fails, "{} {} ({} failed{}; {})".format(
        rng([r["value"] for r in good]), unit, fails, why, cpu)


def ratio_of(a, b):
    """a / b: a figure of 0 stays in the pairs (0 / 0 clears no target)."""
    return a / b if b else float("inf") if a else float("nan")


def decide(clears, failed):
    """MET only when no run failed and every pair or run clears the target."""
    if not any(clears):
        return "NOT MET"
    return "MET" if all(clears) and not failed else "INCONCLUSIVE"


def main():
    path, name, unit, per_unit, lower, peer_name, target = sys.argv[1:8]
    ceiling = float(sys.argv[8]) if len(sys.argv) > 8 else None
    lower = lower == "1"
    runs = [json.loads(l) for l in open(path) if l.strip()]
    ours = [r for r in runs if r["side"] == "ours"]
    peer = [r for r in runs if r["side"] == "peer"]
    g_o, f_o, s_o = side(ours, unit, per_unit)
    load = [r["load"] for r in runs if r.get("load") is not None]
    steal = [r["steal_pct"] for r in runs if r.get("steal_pct") is not None]
    cond = "load {} steal {}%".format(rng(load, "{:.1f}"), rng(steal, "{:.1f}"))
    print(f"ROW {name}")
    print(f"    libmyrio  {s_o}")
    verdict, ratio = "INCONCLUSIVE", ""
    if peer_name != "-":
        g_p, f_p, s_p = side(peer, unit, per_unit)
        print(f"    {peer_name:9s} {s_p}")
        pairs = [(o["value"], p["value"]) for o, p in zip(ours, peer)
                 if o in g_o and p in g_p]
        r = [ratio_of(p, o) if lower else ratio_of(o, p) for o, p in pairs]
        ratio = "{} ({}/{}, {} pairs)".format(rng(r, "{:.3f}"),
                                            "peer" if lower else "ours",
                                            "ours" if lower else "peer", len(r))
        if target != "-" and len(r) >= 3:
            t = float(target)
            verdict = decide([x >= t for x in r], f_o + f_p)
        elif target == "-":
            verdict = "no target"
        print(f"    ratio     {ratio}; target {target}: {verdict}; {cond}")
    else:
        v = [o["value"] for o in g_o]
        t = float(target) * ceiling
        if len(v) >= 3:
            verdict = decide([x <= t if lower else x >= t for x in v], f_o)
        print(f"    target    {'<=' if lower else '>='} {t:.4g} {unit} = {target} x ceiling "
              f"{ceiling:.4g} {unit}: {verdict}; {cond}")
    print(f"SUMMARY {name} | {verdict}")


if __name__ == "__main__":
    main()
