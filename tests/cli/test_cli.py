#!/usr/bin/env python3
"""End-to-end checks of the gbpf command line (TAP).

Usage: test_cli.py GBPF EXAMPLES_BUILD_DIR SOURCE_ROOT [PTXAS]
Runs the real binary with the real plugins of the build tree and checks
what a user sees: outputs, JSON, exit codes and error messages.
"""
import json
import os
import subprocess
import sys
import tempfile

gbpf, examples, root = sys.argv[1], sys.argv[2], sys.argv[3]
ptxas = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
conformance = os.path.join(root, "..", "shared", "conformance", "bpf_conformance")
count = 0
failed = 0


def ok(cond, name):
    global count, failed
    count += 1
    if not cond:
        failed += 1
    print(f"{'' if cond else 'not '}ok {count} - {name}", flush=True)
    return cond


def skip(name, why):
    global count
    count += 1
    print(f"ok {count} # SKIP {name}: {why}", flush=True)


def run(*args, env=None, check_json=False):
    e = dict(os.environ)
    e.pop("GBPF_BACKEND", None)
    if env:
        e.update(env)
    p = subprocess.run([gbpf, *args], capture_output=True, text=True, env=e, timeout=600)
    if check_json:
        try:
            return p, json.loads(p.stdout)
        except json.JSONDecodeError as err:
            print(f"# not JSON ({err}): {p.stdout[:500]!r}")
            return p, None
    return p


def example(name):
    return os.path.join(examples, name)


# Version and help
p = run("-V")
ok(p.returncode == 0 and p.stdout.startswith("gbpf "), "gbpf -V prints the version")
p, j = run("-j", "version", check_json=True)
ok(j is not None and j.get("plugin_abi_major") == 1, "version -j is JSON with the plugin ABI")

# Backends
p, j = run("-j", "backends", check_json=True)
names = [b["name"] for b in (j or {}).get("backends", [])]
ok(j is not None and "cpu" in names, f"backends lists the cpu plugin ({names})")
cpu = next((b for b in (j or {}).get("backends", []) if b["name"] == "cpu"), {})
ok(cpu.get("usable") and cpu.get("devices"), "cpu backend reports a usable device")
for b in (j or {}).get("backends", []):
    ok(b.get("usable") or b.get("unusable_reason") or b.get("error"),
       f"backend {b['name']} is usable or says why not")
p = run("backends")
ok("selected:" in p.stdout, "backends (text) names the selected backend")

# Unknown commands and bad input: clear errors, exit status 1
p = run("frobnicate")
ok(p.returncode == 1 and "unknown command 'frobnicate'" in p.stderr, "unknown command is an error")
p = run("pr", "sh")  # prefix matching, bpftool style, then a usage error
ok(p.returncode == 1 and "usage: prog show" in p.stderr, "prefix matching reaches prog show")
p = run("prog", "show", "/nonexistent/x.o")
ok(p.returncode == 1 and "/nonexistent/x.o" in p.stderr and "No such file" in p.stderr,
   "missing file: error names the file")
