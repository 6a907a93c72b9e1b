#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Strict checks of a Chrome Trace Event JSON file written by `gbpf run --trace`.

Usage: check_trace.py TRACE.json [EXPECT...]
EXPECT items: streams=N (GPU stream tracks), flows>=N, waits>=N, syncs>=N.
Checks the trace-event schema as ui.perfetto.dev / chrome://tracing read it:
every event has name, ph, ts, pid, tid of the right types; X events have dur >= 0;
M events name processes/threads; each flow id has exactly one 's' and one 'f' of the
same cat/name, with f.ts >= s.ts, both inside a slice of their thread; X slices on
each (pid, tid) nest properly (no partial overlap). Prints TAP.
"""
import json
import sys
from collections import defaultdict

n = 0
failed = 0


def ok(cond, msg):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, msg))
    return cond


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def main():
    path = sys.argv[1]
    expect = dict(a.replace(">=", "=").split("=", 1) for a in sys.argv[2:])
    with open(path) as f:
        doc = json.load(f)
    ok(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list),
       "trace is a JSON object with a traceEvents array")
    evs = doc["traceEvents"]
    bad = [e for e in evs if not (isinstance(e, dict) and isinstance(e.get("name"), str)
                                  and e.get("ph") in ("X", "M", "s", "f")
                                  and num(e.get("ts")) and isinstance(e.get("pid"), int)
                                  and isinstance(e.get("tid"), int))]
    ok(not bad, "every event has name, ph, ts, pid, tid (%d events; first bad: %s)"
       % (len(evs), bad[:1]))
    xs = [e for e in evs if e["ph"] == "X"]
    ok(all(num(e.get("dur")) and e["dur"] >= 0 and e["ts"] >= 0 for e in xs),
       "every X event has ts >= 0 and dur >= 0")
    ms = [e for e in evs if e["ph"] == "M"]
    ok(all(e["name"] in ("process_name", "thread_name") and isinstance(e.get("args", {}).get("name"), str)
           for e in ms), "metadata events name processes and threads")
    named_p = {e["pid"] for e in ms if e["name"] == "process_name"}
    ok(all(e["pid"] in named_p for e in xs), "every process with slices is named")
    # Nesting per thread: sort by (ts, -dur); a slice must end before its parent does.
    # Times are compared in integer nanoseconds (the writer prints 3 decimals of us).
    bythread = defaultdict(list)
    for e in xs:
        b = round(e["ts"] * 1000)
        bythread[(e["pid"], e["tid"])].append((b, b + round(e["dur"] * 1000), e["name"]))
    overlaps = []
    for key, sl in bythread.items():
        sl.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for b, e, name in sl:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and e > stack[-1][1]:
                overlaps.append((key, name, stack[-1][2]))
            stack.append((b, e, name))
    ok(not overlaps, "slices nest properly on each thread (%d threads; %s)"
       % (len(bythread), overlaps[:2]))
    flows = defaultdict(list)
    for e in evs:
        if e["ph"] in ("s", "f"):
            flows[e.get("id")].append(e)
    pairs_ok = all(len(v) == 2 and sorted(x["ph"] for x in v) == ["f", "s"] and
                   v[0]["cat"] == v[1]["cat"] and v[0]["name"] == v[1]["name"]
                   for v in flows.values())
    ok(pairs_ok and None not in flows, "each flow id has exactly one start and one end (%d flows)"
       % len(flows))
    order_ok = True
    inside_ok = True
    for v in flows.values():
        s = next(x for x in v if x["ph"] == "s")
        f = next(x for x in v if x["ph"] == "f")
        if round(f["ts"] * 1000) < round(s["ts"] * 1000):
            order_ok = False
        for x in (s, f):
            t = round(x["ts"] * 1000)
            if not any(b <= t <= e for b, e, _ in bythread[(x["pid"], x["tid"])]):
                inside_ok = False
    ok(order_ok, "every flow ends no earlier than it starts")
    ok(inside_ok, "every flow end lies inside a slice of its thread")
    gpu_tracks = {(e["pid"], e["tid"]) for e in xs if e.get("cat") in ("kernel", "memcpy", "memset")}
    if "streams" in expect:
        ok(len(gpu_tracks) == int(expect["streams"]),
           "%d GPU stream tracks (expected %s)" % (len(gpu_tracks), expect["streams"]))
    launch_flows = sum(1 for v in flows.values() if v[0]["cat"] == "launch")
    wait_flows = sum(1 for v in flows.values() if v[0]["cat"] == "wait")
    if "flows" in expect:
        ok(launch_flows >= int(expect["flows"]),
           "%d flows from API calls to GPU work (expected >= %s)" % (launch_flows, expect["flows"]))
    if "waits" in expect:
        ok(wait_flows >= int(expect["waits"]),
           "%d flows from GPU work to the waits (expected >= %s)" % (wait_flows, expect["waits"]))
    if "syncs" in expect:
        waits = [e for e in xs if e.get("cat") == "wait"]
        ok(len(waits) >= int(expect["syncs"]),
           "%d 'wait for GPU' slices (expected >= %s)" % (len(waits), expect["syncs"]))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
