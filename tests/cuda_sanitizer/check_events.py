#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks of tests/cuda_sanitizer/device.sh on `gbpf -j run` output.

  check_events.py krs OUT THREADS BLOCK_DIM GRID_DIM
      kernelretsnoop (examples/kernelretsnoop): events + lost == THREADS; every
      event decodes (kernel_id, launch_id, time, block[3], thread[3]); one
      kernel id; launch ids non-zero; (block, thread) pairs distinct and in
      range (1-D launch GRID_DIM x BLOCK_DIM).
  check_events.py mem OUT LOADS STORES
      mem_trace: the last print of map 'accesses' holds LOADS global 4-byte
      loads and STORES global 4-byte stores and nothing else.
Prints one line per finding; exit status 0 when every check holds.
"""
import json
import struct
import sys


def lines(path):
    with open(path, errors="replace") as f:
        for ln in f:
            ln = ln.strip()
            if ln.startswith("{"):
                try:
                    yield json.loads(ln)
                except ValueError:
                    continue


def krs(path, threads, bdim, gdim):
    ev, lost, bad, pairs, kids, zero_launch = 0, 0, 0, set(), set(), 0
    for o in lines(path):
        if o.get("type") == "lost_events":
            lost += int(o.get("count", 0))
        if o.get("type") != "event":
            continue
        ev += 1
        data = bytes.fromhex(o.get("data", ""))
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


def mem(path, loads, stores):
    last = None
    for o in lines(path):
        d = o.get("data")
        if isinstance(d, dict) and isinstance(d.get("accesses"), dict):
            last = d["accesses"]
    if last is None:
        print("mem_trace: no print of map 'accesses'")
        return False
    got = {}
    for k, v in last.items():
        try:
            # Key {kind, space, size, pad}: kind 1 load, 2 store (GBPF_MEM_*), space 1 global.
            kind, space, size, _pad = struct.unpack("<4I", bytes.fromhex(k.replace("0x", "")))
            got[(kind, space, size)] = int(v)
        except (ValueError, struct.error):
            got[k] = int(v)
    print("mem_trace: accesses " + ", ".join("%s=%d" % (k, v) for k, v in sorted(got.items(), key=str)))
    return got == {(1, 1, 4): loads, (2, 1, 4): stores}


def main():
    what = sys.argv[1]
    if what == "krs":
        ok = krs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif what == "mem":
        ok = mem(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        print("unknown check " + what)
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