p, j = run("-j", "prog", "show", "/nonexistent/x.o", check_json=True)
ok(p.returncode == 1 and j is not None and "error" in j, "JSON mode reports errors as JSON")
with tempfile.TemporaryDirectory() as tmp:
    bad = os.path.join(tmp, "truncated.o")
    with open(example("vec_add.bpf.o"), "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data[: len(data) // 3])
    p = run("prog", "show", bad)
    ok(p.returncode == 1 and "truncated.o" in p.stderr, "truncated object: error names the file")

# prog show on an example object
p, j = run("-j", "prog", "show", example("launchlate.bpf.o"), check_json=True)
progs = {x["name"]: x for x in (j or {}).get("programs", [])}
ok(progs.get("on_launch", {}).get("attach") == "host_launch"
   and progs.get("on_start", {}).get("attach") == "gpu_entry"
   and progs.get("on_start", {}).get("device") is True,
   "prog show decodes host and GPU attach points")
maps = {m["name"]: m for m in (j or {}).get("maps", [])}
ok(maps.get("launch_time", {}).get("type") == "hash" and maps["launch_time"]["key_size"] == 8
   and maps.get("usecs", {}).get("max_entries") == 32, "prog show lists maps with sizes")
ok(j is not None and j.get("license") == "Dual MIT/GPL", "prog show gives the license")

# prog run on the cpu backend: the accelerator example
# gbpf run / attach options that reach the agent (#5, #9, #11)
p = run("run", "--help")
ok(p.returncode == 0 and "--allow-app-writes" in p.stderr and "--engine E" in p.stderr,
   "run --help lists --allow-app-writes and --engine")
ok(p.returncode == 0 and "--per-process" in p.stderr and
   "run --idle [--backend B] [--allow-app-writes] [--engine E]" in p.stderr,
   "run --help lists --per-process and the options --idle takes")
p = run("attach", "--help")
ok(p.returncode == 0 and "--allow-app-writes" in p.stderr and "--engine E" in p.stderr,
   "attach --help lists --allow-app-writes and --engine")
p = run("run", "--per-process", "--prom", "9999", example("vec_add.bpf.o"), "--", "true")
ok(p.returncode != 0 and "--per-process cannot be combined with --prom" in p.stderr,
   "run --per-process --prom is refused before anything runs")
p = run("run", "--engine", "cubin", example("vec_add.bpf.o"), "--", "true")
ok(p.returncode != 0 and "--engine cubin: not an engine (ptx, sanitizer or auto)" in p.stderr,
   "run --engine with an unknown engine is refused")
p = run("attach", "--engine", "nvbit", "1", example("vec_add.bpf.o"))
ok(p.returncode != 0 and "--engine nvbit: not an engine" in p.stderr,
   "attach --engine with an unknown engine is refused before connecting")

p, j = run("-j", "prog", "run", "--threads", "64", example("vec_add.bpf.o"), check_json=True)
r0 = (j or {}).get("r0_per_thread", [])
ok(r0 == [1001 * (i + 1) for i in range(64)], "vec_add: r0 of thread i is a[i] + b[i]")
c = next((m for m in (j or {}).get("maps", []) if m["name"] == "c"), {})
ok([d["value"] for d in c.get("data", [])] == [1001 * (i + 1) for i in range(64)],
   "vec_add: map c holds every sum")
p, j = run("-j", "prog", "run", "--threads", "1000", example("threadhist.bpf.o"), check_json=True)
th = next((m for m in (j or {}).get("maps", []) if m["name"] == "thread_exits"), {})
ok(th.get("entries") == 1000, "threadhist: a per-thread slot for each of 1000 threads")
# a thread-local map: each of 300 instances starts at zero (returns 0 + 1 + 2), the host sees none of it
tl = os.path.join(os.path.dirname(examples), "tests", "cli", "thread_local.bpf.o")
p, j = run("-j", "prog", "run", "--backend", "cpu", "--threads", "300", tl, check_json=True)
names = [m["name"] for m in (j or {}).get("maps", [])]
rn = next((m for m in (j or {}).get("maps", []) if m["name"] == "runs"), {})
ok((j or {}).get("r0") == 3 and (j or {}).get("threads_with_other_r0") == 0 and "mine" not in names
   and [d["value"] for d in rn.get("data", [])] == [300],
   "thread-local map: every instance starts at zero, 300 runs, no values for the host (%s)" % p.stderr.strip()[:200])
# without a choice of backend: the best one runs it (every backend but hip keeps thread-local values);
# one that refused it would hand it to the interpreter and say why
p, j = run("-j", "prog", "run", "--threads", "8", tl, check_json=True)
ok(p.returncode == 0 and (j or {}).get("r0") == 3 and (j or {}).get("threads_with_other_r0") == 0 and
   ("cannot run" not in p.stderr or "running it on 'cpu'" in p.stderr),
   "thread-local map, backend picked for the user (%s): every instance starts at zero %s"
   % ((j or {}).get("backend"), p.stderr.strip()[:160]))
p = run("prog", "run", "--threads", "0", example("vec_add.bpf.o"))
ok(p.returncode == 1 and "--threads" in p.stderr, "--threads 0 is refused")
p = run("prog", "run", "--backend", "nosuch", example("vec_add.bpf.o"))
ok(p.returncode == 1 and "'nosuch' not found" in p.stderr and "cpu" in p.stderr,
   "unknown backend: error lists the backends found")
p = run("prog", "run", example("vec_add.bpf.o"), env={"GBPF_BACKEND": "nosuch"})
ok(p.returncode == 1 and "'nosuch' not found" in p.stderr, "GBPF_BACKEND selects the backend")

# Assembler, disassembler, verifier
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "loop.s")
    with open(src, "w") as f:
        f.write("mov %r0, 0\nmov %r1, 10\nloop:\nadd %r0, %r1\nsub %r1, 1\njne %r1, 0, loop\nexit\n")
    binf = os.path.join(tmp, "loop.bin")
    p = run("asm", src, "-o", binf)
    ok(p.returncode == 0 and os.path.getsize(binf) == 6 * 8, "asm writes 6 instruction slots")
    p = run("disasm", binf)
    ok("add %r0, %r1" in p.stdout and "jne %r1, 0, -3" in p.stdout, "disasm shows the loop")
    p = run("prog", "run", binf)
    ok(p.returncode == 0 and "r0 = 55" in p.stdout, "prog run of a raw program: sum 10..1 = 55")
    p = run("verify", binf)
    ok(p.returncode == 0 and "accepted" in p.stdout, "verifier accepts the bounded loop")
    bad = os.path.join(tmp, "uninit.s")
    with open(bad, "w") as f:
        f.write("mov %r0, %r5\nexit\n")
    p = run("verify", bad)
    ok(p.returncode == 1 and "instruction 0" in p.stdout, "verifier rejection names the instruction")
    p = run("prog", "run", "--backend", "cpu", bad)
    ok(p.returncode == 1 and "verifier" in p.stderr, "prog run refuses an unverified program")
    p = run("prog", "run", "--unverified", bad)
    ok(p.returncode == 0, "--unverified runs it on the sandboxed cpu backend")
    oob = os.path.join(tmp, "oob.s")
    with open(oob, "w") as f:
        f.write("ldxdw %r0, [%r10+8]\nexit\n")
    p = run("prog", "run", "--unverified", oob)
    ok(p.returncode == 1 and "instruction 0" in p.stderr,
       "an out-of-bounds access faults cleanly, naming the instruction")
    p = run("asm", os.path.join(tmp, "nosuch.s"))
    ok(p.returncode == 1 and "nosuch.s" in p.stderr, "asm of a missing file is an error")
    garbage = os.path.join(tmp, "garbage.s")
    with open(garbage, "w") as f:
        f.write("mov %r0, 1\nfrob %r1\nexit\n")
    p = run("asm", garbage)
    ok(p.returncode == 1 and "2" in p.stderr, "assembler error names the line")

