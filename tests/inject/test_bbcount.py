#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpu/block end to end: `gbpf prog inject bbcount.bpf.o --into APP.ptx` for the
PTX of every examples/apps CUDA program. Every kernel is instrumented with one
basic-block site per basic block, counted here independently (a line scan of
the PTX text, not the injector's parser), and the instrumented PTX assembles
with ptxas for sm_75 and sm_90.

Also: the section name and the context size as the loader and verifier see them.

Usage: test_bbcount.py GBPF BBCOUNT.bpf.o OOB.bpf.o PTXAS|- APP.ptx...
"""
import json
import os
import re
import subprocess
import sys
import tempfile

count = 0
failed = False


def ok(cond, name):
    global count, failed
    count += 1
    name = " | ".join(name.splitlines())  # one TAP line: a quoted log may span several
    print(("ok" if cond else "not ok") + f" {count} - {name}", flush=True)
    failed |= not cond
    return cond


def skip(name, why):
    global count
    count += 1
    print(f"ok {count} # SKIP {name}: {why}", flush=True)


LABEL = re.compile(r"^([$%\w.]+):")
OPCODE = re.compile(r"^(?:@!?%\w+\s+)?([a-z][\w.:]*)")


def independent_blocks(text):
    """Basic blocks per .entry: the first instruction, the first one after a
    label some bra / .branchtargets names, and the first one after bra, brx,
    ret or exit (predicated or not)."""
    lines = [ln.split("//")[0].strip() for ln in text.splitlines()]
    result = {}
    i = 0
    while i < len(lines):
        m = re.match(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", lines[i])
        if not m:
            i += 1
            continue
        name = m.group(1)
        while i < len(lines) and lines[i] != "{":
            if lines[i].endswith(";") and "{" not in lines[i]:
                break  # a declaration without a body
            i += 1
        if i >= len(lines) or lines[i] != "{":
            continue
        depth, body = 0, []
        while i < len(lines):
            depth += lines[i].count("{") - lines[i].count("}")
            body.append(lines[i])
            i += 1
            if depth == 0:
                break
        targets = set()
        for ln in body:
            op = OPCODE.match(ln)
            if op and op.group(1).split(".")[0] == "bra":
                targets.add(ln.rstrip(";").split()[-1])
            if ".branchtargets" in ln:
                targets.update(t.strip(" ;") for t in ln.split(".branchtargets")[1].split(","))
        pending, n = True, 0
        for ln in body[1:-1]:
            lab = LABEL.match(ln)
            if lab:
                if lab.group(1) in targets:
                    pending = True
                ln = ln[lab.end():].strip()
            if not ln or ln[0] in ".{}":
                continue
            op = OPCODE.match(ln)
            if not op:
                continue
            if pending:
                n += 1
                pending = False
            if op.group(1).split(".")[0] in ("bra", "brx", "ret", "exit"):
                pending = True
        result[name] = n
    return result


def main():
    if len(sys.argv) < 5:
        print("usage: test_bbcount.py GBPF BBCOUNT.bpf.o OOB.bpf.o PTXAS|- APP.ptx...", file=sys.stderr)
        return 2
    gbpf, obj, oob, ptxas = sys.argv[1:5]
    ptxas = None if ptxas == "-" else ptxas
    apps = sys.argv[5:]
    if not apps:
        skip("bbcount injection", "no nvcc-built PTX (nvcc not found)")
    env = dict(os.environ)
    env.pop("GBPF_BACKEND", None)
    env.pop("GBPF_PTX_NO_INLINE", None)
    p = subprocess.run([gbpf, "-j", "prog", "show", obj], capture_output=True, text=True, env=env)
    progs = json.loads(p.stdout).get("programs", []) if p.returncode == 0 else []
    ok(len(progs) == 1 and progs[0]["attach"] == "gpu_block" and progs[0]["target"] is None
       and progs[0]["device"], f"gpu/block/* is a device program of every kernel: {progs}")
    p = subprocess.run([gbpf, "verify", obj], capture_output=True, text=True, env=env)
    ok(p.returncode == 0 and "accepted" in p.stdout, "bbcount (reads block_index, kernel_id) verifies")
    p = subprocess.run([gbpf, "verify", oob], capture_output=True, text=True, env=env)
    ok(p.returncode != 0 and "outside [0, 40)" in p.stdout + p.stderr,
       f"a read past struct gbpf_gpu_block_ctx is refused: {(p.stdout + p.stderr).strip()[:200]}")
    kernels_seen = 0
    for app in apps:
        base = os.path.basename(app)
        with open(app) as f:
            text = f.read()
        want = independent_blocks(text)
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([gbpf, "-j", "prog", "inject", obj, "--into", app, "-o", tmp],
                               capture_output=True, text=True, env=env, timeout=300)
            try:
                j = json.loads(p.stdout)
            except json.JSONDecodeError:
                j = {}
            ks = j.get("kernels", [])
            if not want:
                ok(p.returncode == 0 and not ks, f"{base}: no kernel, nothing injected")
                continue
            if not ok(p.returncode == 0 and ks and all(k["instrumented"] for k in ks),
                      f"{base}: every kernel instrumented"):
                print(f"# {p.stderr[:500]}")
                continue
            got = {k["name"]: k.get("block_sites") for k in ks}
            ok(got == want, f"{base}: basic-block sites per kernel {got} == independent count {want}")
            ok(all(k["entry_sites"] == 0 and k["exit_sites"] == 0 and k["mem_sites"] == 0 for k in ks),
               f"{base}: only basic-block sites")
            kernels_seen += len(ks)
            mods = j.get("modules", [])
            if not ptxas:
                skip(f"{base}: ptxas", "ptxas not found")
                continue
            sm90 = ".target sm_90" in text
            for arch in ("sm_75", "sm_90"):
                if arch == "sm_75" and sm90:
                    continue
                bad = []
                for mod in mods:
                    q = subprocess.run([ptxas, "-arch=" + arch, mod["path"], "-o",
                                        os.path.join(tmp, "x.cubin")], capture_output=True, text=True)
                    if q.returncode:
                        bad.append(q.stderr[:300])
                ok(mods and not bad, f"{base}: instrumented PTX assembles for {arch} {bad}")
    # Known small kernels, counted by hand from their PTX.
    known = {"_Z7vec_addPKfS0_Pfi": 3}
    for app in apps:
        if os.path.basename(app).startswith("vecadd."):
            with open(app) as f:
                blocks = independent_blocks(f.read())
            for k, n in known.items():
                ok(blocks.get(k) == n, f"{os.path.basename(app)}: {k} has {n} basic blocks "
                   "(bounds check: entry, body, exit)")
    if apps:
        ok(kernels_seen > 0, f"{kernels_seen} kernels checked")
    print(f"1..{count}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
