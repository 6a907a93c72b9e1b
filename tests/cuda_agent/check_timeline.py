#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare gbpf's trace of apps/async2.cu with the app's own CUDA-event timings.

Usage: check_timeline.py APP_STDOUT TRACE.json
For each stream the app reports, the GPU slices of that stream in the trace
(the last kernel, H2D and D2H copy) must last what the app measured within 5%.
Prints TAP lines.
"""
import json
import re
import sys

n = failed = 0


def ok(cond, msg):
    global n, failed
    n += 1
    failed += 0 if cond else 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, msg))


phases = {}
for line in open(sys.argv[1]):
    m = re.match(r"phase stream=(\d+) h2d_us=([\d.]+) kernel_us=([\d.]+) d2h_us=([\d.]+)", line)
    if m:
        phases[int(m.group(1))] = {"H2D": float(m.group(2)), "kernel": float(m.group(3)),
                                   "D2H": float(m.group(4))}
ok(len(phases) == 2, "the app reported 2 streams")
events = json.load(open(sys.argv[2]))["traceEvents"]
# The app times the LAST kernel/copy of each kind on each stream (its untimed warm-up launch
# comes first): compare with the last slice of that kind on that stream.
gpu, last_ts = {}, {}
for e in events:
    a = e.get("args") or {}
    if e.get("ph") == "X" and e.get("pid", 0) >= 100000000 and "stream" in a:
        key = (a["stream"], a.get("kind", ""))
        if e["ts"] >= last_ts.get(key, -1):
            last_ts[key] = e["ts"]
            gpu[key] = e["dur"]
kinds = sorted(set(k for _, k in gpu))
print("# GPU slice kinds in the trace: %s" % ", ".join(kinds))
for stream, want in sorted(phases.items()):
    for kind, us in want.items():
        got = [v for (s, k), v in gpu.items() if s == stream and k == kind]
        got_us = got[0] if got else 0.0
        ok(got and abs(got_us - us) <= 0.05 * us,
           "stream %d %s: trace %.1f us, app's CUDA events %.1f us (within 5%%)" % (stream, kind, got_us, us))
print("1..%d" % n)
sys.exit(1 if failed else 0)