# Conformance through the CLI: the acceptance check
if os.path.isdir(conformance):
    p = run("conformance", os.path.join(conformance, "tests"))
    ok(p.stdout.strip().endswith("313 passed, 0 failed"), "conformance on cpu: 313/313")
    p = run("conformance", "--threads", "128", os.path.join(conformance, "tests"))
    ok(p.stdout.strip().endswith("313 passed, 0 failed"), "conformance on cpu, 128 threads: 313/313")
    p = run("conformance", os.path.join(conformance, "negative"))
    ok(p.stdout.strip().endswith("60 passed, 0 failed"), "every negative case is rejected")
    p, j = run("-j", "conformance", os.path.join(conformance, "tests", "add.data"), check_json=True)
    ok(j is not None and j.get("passed") == 1, "conformance -j")
    p = run("prog", "run", os.path.join(conformance, "tests", "ldxb.data"))
    ok(p.returncode == 0 and "r0 = 17 " in p.stdout, "prog run of a .data file uses its memory")
else:
    skip("conformance", f"{conformance} not found")

# Code generation for every example probe, checked by ptxas
p = run("-j", "backends", check_json=True)[0]
for name in ["vec_add", "threadhist", "kernelretsnoop", "launchlate", "cuda_counter", "mem_trace"]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, name + ".ptx")
        p = run("prog", "codegen", "--target", "ptx", "--arch", "sm_90", example(name + ".bpf.o"),
                "-o", out)
        if p.returncode != 0 or not os.path.exists(out):
            ok(False, f"codegen ptx of {name}: {p.stderr.strip()[:300]}")
            continue
        text = open(out).read()
        ok(".func" in text or ".entry" in text, f"codegen ptx of {name} emits PTX")
        if name == "threadhist":
            # Its map is known when the PTX is generated: the lookup is inline address arithmetic.
            ok("__gbpf_h_map_lookup, (" not in text and "[%r1+28]" in text,
               "threadhist: per-thread array lookup inlined, no generic map call")
        if ptxas:
            # The probe fragment is header-less: add one to assemble it alone.
            full = os.path.join(tmp, "full.ptx")
            with open(full, "w") as f:
                if ".version" not in text:
                    f.write(".version 7.8\n.target sm_90\n.address_size 64\n")
                f.write(text)
            q = subprocess.run([ptxas, "-arch=sm_90", full, "-o", os.path.join(tmp, "x.cubin")],
                               capture_output=True, text=True)
            ok(q.returncode == 0, f"ptxas -arch=sm_90 accepts {name}: {q.stderr.strip()[:300]}")
        else:
            skip(f"ptxas {name}", "ptxas not found")

