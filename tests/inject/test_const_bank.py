#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The constant-bank map table against an application whose own __constant__
data fills the 64 KB bank (examples/apps/bigconst.cu): `gbpf prog inject`
shows the agent's first form, with the table, which ptxas refuses for too
much constant data (the agent then injects again, docs/PROCESS_MODEL.md),
and under GBPF_CUDA_NO_CONST_MAPS=1 its second form, which assembles. A
probe of the same object injected into an application with room (vecadd)
assembles with the table.

Usage: test_const_bank.py GBPF PROBE.bpf.o PTXAS|- BIGCONST.ptx VECADD.ptx
"""
import os
import subprocess
import sys
import tempfile

count = 0
failed = False


def ok(cond, name):
    global count, failed
    count += 1
    print(("ok" if cond else "not ok") + f" {count} - " + " | ".join(name.splitlines()), flush=True)
    failed |= not cond
    return cond


def inject(gbpf, obj, ptx, out, no_const):
    env = dict(os.environ)
    env.pop("GBPF_CUDA_NO_CONST_MAPS", None)
    if no_const:
        env["GBPF_CUDA_NO_CONST_MAPS"] = "1"
    r = subprocess.run([gbpf, "prog", "inject", obj, "--into", ptx, "-o", out], env=env,
                       capture_output=True, text=True, timeout=120)
    path = os.path.join(out, "module0.ptx")
    text = open(path).read() if r.returncode == 0 and os.path.exists(path) else ""
    return r, path, text


def ptxas(tool, path):
    r = subprocess.run([tool, "-arch=sm_90", path, "-o", os.devnull], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


def main():
    if len(sys.argv) != 6:
        print("1..0 # SKIP usage: test_const_bank.py GBPF PROBE.bpf.o PTXAS|- BIGCONST.ptx VECADD.ptx")
        return 0
    gbpf, obj, tool, big, small = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        r, path, text = inject(gbpf, obj, big, os.path.join(tmp, "a"), False)
        ok(r.returncode == 0 and "__gbpf_maps_const" in text and "ld.const.u64" in text,
           f"bigconst: the first form reads the map table from the constant bank ({r.stderr.strip()[-200:]})")
        if tool == "-":
            print(f"ok {count + 1} # SKIP ptxas not found")
            print(f"ok {count + 2} # SKIP ptxas not found")
            print(f"ok {count + 3} # SKIP ptxas not found")
            print(f"1..{count + 3}")
            return 0
        rc, log = ptxas(tool, path)
        ok(rc != 0 and "constant" in log,
           f"bigconst: ptxas refuses the first form for its constant data (rc {rc}: {log[-200:]})")
        r, path, text = inject(gbpf, obj, big, os.path.join(tmp, "b"), True)
        rc, log = ptxas(tool, path) if r.returncode == 0 else (-1, r.stderr)
        ok(r.returncode == 0 and "__gbpf_maps_const" not in text and "ld.global.u64" in text and rc == 0,
           f"bigconst: the second form (GBPF_CUDA_NO_CONST_MAPS=1) has the global table only and assembles "
           f"(rc {rc}: {log[-200:]})")
        r, path, text = inject(gbpf, obj, small, os.path.join(tmp, "c"), False)
        rc, log = ptxas(tool, path) if r.returncode == 0 else (-1, r.stderr)
        ok(r.returncode == 0 and "__gbpf_maps_const" in text and rc == 0,
           f"vecadd: the first form assembles (rc {rc}: {log[-200:]})")
    print(f"1..{count}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
