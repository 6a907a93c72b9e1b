#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Registers of instrumented kernels, offline: `gbpf prog inject PROBE --into
vecadd_bench.ptx` (the benchmarks' vector add, bench/cuda/apps), then
`ptxas -v` for sm_90. ptxas allocates a kernel's registers for its whole call
graph, and the values a caller keeps live across a call add to the callee's,
so a slow path (a map insert after a miss) that is never taken in a steady
state can still decide how many blocks fit an SM. A kernel of 256-thread
blocks fits 8 per SM (every warp slot) at 32 registers or fewer, 6 at 40.
These limits are what the H200 rows of docs/BENCHMARKS.md were measured with
(mem_count: 40 registers and 2.1x before the insert called the update without
LRU eviction and the lookup's long run stayed inline). The injection is the
agent's: context fields no probe reads are not stored (the verifier's
context reads reach the plugin as they reach the agent), and the probe's
stack is written only on the way to a helper that reads it.

Usage: test_registers.py GBPF PTXAS|- VECADD.ptx|- NAME=PROBE.bpf.o:LIMIT[:CHECKS]...
CHECKS (comma separated): ctx (no context store the probe does not need), stack
(no stack store before its map lookup), frame (no stack store at all), inlined
(vec_add calls no probe function), nocall (vec_add calls no function at all), summed (a counter: each memory site adds to
a register, the map is touched only in the flush before the kernel returns, and
GBPF_PTX_NO_COUNTER_SUM turns that off), unsummed (not a counter: no sums).
"""
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
    print(("ok" if cond else "not ok") + f" {count} - {name}", flush=True)
    failed |= not cond
    return cond


def skip(name, why):
    global count
    count += 1
    print(f"ok {count} # SKIP {name}: {why}", flush=True)


def kernel_registers(ptxas, path):
    """{kernel: registers} from ptxas -v for sm_90, or None with ptxas' output."""
    p = subprocess.run([ptxas, "-arch=sm_90", "-v", path, "-o", os.devnull],
                       capture_output=True, text=True, timeout=300)
    if p.returncode:
        return None, p.stderr[-800:]
    regs, kernel = {}, None
    for line in p.stderr.splitlines():
        m = re.search(r"Compiling entry function '([\w$]+)'", line)
        if m:
            kernel = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and kernel:
            regs[kernel] = int(m.group(1))
            kernel = None
    return regs, ""


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    gbpf, ptxas, app = sys.argv[1:4]
    probes = sys.argv[4:]
    if ptxas == "-" or app == "-":
        for spec in probes:
            skip(f"{spec.split('=')[0]}: registers of vec_add",
                 "no ptxas" if ptxas == "-" else "no nvcc-built PTX")
        print(f"1..{count}")
        return 0
    env = dict(os.environ)
    for var in ("GBPF_BACKEND", "GBPF_PTX_NO_INLINE", "GBPF_PTX_INLINE_BUDGET", "GBPF_PTX_NO_COUNTER_SUM"):
        env.pop(var, None)
    for spec in probes:
        name, rest = spec.split("=", 1)
        obj, limit, checks = (rest.split(":") + [""])[:3]
        limit = int(limit)
        checks = set(checks.split(",")) - {""}
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([gbpf, "prog", "inject", obj, "--into", app, "-o", tmp],
                               capture_output=True, text=True, env=env, timeout=300)
            if not ok(p.returncode == 0 and os.path.exists(os.path.join(tmp, "module0.ptx")),
                      f"{name}: injected into the benchmarks' vector add"):
                print("# " + p.stderr.strip().replace("\n", "\n# "))
                continue
            regs, log = kernel_registers(ptxas, os.path.join(tmp, "module0.ptx"))
            if not ok(regs is not None, f"{name}: ptxas -arch=sm_90 accepts the instrumented module"):
                print("# " + log.replace("\n", "\n# "))
                continue
            vec = [k for k in regs if "vec_add" in k]
            if not ok(len(vec) == 1, f"{name}: one vec_add kernel in the module"):
                continue
            ok(regs[vec[0]] <= limit,
               f"{name}: vec_add uses {regs[vec[0]]} registers, at most {limit}")
            with open(os.path.join(tmp, "module0.ptx")) as f:
                text = f.read()
            # ctx: the probe reads no context field the sites would store (kernel id,
            # parameters, launch id, device): offline as in the agent, none is stored.
            if "ctx" in checks:
                stores = [ln.strip() for ln in text.splitlines()
                          if re.search(r"st\.local\S*\s+\[__gbpf_ctx\+", ln)]
                ok(not stores, f"{name}: no context field stored that the probe does not read "
                               f"({len(stores)} stores{': ' + stores[0] if stores else ''})")
            # stack: the map lookup's hit reads nothing of the probe's stack: the key and the
            # helper outputs it was built from are stored only on the way to the insert (sink.c),
            # at exit sites as at memory sites (they were stored at every exit before).
            if "stack" in checks:
                body = text[text.find(".entry " + vec[0]):]
                lookup = body.find("ld.v2.u64")
                early = [ln.strip() for ln in body[:lookup].splitlines()
                         if "st.local" in ln and "[__gbpf_stack" in ln]
                ok(lookup > 0 and not early, f"{name}: no stack store before the map lookup "
                                             f"({len(early)}{': ' + early[0] if early else ''})")
            # frame: the probe's stack is never stored to (a ring record passed by value to the
            # ring write, ptx_helpers.c: kernelretsnoop stored 12 words of it at every exit before).
            if "frame" in checks:
                body = text[text.find(".entry " + vec[0]):]
                body = body[:body.find("\n}")]
                stores = [ln.strip() for ln in body.splitlines() if "st.local" in ln and "[__gbpf_stack" in ln]
                ok(not stores, f"{name}: no store to the probe's stack in vec_add "
                               f"({len(stores)}{': ' + stores[0] if stores else ''})")
            # tlsregs: the thread-local values (GPU_THREAD_LOCAL) are the kernel's registers at
            # every site: each access a move (sites.c, tx_tls_reg_stmt), none left in memory, no
            # spill around a site
            if "tlsregs" in checks or "tlsregs_entry_exit" in checks:
                body = text[text.find(".entry " + vec[0]):]
                body = body[:body.find("\n}")]
                moves = [ln for ln in body.splitlines() if re.search(r"mov\.b64\s+\S+,\s+%__gbpf_tl0;", ln)]
                left = [ln.strip() for ln in body.splitlines() if "[%rtls+" in ln or "[__gbpf_ctx+64]" in ln]
                want = 3 if "tlsregs" in checks else 2  # mem: its 3 sites; entry and exit: one read each
                ok(".reg .b64 %__gbpf_tl<" in body and len(moves) == want and not left,
                   f"{name}: the thread-local value a register of vec_add, read {want} times, never in memory "
                   f"({len(moves)} reads, {len(left)} memory accesses{': ' + left[0] if left else ''})")
            if "summed" in checks:
                check_summed(name, gbpf, ptxas, app, obj, text, env, limit)
            if "unsummed" in checks:
                ok("%__gbpf_sum" not in text, f"{name}: not a counter: no site sums in registers")
            # inlined: the probe's body is in the kernel (the injector keeps the call when it
            # cannot take the probe's text, e.g. a frame it does not know)
            if "inlined" in checks:
                calls = kernel_calls(text, vec[0], r"call.*__gbpf_(probe|spec)_")
                ok(not calls, f"{name}: the probe is inlined into vec_add "
                              f"({len(calls)} calls{': ' + calls[0] if calls else ''})")
            # nocall: vec_add calls nothing at all (a ring output written into the probe,
            # ptx_ring_emit_output_inline: the called helpers' registers counted for the kernel)
            if "nocall" in checks:
                calls = kernel_calls(text, vec[0], r"^\s*(@\S+\s+)?call\b")
                ok(not calls, f"{name}: vec_add calls no function "
                              f"({len(calls)} calls{': ' + calls[0] if calls else ''})")
    print(f"1..{count}")
    return 1 if failed else 0


def kernel_calls(text, kernel, pattern):
    """The lines of @kernel's body in the module @text that match @pattern."""
    body = text[text.find(".entry " + kernel):]
    body = body[:body.find("\n}")]
    return [ln.strip() for ln in body.splitlines() if re.search(pattern, ln)]


def vec_add_body(text):
    body = text[text.find(".entry "):]
    body = body[body.find("vec_add"):]
    return body[:body.find("\n}")]


def check_summed(name, gbpf, ptxas, app, obj, text, env, limit):
    """The counter's three sites of vec_add (two loads, a store) add to two registers (one
    per key: loads, stores); the bucket loads of its lookup come after the flush label only;
    every ret branches to the flush first. Without the sums (GBPF_PTX_NO_COUNTER_SUM) each
    site looks the key up again, within the same register limit."""
    body = vec_add_body(text)
    adds = re.findall(r"(?m)^\s*add\.u32\s+%__gbpf_sum(\d+)", body)
    ok(len(adds) == 3 and len(set(adds)) == 2,
       f"{name}: vec_add's 3 memory sites add to 2 registers ({len(adds)} adds, {sorted(set(adds))})")
    flush = body.find("__gbpf_sum_exit:")
    lookup = body.find("ld.v2.u64")
    ok(flush > 0 and lookup > flush,
       f"{name}: the map's bucket is loaded only in the flush (flush at {flush}, first load at {lookup})")
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    at = lines.index("__gbpf_sum_exit:") if "__gbpf_sum_exit:" in lines else len(lines)
    rets = [i for i, ln in enumerate(lines) if re.match(r"(@\S+\s+)?ret\b", ln)]
    # in the flush block only predicated rets (lanes that leave the flush to another) and its last
    ok([i for i in rets if i > at and not lines[i].startswith("@")] == [rets[-1]] if rets else False,
       f"{name}: the flush block ends in the kernel's one ret after it")
    # each ret of the kernel itself: the same predicate's branch to the flush just before it
    unguarded = [lines[i] for i in rets if i < at and
                 not re.fullmatch(re.escape(lines[i].split("ret")[0]) + r"bra\s+__gbpf_sum_exit;", lines[i - 1])]
    ok(rets and rets[0] < at and not unguarded,
       f"{name}: every ret of the kernel branches to the flush first ({len(unguarded)} not)")
    off = dict(env, GBPF_PTX_NO_COUNTER_SUM="1")
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([gbpf, "prog", "inject", obj, "--into", app, "-o", tmp],
                           capture_output=True, text=True, env=off, timeout=300)
        path = os.path.join(tmp, "module0.ptx")
        if not ok(p.returncode == 0 and os.path.exists(path), f"{name}: injected with GBPF_PTX_NO_COUNTER_SUM"):
            return
        with open(path) as f:
            plain = vec_add_body(f.read())
        regs, _ = kernel_registers(ptxas, path)
        vec = [k for k in (regs or {}) if "vec_add" in k]
        ok("%__gbpf_sum" not in plain and plain.count("ld.v2.u64") >= 3 and vec and regs[vec[0]] <= limit,
           f"{name}: GBPF_PTX_NO_COUNTER_SUM: every site looks its key up, no sums, "
           f"{regs[vec[0]] if vec else '?'} registers")


if __name__ == "__main__":
    sys.exit(main())
