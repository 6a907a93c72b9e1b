#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks of tests/cuda_sanitizer/device.sh on `gbpf -j run` output.

  check_events.py krs OUT THREADS BLOCK_DIM GRID_DIM
      kernelretsnoop on a 1-D launch: events + lost == THREADS; every event
      decodes (kernel_id, launch_id, time, block[3], thread[3]); one kernel
      id; launch ids non-zero; (block, thread) pairs distinct and in range.
  check_events.py krs-launches OUT
      kernelretsnoop run beside sanlaunch.bpf.o (the host's record of every
      launch): events + lost == the threads the host launched; each event's
      launch id is a launch the host saw, its kernel id that launch's, its
      block and thread inside that launch's grid and block; each (launch,
      block, thread) at most once.
  check_events.py threadhist OUT [SLOTS]
      threadhist beside sanlaunch.bpf.o: thread_exits slot t holds the
      number of launches with more than t threads (every thread of every
      launch exits once into its own slot); the non-zero slots are
      min(largest launch, SLOTS) (default 2^20, gbpf run's --thread-slots).
      The print shows the first 64 slots: each is compared.
  check_events.py mem OUT LOADS STORES
      mem_trace: the last print of map 'accesses' holds LOADS global 4-byte
      loads and STORES global 4-byte stores and nothing else.
  check_events.py mem-ncu OUT NCU_CSV [MEMKERN_OUT|-] [MAP]
      mem_trace against Nsight Compute's per-thread SASS instruction counts
      of the plain run (ncu --csv, one row per kernel and metric): loads,
      stores and atomics per space. With MEMKERN_OUT (memkern.bpf.o's
      per-kernel counts), the kernels that differ are listed. MAP: lines
      "CLASS METRIC" (device.sh's calibration) replacing the metric names.
  check_events.py ncu-sum NCU_CSV
      "METRIC TOTAL" per metric of an ncu --csv file.
Prints one line per finding; exit status 0 when every check holds.
"""
import csv
import json
import struct
import sys

KIND = {1: "load", 2: "store", 3: "atomic"}
SPACE = {1: "global", 2: "shared", 3: "local"}


def lines(path):
    with open(path, errors="replace") as f:
        for ln in f:
            ln = ln.strip()
            if ln.startswith("{"):
                try:
                    yield json.loads(ln)
                except ValueError:
                    continue


def events(path, name):
    """Records of ring buffer @name, and its lost count."""
    recs, lost = [], 0
    for o in lines(path):
        if o.get("map", name) != name:
            continue
        if o.get("type") == "lost_events":
            lost += int(o.get("count", 0))
        elif o.get("type") == "event":
            recs.append(bytes.fromhex(o.get("data", "")))
    return recs, lost


def launches(path):
    """{launch_id: (kernel_id, grid, block)} from sanlaunch's records."""
    out, bad = {}, 0
    recs, lost = events(path, "san_launches")
    for d in recs:
        if len(d) < 40:
            bad += 1
            continue
        lid, kid, g0, g1, g2, b0, b1, b2 = struct.unpack_from("<QQ6I", d)
        if lid in out:
            bad += 1
        out[lid] = (kid, (g0, g1, g2), (b0, b1, b2))
    return out, lost, bad


def nthreads(launch):
    _, g, b = launch
    return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]


def krs(path, threads, bdim, gdim):
    ev, bad, pairs, kids, zero_launch = 0, 0, set(), set(), 0
    recs, lost = events(path, "events")
    for data in recs:
        ev += 1
        if len(data) < 48:
            bad += 1
            continue
        kid, lid, _t, bx, by, bz, tx, ty, tz = struct.unpack_from("<QQQ6I", data)
        kids.add(kid)
        zero_launch += lid == 0
        if bx >= gdim or by or bz or tx >= bdim or ty or tz:
            bad += 1
        pairs.add((bx, tx))
    ok = ev + lost == threads and bad == 0 and len(kids) <= 1 and zero_launch == 0 and len(pairs) == ev
    print("kernelretsnoop: events %d + lost %d (want %d), distinct threads %d, bad %d, kernel ids %s, "
          "launch id 0 in %d events" % (ev, lost, threads, len(pairs), bad,
                                        ",".join("%x" % k for k in sorted(kids)) or "-", zero_launch))
    return ok


def krs_launches(path):
    ls, llost, lbad = launches(path)
    recs, lost = events(path, "events")
    want = sum(nthreads(v) for v in ls.values())
    seen, unknown, wrong_kernel, out_of_range, dup = set(), 0, 0, 0, 0
    per_launch = {}
    for data in recs:
        if len(data) < 48:
            out_of_range += 1
            continue
        kid, lid, _t, bx, by, bz, tx, ty, tz = struct.unpack_from("<QQQ6I", data)
        l = ls.get(lid)
        if l is None:
            unknown += 1
            continue
        wrong_kernel += kid != l[0]
        g, b = l[1], l[2]
        if bx >= g[0] or by >= g[1] or bz >= g[2] or tx >= b[0] or ty >= b[1] or tz >= b[2]:
            out_of_range += 1
        key = (lid, bx, by, bz, tx, ty, tz)
        if key in seen:
            dup += 1
        seen.add(key)
        per_launch[lid] = per_launch.get(lid, 0) + 1
    over = sum(1 for lid, n in per_launch.items() if n > nthreads(ls[lid]))
    ev = len(recs)
    ok = (ls and llost == 0 and lbad == 0 and ev + lost == want and unknown == 0 and wrong_kernel == 0 and
          out_of_range == 0 and dup == 0 and over == 0)
    print("kernelretsnoop: %d launches (%d threads; launch records lost %d, bad %d); events %d + lost %d = %d "
          "(want %d); launches with events %d; unknown launch %d, wrong kernel id %d, out of range %d, "
          "duplicate (launch, block, thread) %d, launches with more events than threads %d"
          % (len(ls), want, llost, lbad, ev, lost, ev + lost, want, len(per_launch), unknown, wrong_kernel,
             out_of_range, dup, over))
    return bool(ok)


def last_maps(path, name):
    """The last generic print of map @name: (entries, [(key, slot, value)])."""
    found = None
    for o in lines(path):
        if o.get("type") != "maps":
            continue
        for m in o.get("maps", []):
            if m.get("name") == name:
                found = (int(m.get("entries", 0)),
                         [(e.get("key"), e.get("slot", 0), e.get("value")) for e in m.get("data", [])])
    return found


def threadhist(path, slots):
    ls, llost, lbad = launches(path)
    th = last_maps(path, "thread_exits")
    if not ls or th is None:
        print("threadhist: %d launch records, thread_exits %s" % (len(ls), "printed" if th else "not printed"))
        return False
    sizes = sorted(nthreads(v) for v in ls.values())
    entries, shown = th
    want_entries = min(sizes[-1], slots)
    bad = []
    for key, slot, value in shown:
        want = sum(1 for n in sizes if n > slot)
        if key != 0 or value != want:
            bad.append("slot %s: %s (want %d)" % (slot, value, want))
    slots_shown = sorted(s for _, s, _ in shown)
    contiguous = slots_shown == list(range(len(shown)))
    ok = llost == 0 and lbad == 0 and entries == want_entries and not bad and contiguous and shown
    print("threadhist: %d launches (%d threads, largest %d, smallest %d); non-zero slots %d (want %d); "
          "slots 0..%d shown: %s%s" % (len(ls), sum(sizes), sizes[-1], sizes[0], entries, want_entries,
                                        len(shown) - 1, "all as launched" if not bad else "; ".join(bad[:4]),
                                        "" if contiguous else " (not contiguous)"))
    return bool(ok)


def keyed(path, name):
    """The last print of hash map @name as {key bytes: count}."""
    last = None
    for o in lines(path):
        d = o.get("data")
        if o.get("type") == "map" and isinstance(d, dict) and isinstance(d.get(name), dict):
            last = d[name]
    if last is None:
        return None
    out = {}
    for k, v in last.items():
        try:
            out[bytes.fromhex(k.replace("0x", "").replace(" ", ""))] = int(v)
        except ValueError:
            out[k.encode()] = int(v)
    return out


def mem_classes(path):
    """mem_trace's accesses as {(kind, space, size): n}."""
    acc = keyed(path, "accesses")
    if acc is None:
        return None
    got = {}
    for k, v in acc.items():
        try:
            kind, space, size, _pad = struct.unpack("<4I", k)
            got[(kind, space, size)] = got.get((kind, space, size), 0) + v
        except struct.error:
            got[k] = v
    return got


def mem(path, loads, stores):
    got = mem_classes(path)
    if got is None:
        print("mem_trace: no print of map 'accesses'")
        return False
    print("mem_trace: accesses " + ", ".join("%s=%d" % (k, v) for k, v in sorted(got.items(), key=str)))
    return got == {(1, 1, 4): loads, (2, 1, 4): stores}


NCU = {
    "global_ld": "smsp__sass_thread_inst_executed_op_global_ld_pred_on.sum",
    "global_st": "smsp__sass_thread_inst_executed_op_global_st_pred_on.sum",
    "global_atom": "smsp__sass_thread_inst_executed_op_global_atom_pred_on.sum",
    "global_red": "smsp__sass_thread_inst_executed_op_global_red_pred_on.sum",
    "generic_ld": "smsp__sass_thread_inst_executed_op_generic_ld_pred_on.sum",
    "generic_st": "smsp__sass_thread_inst_executed_op_generic_st_pred_on.sum",
    "generic_atom": "smsp__sass_thread_inst_executed_op_generic_atom_pred_on.sum",
    "shared_ld": "smsp__sass_thread_inst_executed_op_shared_ld_pred_on.sum",
    "shared_st": "smsp__sass_thread_inst_executed_op_shared_st_pred_on.sum",
    "shared_atom": "smsp__sass_thread_inst_executed_op_shared_atom_pred_on.sum",
    "ldgsts": "smsp__sass_thread_inst_executed_op_ldgsts_pred_on.sum",
    "local_ld": "smsp__sass_thread_inst_executed_op_local_ld_pred_on.sum",
    "local_st": "smsp__sass_thread_inst_executed_op_local_st_pred_on.sum",
}


def fnv(name):
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h


def ncu_metric_totals(path):
    """{metric name: sum over every row} of an ncu --csv file."""
    with open(path, errors="replace") as f:
        text = f.read().splitlines()
    start = next((i for i, ln in enumerate(text) if ln.startswith('"ID"')), None)
    tot = {}
    if start is None:
        return tot
    for row in csv.DictReader(text[start:]):
        try:
            v = int(float(row.get("Metric Value", "").replace(",", "")))
        except ValueError:
            continue
        tot[row.get("Metric Name", "?")] = tot.get(row.get("Metric Name", "?"), 0) + v
    return tot


def load_map(path):
    """Calibrated class -> metric lines ("global_ld NAME") replacing the defaults of NCU."""
    if not path:
        return
    with open(path) as f:
        for ln in f:
            parts = ln.split()
            if len(parts) == 2:
                NCU[parts[0]] = parts[1]


def ncu_rows(path):
    """{kernel name: {class: n}} and the number of kernel launches profiled."""
    with open(path, errors="replace") as f:
        text = f.read().splitlines()
    start = next((i for i, ln in enumerate(text) if ln.startswith('"ID"')), None)
    per, ids = {}, set()
    if start is None:
        return per, 0
    rev = {v: k for k, v in NCU.items()}
    for row in csv.DictReader(text[start:]):
        cls = rev.get(row.get("Metric Name", ""))
        if not cls:
            continue
        try:
            v = int(float(row.get("Metric Value", "0").replace(",", "")))
        except ValueError:
            continue
        ids.add(row.get("ID"))
        k = per.setdefault(row.get("Kernel Name", "?"), {})
        k[cls] = k.get(cls, 0) + v
    return per, len(ids)


def expected(n):
    """mem_trace's (kind, space) counts from ncu's classes."""
    return {
        ("load", "global"): n.get("global_ld", 0),
        ("store", "global"): n.get("global_st", 0),
        ("atomic", "global"): n.get("global_atom", 0) + n.get("global_red", 0),
        ("load", "shared"): n.get("shared_ld", 0),
        ("store", "shared"): n.get("shared_st", 0),
        ("atomic", "shared"): n.get("shared_atom", 0),
    }


def mem_ncu(path, ncu_path, memkern=None):
    got = mem_classes(path)
    per, launches_profiled = ncu_rows(ncu_path)
    if got is None or not per:
        print("mem_trace vs ncu: %s, %s" % ("no 'accesses' print" if got is None else "accesses printed",
                                            "no ncu rows" if not per else "ncu rows"))
        return False
    tot = {}
    for k in per.values():
        for c, v in k.items():
            tot[c] = tot.get(c, 0) + v
    have = {}
    for k, v in got.items():
        if isinstance(k, tuple):
            key = (KIND.get(k[0], str(k[0])), SPACE.get(k[1], str(k[1])))
            have[key] = have.get(key, 0) + v
    want = expected(tot)
    generic = tot.get("generic_ld", 0) + tot.get("generic_st", 0) + tot.get("generic_atom", 0)
    rows = []
    ok = True
    for key in sorted(set(want) | set(have)):
        w, h = want.get(key, 0), have.get(key, 0)
        ok &= w == h
        rows.append("%s %s %d/%d%s" % (key[0], key[1], h, w, "" if w == h else " DIFF"))
    # Generic accesses: ncu cannot say which space they reached; compare per kind over both spaces.
    if generic:
        ok_kind = True
        for kind, extra in (("load", "generic_ld"), ("store", "generic_st"), ("atomic", "generic_atom")):
            w = want.get((kind, "global"), 0) + want.get((kind, "shared"), 0) + tot.get(extra, 0)
            h = have.get((kind, "global"), 0) + have.get((kind, "shared"), 0)
            ok_kind &= w == h
        ok = ok_kind
    print("mem_trace vs ncu (%d kernels, %d launches profiled; mem_trace/ncu): %s; ncu generic %d, ldgsts %d, "
          "local %d" % (len(per), launches_profiled, ", ".join(rows), generic, tot.get("ldgsts", 0),
                        tot.get("local_ld", 0) + tot.get("local_st", 0)))
    if memkern:
        mk = keyed(memkern, "memkern") or {}
        byk = {}
        for k, v in mk.items():
            try:
                kid, kind, space = struct.unpack("<QII", k)
            except struct.error:
                continue
            d = byk.setdefault(kid, {})
            d[(KIND.get(kind, str(kind)), SPACE.get(space, str(space)))] = v
        diffs = 0
        for name, n in sorted(per.items()):
            w = expected(n)
            h = byk.get(fnv(name), {})
            bad = [(key, h.get(key, 0), w.get(key, 0)) for key in sorted(set(w) | set(h)) if h.get(key, 0) != w.get(key, 0)]
            if bad:
                diffs += 1
                if diffs <= 8:
                    print("  kernel %s: %s; ncu %s" % (name[:90], ", ".join("%s %s %d/%d" % (k[0], k[1], a, b)
                                                                           for k, a, b in bad),
                                                     " ".join("%s=%d" % kv for kv in sorted(n.items()) if kv[1])))
        print("  per kernel (memkern): %d of %d kernels differ; memkern kernels %d" % (diffs, len(per), len(byk)))
    return ok


def main():
    what = sys.argv[1]
    if what == "krs":
        ok = krs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif what == "krs-launches":
        ok = krs_launches(sys.argv[2])
    elif what == "threadhist":
        ok = threadhist(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20)
    elif what == "mem":
        ok = mem(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif what == "mem-ncu":
        load_map(sys.argv[5] if len(sys.argv) > 5 else None)
        ok = mem_ncu(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None)
    elif what == "ncu-sum":
        for k, v in sorted(ncu_metric_totals(sys.argv[2]).items()):
            print("%s %d" % (k, v))
        ok = True
    else:
        print("unknown check " + what)
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
