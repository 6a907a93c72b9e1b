#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GPU -> user printk latency from a `gbpf -j run printk_lat.bpf.o -- printk N` output.

Each print carries the GPU globaltimer at the print ("gt=..."); gbpf -j adds the
controller's receipt time (ts_ns). The app's ping-pong through mapped memory
aligns the clocks ("printk_clock offset_ns=.. rtt_ns=..", +- rtt/2).
Prints one line: median p90 p99 max (us), lines, clock uncertainty (us);
"n/a n/a n/a n/a 0 n/a" when the output holds no clock line or no print.
Used by bench/cuda/run.sh and bench/agent/device.sh.
"""
import json
import re
import sys

off = rtt = None
lat = []
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"printk_clock offset_ns=(-?\d+) rtt_ns=(\d+)", line)
    if m:
        off, rtt = int(m.group(1)), int(m.group(2))
        continue
    if line.startswith("{") and '"printf"' in line:
        j = json.loads(line)
        g = re.match(r"gt=(\d+)", j.get("msg", ""))
        if g and "ts_ns" in j:
            lat.append((j["ts_ns"], int(g.group(1))))
if off is None or not lat:
    print("n/a n/a n/a n/a 0 n/a")
else:
    v = sorted(ts - (gt - off) for ts, gt in lat)
    print("%.1f %.1f %.1f %.1f %d %.1f" % (v[len(v) // 2] / 1e3, v[len(v) * 9 // 10] / 1e3,
                                          v[len(v) * 99 // 100] / 1e3, v[-1] / 1e3, len(v), rtt / 2e3))