# Offline injection of every example probe into nvcc-built apps (tests/inject builds them)
apps = os.path.join(os.path.dirname(examples), "tests", "inject")
app_files = sorted(f for f in os.listdir(apps) if f.endswith(".default")) if os.path.isdir(apps) else []
if not app_files:
    skip("prog inject", "no nvcc-built apps in " + apps)
for app in app_files:
    for name in ["threadhist", "kernelretsnoop", "launchlate", "cuda_counter", "mem_trace"]:
        with tempfile.TemporaryDirectory() as tmp:
            p, j = run("-j", "prog", "inject", example(name + ".bpf.o"), "--into",
                       os.path.join(apps, app), "-o", tmp, check_json=True)
            kernels = (j or {}).get("kernels", [])
            mods = (j or {}).get("modules", [])
            if not ok(p.returncode == 0 and kernels and all(k["instrumented"] for k in kernels)
                      and mods, f"inject {name} into {app}: every kernel instrumented"):
                print(f"# {p.stdout[:400]} {p.stderr[:400]}")
                continue
            if ptxas:
                bad = [m["path"] for m in mods
                       if subprocess.run([ptxas, "-arch=sm_90", m["path"], "-o", os.path.join(tmp, "x.cubin")],
                                         capture_output=True).returncode != 0]
                ok(not bad, f"ptxas accepts {name} injected into {app} ({len(mods)} modules)")
noptx = os.path.join(apps, "vecadd.noptx")
if os.path.exists(noptx):
    p, j = run("-j", "prog", "inject", example("threadhist.bpf.o"), "--into", noptx, check_json=True)
    ks = (j or {}).get("kernels", [])
    ok(p.returncode == 0 and ks and not ks[0]["instrumented"] and "no PTX" in ks[0].get("reason", ""),
       "a SASS-only fatbin is reported as not instrumentable, with the reason")

print(f"1..{count}")
sys.exit(1 if failed else 0)
