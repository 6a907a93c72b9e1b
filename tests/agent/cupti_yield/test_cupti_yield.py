#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The agent gives the driver's tool subscription to a CUPTI profiler (#12).

argv: GBPF APP PLUGIN OBJ

APP (cupti_yield_app.c) makes a profiler's first CUPTI calls on a fake
libcupti whose "tool subscription" another tool holds (FAKE_TOOL_HELD=1):
every call answers 39 until the holder releases it. PLUGIN (yield_plugin.c,
backend yieldtest) is that holder; its agent_yield_tool (ABI 1.4) releases
it unless the user chose the sanitizer engine. Checked: the agent asks the
backend before the profiler's first call, once; the calls then succeed; the
controller is told once what was given up; --engine sanitizer keeps it (the
calls fail, the failure is reported with the reason, the backend is asked
again at each call); nothing held: nothing reported, never asked again;
concurrent first calls from 8 threads: one yield, one report, every call
succeeds.
"""
import os
import re
import subprocess
import sys
import tempfile

GBPF, APP, PLUGIN, OBJ = sys.argv[1:5]
n_test = 0
failed = 0


def ok(cond, name, diag=None):
    global n_test, failed
    n_test += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n_test, name))
    if not cond:
        failed += 1
        for line in str(diag or "").splitlines()[-30:]:
            print("#   " + line)
    sys.stdout.flush()
    return cond


def run(env, *extra, app_args=()):
    return subprocess.run([GBPF, "run", "--backend", "yieldtest", *extra, OBJ, "--", APP, *app_args],
                          env=env, capture_output=True, text=True, timeout=60)


def results(out):
    m = re.search(r"^results (-?\d+) (-?\d+) (-?\d+) (-?\d+) (\w+) log: (.*)$", out, re.M)
    return (tuple(int(x) for x in m.groups()[:4]), m.group(5), m.group(6)) if m else (None, None, "")


def main():
    xdg = tempfile.mkdtemp(prefix="gbpf-yield-")
    os.chmod(xdg, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=xdg, GBPF_PLUGIN_PATH=PLUGIN, FAKE_TOOL_HELD="1")
    env.pop("GBPF_CUDA_ENGINE", None)
    diag = lambda r: r.stdout + r.stderr  # noqa: E731

    # Without gbpf: the fake's subscription is held, every call fails (the stand-in works).
    plain = subprocess.run([APP], env=env, capture_output=True, text=True, timeout=30)
    rc, args, log = results(plain.stdout)
    ok(rc == (39, 39, 39, 39), "without gbpf the held subscription makes every CUPTI call fail", diag(plain))

    # Default engine: asked once, before the first call; every call succeeds.
    r = run(env)
    rc, args, log = results(r.stdout)
    ok(r.returncode == 0 and rc == (0, 0, 0, 0) and args == "ok",
       "under gbpf run every CUPTI call succeeds, arguments unchanged", diag(r))
    ok(log == "ask(cuptiSubscribe,0x0) yield(cuptiSubscribe) cuptiSubscribe=0 "
       "cuptiActivityRegisterCallbacks=0 cuptiActivityEnable=0 cuptiActivityEnableContext=0",
       "the backend is asked once, before the profiler's first call, with no engine chosen", log)
    gave = [ln for ln in r.stderr.splitlines() if "gave it the driver's tool subscription first" in ln]
    ok(len(gave) == 1 and "info:" in gave[0] and "called cuptiSubscribe" in gave[0] and
       "yieldtest: fake tool subscription released" in gave[0],
       "the controller is told once what was given up, by which call", r.stderr)
    ok("CUPTI client in this process (e.g. the PyTorch profiler) failed" not in r.stderr,
       "no failure reported", r.stderr)

    # --engine ptx: the flags reach the backend, which yields.
    r = run(env, "--engine", "ptx")
    rc, args, log = results(r.stdout)
    ok(rc == (0, 0, 0, 0) and log.startswith("ask(cuptiSubscribe,0x4) yield(cuptiSubscribe) cuptiSubscribe=0"),
       "--engine ptx: the backend gets the engine flags and yields", diag(r))

    # --engine sanitizer: kept; each call fails and asks again; the failure says why, once per entry point.
    r = run(env, "--engine", "sanitizer")
    rc, args, log = results(r.stdout)
    ok(r.returncode == 0 and rc == (39, 39, 39, 39), "--engine sanitizer: the backend keeps it, CUPTI fails "
       "and the application runs on", diag(r))
    ok(log.count("ask(") == 4 and "yield(" not in log and
       log.startswith("ask(cuptiSubscribe,0x8) cuptiSubscribe=39 ask(cuptiActivityRegisterCallbacks,0x8)"),
       "kept: asked again before each call (the engine may change by the next one), never released", log)
    fails = [ln for ln in r.stderr.splitlines() if "CUPTI client in this process" in ln]
    ok(len(fails) == 4 and "cuptiSubscribe returned 39 (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (fake))"
       in fails[0] and all("gbpf keeps the process's one tool subscription" in f for f in fails)
       and "gave it" not in r.stderr,
       "each entry point's failure reported once, saying gbpf keeps the subscription", r.stderr)
    kept = [ln for ln in r.stderr.splitlines() if "gbpf keeps the driver's tool subscription" in ln]
    ok(len(kept) == 1 and "called cuptiSubscribe" in kept[0] and "yieldtest: kept for the sanitizer engine"
       in kept[0], "why it is kept is told once, in the backend's words", r.stderr)

    # Nobody holds it: nothing to give up, nothing said, never asked again.
    e = dict(env, FAKE_TOOL_HELD="0")
    r = run(e)
    rc, args, log = results(r.stdout)
    ok(rc == (0, 0, 0, 0) and log == "ask(cuptiSubscribe,0x0) cuptiSubscribe=0 cuptiActivityRegisterCallbacks=0 "
       "cuptiActivityEnable=0 cuptiActivityEnableContext=0" and "CUPTI" not in r.stderr,
       "nothing held: asked once, nothing reported", diag(r))

    # Eight threads make their first call at once: one yield, one report, every call succeeds.
    r = run(env, app_args=("8",))
    rc, args, log = results(r.stdout)
    ok("threads 8 failed 0" in r.stdout and rc == (0, 0, 0, 0) and log.count("yield(") == 1 and
       log.index("yield(") < log.index("=0"),
       "8 concurrent first calls: one yield before any call, all succeed", diag(r))
    ok(sum("gave it the driver's tool subscription first" in ln for ln in r.stderr.splitlines()) == 1,
       "and one report", r.stderr)

    print("1..%d" % n_test)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
