#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact checks of one example tool's `gbpf -j run` output on one app.

Usage: check_tools.py TOOL PLAIN STDOUT [STDERR]
TOOL: threadhist, kernelretsnoop, launchlate, cuda_counter, mem_trace,
mem_count, bbcount, or vec_add (directly_run_on_gpu: PLAIN is unused, STDOUT is
`gbpf -j prog run --threads 64` output). PLAIN is the app's own output
alone: its "grid=GxGxG block=BxBxB launches=L [ptx=no] [mem=K.S.B:N,...]"
lines are the independent source of every expected number (threads,
blocks and launches of each configuration; "mem=" the accesses ONE launch
makes, KIND.SPACE.BYTES:COUNT, "+" after COUNT = at least). Lines naming a
graph ("captured", "node") are graph launches: no host launch call runs
them. STDOUT holds gbpf's JSON lines (the app's own lines are skipped).

Prints one line, "ok - TOOL: WHAT" or "not ok - TOOL: WHAT (got .., want ..)",
and exits 0 or 1. The expected values:
  threadhist      per-GPU-thread slots: non-zero slots == the largest launch's
                  threads; slot s == sum of launches of configurations with
                  more than s threads (the first 64 slots printed)
  kernelretsnoop  events + lost == threads launched; with nothing lost the
                  events grouped by (kernel, launch id) have the sizes of the
                  launches (one id per launch, graph launches included) and
                  each (block, thread) once per group
  launchlate      histogram total == launches made by a host launch call
  cuda_counter    sum of calls == launches, sum of blocks == blocks launched,
                  every kernel's block time > 0
  mem_trace       accesses per (kind, space, size) == the apps' mem= counts x
                  launches; no other key; the stride histogram's total == the
                  apps' strides= where they print it (manysites)
  mem_count       mem_trace's accesses check alone (the benchmarks' counter
                  probe, whose sites the injector sums in registers)
  bbcount         sum of entry-block counts (block index 0 of every kernel
                  slot) == threads launched in kernels with PTX (the Compute
                  Sanitizer engine, which patches the others, has no block sites)
  vec_add         map c: c[i] == a[i] + b[i] == 1001 (i + 1), 64 elements
  blockdev        (tests/cuda_agent/progs/blockdev.bpf.c) the GPU's ctx->device
                  counts every thread under the device the host/launch probe
                  saw for the launches (one device: the app runs on one GPU)
  devctx_exit     (tests/cuda_agent/progs/devctx_exit.bpf.c) the same with a
                  gpu/exit probe (gbpf_gpu_ctx.device, padding 0): every
                  thread's exit under the host/launch probe's device
"""
import json
import re
import sys

LINE = re.compile(r"grid=(\d+)x(\d+)x(\d+) block=(\d+)x(\d+)x(\d+) launches=(\d+)")
KINDS = {"ld": 1, "st": 2, "atom": 3}
SPACES = {"generic": 0, "global": 1, "shared": 2, "local": 3}


def configs(path):
    """The launch configurations an app printed."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            g = [int(x) for x in m.groups()[:3]]
            b = [int(x) for x in m.groups()[3:6]]
            c = {"blocks": g[0] * g[1] * g[2], "threads": g[0] * g[1] * g[2] * b[0] * b[1] * b[2],
                 "launches": int(m.group(7)), "graph": bool(re.search(r"\b(captured|node)\b", line)),
                 "ptx": "ptx=no" not in line, "mem": {}}
            mm = re.search(r"mem=([a-z]+\.[a-z]+\.\d+:\d+\+?(?:,[a-z]+\.[a-z]+\.\d+:\d+\+?)*)", line)
            if mm:
                for item in mm.group(1).split(","):
                    key, _, n = item.partition(":")
                    kind, space, size = key.split(".")
                    at_least = n.endswith("+")
                    c["mem"][(KINDS[kind], SPACES[space], int(size))] = (int(n.rstrip("+")), at_least)
            ms = re.search(r"\bstrides=(\d+)", line)
            if ms:
                c["strides"] = int(ms.group(1))
            out.append(c)
    return out


def json_lines(path):
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                try:
                    yield json.loads(line)
                except ValueError:
                    pass


def last_maps(path):
    """name -> the last print of that map: ("entries", list of {key, slot?, value}, count) from
    the generic printer, ("keyed", {key text: n}) from a table, ("hist", [counts])."""
    maps = {}
    for obj in json_lines(path):
        t = obj.get("type")
        if isinstance(obj.get("maps"), list):  # `gbpf run` prints, and `prog run`'s result
            for m in obj.get("maps", []):
                maps[m["name"]] = ("entries", m.get("data", []), m.get("entries", 0))
        elif t in ("map", "hist") and isinstance(obj.get("data"), dict):
            for name, v in obj["data"].items():
                if t == "hist":
                    maps[name] = ("hist", [s.get("count", 0) for s in v])
                else:
                    maps[name] = ("keyed", v)
    return maps


