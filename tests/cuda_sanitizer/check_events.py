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
  check_events.py mem-ncu OUT NCU_CSV MEMKERN_OUT
      mem_trace (OUT) and memkern.bpf.o's per-kernel counts (MEMKERN_OUT,
      the same engine run again) against Nsight Compute's counts of the
      plain run (ncu --csv with the metrics of ncu-metrics): see mem_ncu().
  check_events.py ncu-metrics
      the --metrics list for ncu.
  check_events.py ncu-sum NCU_CSV
      "METRIC TOTAL" per metric of an ncu --csv file (n/a values left out).
Prints one line per finding; exit status 0 when every check holds.
"""
import csv
import json
import struct
import sys

KIND = {1: "load", 2: "store", 3: "atomic"}
SPACE = {1: "global", 2: "shared", 3: "local"}


def lines(path):
    """gbpf's JSON objects. The application shares gbpf's stdout: a line it had
    begun (Python writes a print's text and its newline separately) can hold
    one of gbpf's objects after its own text, so an object starts at the first
    '{"type":' of a line, not only at the line's start."""
    with open(path, errors="replace") as f:
        for ln in f:
            at = ln.find('{"type":')
            if at < 0:
                continue
            try:
                yield json.loads(ln[at:].strip())
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


# Nsight Compute on the H200 (2025.3, CUDA 13.0) counts memory instructions per
# thread only as one class (all memory instructions); per opcode class it counts
# warp-level instructions. The thread-level per-class names
# (smsp__sass_thread_inst_executed_op_global_ld_pred_on, ...) answer n/a there.
NCU_THREAD = "smsp__sass_thread_inst_executed_op_memory_pred_on.sum"
NCU_WARP = ["global_ld", "global_st", "global_atom", "global_red", "shared_ld", "shared_st", "shared_atom",
            "generic_ld", "generic_st", "generic_atom", "local_ld", "local_st", "ldgsts", "ldsm"]
# Memory instructions the Sanitizer's global and shared access callbacks do not
# report (local memory is not patched; async copies and ldmatrix have patch
# points of their own); generic accesses: which callback reports them is not known.
NCU_UNSEEN = ["local_ld", "local_st", "ldgsts", "ldsm", "generic_ld", "generic_st", "generic_atom"]
# mem_trace's (kind, space) and the warp-level classes that count the same instructions.
NCU_CLASS_OF = {
    ("load", "global"): ["global_ld"], ("store", "global"): ["global_st"],
    ("atomic", "global"): ["global_atom", "global_red"], ("load", "shared"): ["shared_ld"],
    ("store", "shared"): ["shared_st"], ("atomic", "shared"): ["shared_atom"],
}


def ncu_metrics():
    """The metric list device.sh passes to ncu --metrics."""
    return ",".join([NCU_THREAD] + ["smsp__sass_inst_executed_op_%s.sum" % c for c in NCU_WARP])


def fnv(name):
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h


def ncu_csv(path):
    """ncu --csv rows as dicts (the lines before the header are ncu's messages)."""
    try:
        with open(path, errors="replace") as f:
            text = f.read().splitlines()
    except OSError:
        return []
    start = next((i for i, ln in enumerate(text) if ln.startswith('"ID"')), None)
    return [] if start is None else list(csv.DictReader(text[start:]))


def ncu_value(row):
    """A row's value as an int; None for n/a (a metric this ncu does not collect)."""
    try:
        return int(float(row.get("Metric Value", "").replace(",", "")))
    except ValueError:
        return None


def ncu_metric_totals(path):
    """{metric name: sum over every row with a number}."""
    tot = {}
    for row in ncu_csv(path):
        v = ncu_value(row)
        if v is not None:
            tot[row.get("Metric Name", "?")] = tot.get(row.get("Metric Name", "?"), 0) + v
    return tot


def ncu_kernels(path):
    """{kernel name: {"thread": n, class: n}} (classes ncu had no number for are absent) and launches."""
    per, ids = {}, set()
    names = {NCU_THREAD: "thread"}
    names.update({"smsp__sass_inst_executed_op_%s.sum" % c: c for c in NCU_WARP})
    for row in ncu_csv(path):
        cls = names.get(row.get("Metric Name", ""))
        v = ncu_value(row)
        if not cls or v is None:
            continue
        ids.add(row.get("ID"))
        k = per.setdefault(row.get("Kernel Name", "?"), {})
        k[cls] = k.get(cls, 0) + v
    return per, len(ids)


def memkern_counts(path):
    """memkern's counts: {kernel id: {(kind, space): n}}."""
    byk = {}
    for k, v in (keyed(path, "memkern") or {}).items():
        try:
            kid, kind, space = struct.unpack("<QII", k)
        except struct.error:
            continue
        d = byk.setdefault(kid, {})
        key = (KIND.get(kind, str(kind)), SPACE.get(space, str(space)))
        d[key] = d.get(key, 0) + v
    return byk


def mem_ncu(path, ncu_path, memkern, exact=True):
    """mem_trace and memkern (per kernel) against ncu's counts of the plain run.

    With exact (ncu's per-thread count calibrated on the SASS-only vecadd),
    exact where ncu can say it: a kernel whose warp-level counts show none of
    the memory instructions the callbacks do not report must have memkern's
    total == ncu's per-thread count of memory instructions; any other kernel
    at most that. Per class, memkern's per-thread count lies between ncu's
    warp-level count and 32 times it. mem_trace's total equals memkern's."""
    got = mem_classes(path)
    per, launches_profiled = ncu_kernels(ncu_path)
    byk = memkern_counts(memkern) if memkern else {}
    if got is None or not per or not byk:
        print("mem_trace vs ncu: %s, %s, %s" % ("no 'accesses' print" if got is None else "accesses printed",
                                                "no ncu rows with numbers" if not per else "ncu rows",
                                                "no memkern print" if not byk else "memkern printed"))
        return False
    mem_total = sum(v for k, v in got.items() if isinstance(k, tuple))
    mk_total = sum(sum(d.values()) for d in byk.values())
    clean = equal = over = bound_bad = 0
    t_clean = t_all = 0
    notes = []
    for name, n in sorted(per.items()):
        t = n.get("thread")
        m = byk.get(fnv(name), {})
        mt = sum(m.values())
        if t is None:
            notes.append("%s: no per-thread count" % name[:80])
            bound_bad += 1
            continue
        t_all += t
        is_clean = all(n.get(c) == 0 for c in NCU_UNSEEN)
        if is_clean:
            clean += 1
            t_clean += t
            if mt == t:
                equal += 1
            else:
                notes.append("%s: memkern %d, ncu %d (no unseen class)" % (name[:80], mt, t))
        elif mt > t:
            over += 1
            notes.append("%s: memkern %d > ncu %d" % (name[:80], mt, t))
        for key, classes in NCU_CLASS_OF.items():
            w = [n.get(c) for c in classes]
            if any(x is None for x in w):
                continue
            w = sum(w)
            if not w <= m.get(key, 0) <= 32 * w:
                bound_bad += 1
                notes.append("%s: %s %s %d outside warp-level [%d, %d]" % (name[:80], key[0], key[1], m.get(key, 0),
                                                                          w, 32 * w))
    # Without a calibrated per-thread count (the H200's ncu counts more than
    # global and shared accesses in it), the bounds and the totals decide.
    ok = over == 0 and bound_bad == 0 and mem_total == mk_total and mem_total > 0
    if exact:
        ok = ok and clean > 0 and equal == clean
    print("mem_trace vs ncu (%d kernels, %d launches profiled): mem_trace total %d, memkern total %d; kernels "
          "without unseen memory classes %d (%.1f%% of ncu's per-thread memory instructions), memkern == ncu in %d; "
          "others above ncu %d; per-class outside the warp-level bounds %d"
          % (len(per), launches_profiled, mem_total, mk_total, clean, 100.0 * t_clean / t_all if t_all else 0,
             equal, over, bound_bad))
    for line in notes[:8]:
        print("  " + line)
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
        ok = mem_ncu(sys.argv[2], sys.argv[3], sys.argv[4], exact=len(sys.argv) <= 5 or sys.argv[5] != "bounds")
    elif what == "ncu-metrics":
        print(ncu_metrics())
        ok = True
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