def total_count(m):
    """Sum of every value of a u64 map, whatever printer showed it."""
    if m[0] == "hist":
        return sum(m[1])
    if m[0] == "keyed":
        return sum(m[1].values())
    return sum(e["value"] for e in m[1] if isinstance(e.get("value"), int))


def u64s(value):
    b = bytes(value)
    return [int.from_bytes(b[i:i + 8], "little") for i in range(0, len(b) - 7, 8)]


def check_threadhist(cfgs, out):
    m = last_maps(out).get("thread_exits")
    if not m or m[0] != "entries":
        return False, "no thread_exits map printed"
    want_entries = max(c["threads"] for c in cfgs)
    if m[2] != want_entries:
        return False, f"{m[2]} threads counted, want {want_entries} (largest launch)"
    for e in m[1]:
        s = e.get("slot", 0)
        want = sum(c["launches"] for c in cfgs if c["threads"] > s)
        if e.get("key") != 0 or e.get("value") != want:
            return False, f"slot {s} = {e.get('value')}, want {want}"
    return True, f"{m[2]} thread slots, first {len(m[1])} exact"


def check_kernelretsnoop(cfgs, out):
    groups, events, lost = {}, 0, 0
    for obj in json_lines(out):
        if obj.get("type") == "lost_events":
            lost += obj.get("count", 0)
        elif obj.get("type") == "event" and obj.get("map") == "events":
            events += 1
            d = bytes.fromhex(obj.get("data", ""))
            if len(d) < 48:
                return False, f"event of {len(d)} bytes, want 48"
            kid, lid = int.from_bytes(d[0:8], "little"), int.from_bytes(d[8:16], "little")
            coords = tuple(int.from_bytes(d[24 + 4 * i:28 + 4 * i], "little") for i in range(6))
            groups.setdefault((kid, lid), set()).add(coords)
    want = sum(c["threads"] * c["launches"] for c in cfgs)
    if events + lost != want:
        return False, f"events {events} + lost {lost} != {want} threads"
    if lost:
        return True, f"events {events} + lost {lost} == {want} threads (launch groups not checked)"
    got_sizes = sorted(len(s) for s in groups.values())
    want_sizes = sorted(c["threads"] for c in cfgs for _ in range(c["launches"]))
    if got_sizes != want_sizes:
        return False, (f"{events} events == threads, but {len(groups)} (kernel, launch id) groups of "
                       f"sizes {got_sizes[:8]}..., want {len(want_sizes)} of {want_sizes[:8]}...")
    return True, f"{events} events == threads, {len(groups)} launches each with its own id"


def check_launchlate(cfgs, out):
    m = last_maps(out).get("usecs")
    got = total_count(m) if m else 0
    want = sum(c["launches"] for c in cfgs if not c["graph"])
    return got == want, f"histogram total {got}, want {want} host launches"


def check_cuda_counter(cfgs, out):
    m = last_maps(out).get("stats")
    if not m or m[0] != "entries":
        return False, "no stats map printed"
    calls = blocks = 0
    for e in m[1]:
        v = u64s(e["value"])
        calls += v[0]
        blocks += v[1]
        if v[2] == 0:
            return False, f"kernel {e['key']}: block time 0"
    want_calls = sum(c["launches"] for c in cfgs)
    want_blocks = sum(c["blocks"] * c["launches"] for c in cfgs)
    ok = calls == want_calls and blocks == want_blocks
    return ok, f"{len(m[1])} kernels, calls {calls} (want {want_calls}), blocks {blocks} (want {want_blocks})"


def mem_key(text_or_bytes):
    b = bytes.fromhex(text_or_bytes) if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
    return tuple(int.from_bytes(b[i:i + 4], "little") for i in (0, 4, 8))


def check_mem_count(cfgs, out):
    """mem_trace's counter half alone (bench/cuda/probes/mem_count.bpf.c): its sites summed
    per thread in registers and flushed at each thread's exit (plugins/cuda/ptx/counter.c)."""
    return check_mem_trace(cfgs, out, strides=False)


def check_mem_trace(cfgs, out, strides=True):
    m = last_maps(out).get("accesses")
    if not m:
        return False, "no accesses map printed"
    got = {}
    if m[0] == "keyed":
        for k, v in m[1].items():
            got[mem_key(k)] = v
    else:
        for e in m[1]:
            got[mem_key(e["key"])] = e["value"]
    want, at_least = {}, set()
    for c in cfgs:
        for k, (n, least) in c["mem"].items():
            want[k] = want.get(k, 0) + n * c["launches"]
            if least:
                at_least.add(k)
    if not want:
        return False, "the app printed no mem= counts"
    names = {v: k for k, v in KINDS.items()}, {v: k for k, v in SPACES.items()}
    fmt = lambda k: f"{names[0].get(k[0], k[0])}.{names[1].get(k[1], k[1])}.{k[2]}"  # noqa: E731
    for k in sorted(set(got) | set(want)):
        g, w = got.get(k, 0), want.get(k, 0)
        if (k in at_least and g < w) or (k not in at_least and g != w):
            return False, f"{fmt(k)}: {g}, want {'>= ' if k in at_least else ''}{w}"
    summary = ", ".join(f"{fmt(k)} {got.get(k, 0)}" for k in sorted(want))
    # The stride histogram's total, where the app says what it must be (each thread's
    # per-GPU-thread slot read and written at every access: a slot shared or lost shows).
    if strides and any("strides" in c for c in cfgs):
        want_strides = sum(c.get("strides", 0) for c in cfgs)
        s = last_maps(out).get("stride")
        got_strides = total_count(s) if s else 0
        if got_strides != want_strides:
            return False, f"stride histogram total {got_strides}, want {want_strides}"
        summary += f", stride total {got_strides}"
    return True, summary


def check_bbcount(cfgs, out):
    m = last_maps(out).get("bb_counts")
    if not m:
        return False, "no bb_counts map printed"
    if m[0] == "keyed":
        entries = [(int(k), v) for k, v in m[1].items()]
    else:
        entries = [(e["key"], e["value"]) for e in m[1]]
    got = sum(v for k, v in entries if k % 1024 == 0)
    # The Compute Sanitizer engine (kernels without PTX) has no basic-block sites.
    want = sum(c["threads"] * c["launches"] for c in cfgs if c["ptx"])
    return got == want, f"entry blocks {got}, want {want} threads ({len(entries)} blocks counted)"


def check_vec_add(_cfgs, out):
    for obj in json_lines(out):
        if "backend" in obj and obj["backend"] != "cuda":
            return False, f"ran on backend {obj['backend']}, not cuda"
    m = last_maps(out).get("c")
    if not m or m[0] != "entries":
        return False, "no map c printed"
    vals = {e["key"]: e["value"] for e in m[1]}
    bad = [i for i in range(64) if i in vals and vals[i] != 1001 * (i + 1)]
    # The generic printer shows the first 64 entries: all of them here.
    if bad or len(vals) != 64 or m[2] != 64:
        return False, f"{m[2]} elements, wrong at {bad[:4]}"
    return True, "64 elements, c[i] == 1001 (i + 1)"


def check_blockdev(cfgs, out, gpu_map="gpu_device_threads"):
    maps = last_maps(out)
    g, h = maps.get(gpu_map), maps.get("host_device_launches")
    if not g or not h or g[0] != "entries" or h[0] != "entries":
        return False, f"{gpu_map} or host_device_launches not printed"
    gpu = {e["key"]: e["value"] for e in g[1]}
    host = {e["key"]: e["value"] for e in h[1]}
    threads = sum(c["threads"] * c["launches"] for c in cfgs)
    launches = sum(c["launches"] for c in cfgs if not c["graph"])
    if len(host) != 1 or list(host.values())[0] != launches:
        return False, f"host/launch devices {host}, want one device with {launches} launches"
    dev = list(host)[0]
    return gpu == {dev: threads}, f"GPU ctx->device counts {gpu}, want {{{dev}: {threads}}} (host saw device {dev})"


def check_devctx_exit(cfgs, out):
    return check_blockdev(cfgs, out, "gpu_device_exits")


def main():
    if len(sys.argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tool, plain, out = sys.argv[1:4]
    cfgs = configs(plain) if tool != "vec_add" else []
    if tool != "vec_add" and not cfgs:
        print(f"not ok - {tool}: the app printed no grid=.. block=.. launches=.. line")
        return 1
    fn = globals().get("check_" + tool)
    if not fn:
        print(f"not ok - {tool}: unknown tool")
        return 2
    try:
        ok, what = fn(cfgs, out)
    except (KeyError, ValueError, TypeError, IndexError) as e:
        ok, what = False, f"unreadable output: {e!r}"
    print(f"{'ok' if ok else 'not ok'} - {tool}: {what}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
