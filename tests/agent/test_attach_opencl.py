#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gbpf attach / detach on the opencl backend (PoCL): an OpenCL app in a loop.

argv: GBPF OCL_LOOP OPENCL_PLUGIN THREADHIST_OBJ KERNELRETSNOOP_OBJ

tests/agent/apps/ocl_loop.c builds its kernel before anything is attached
(`gbpf run --idle --backend opencl` prepares the plugin at start, so the
program and the kernel's arguments are recorded) and launches on command.
Checks: attach, the launches made while attached are counted exactly
(threadhist: 1024 work-item exits per launch), detach, re-attach, hot swap
to another object (kernelretsnoop: one record per work-item exit), and the
app's output equal to a run without gbpf.
"""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

GBPF, APP, PLUGIN, THREADHIST, RETSNOOP = sys.argv[1:6]
# A sanitizer build passes the gcc release build's gbpf, app and plugin (scripts/test.sh makes it).
if not all(os.path.exists(p) for p in (GBPF, APP, PLUGIN)):
    print("1..0 # SKIP %s, %s or %s missing: a sanitizer build runs this against the gcc release build "
          "beside it, which scripts/test.sh makes" % (GBPF, APP, PLUGIN))
    sys.exit(0)
ITEMS = 1024
n_test = 0
failed = 0


def ok(cond, name, diag=None):
    global n_test, failed
    n_test += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n_test, name))
    if not cond:
        failed += 1
        for line in str(diag or "").splitlines()[-40:]:
            print("#   " + line)
    sys.stdout.flush()
    return cond


class Proc:
    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.lines = []
        self.err = ""

    def read_line(self, timeout=60):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None
        line = self.p.stdout.readline().rstrip("\n")
        self.lines.append(line)
        return line

    def cmd(self, text, timeout=120):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()
        return self.read_line(timeout)

    def wait_stderr(self, needle, timeout=30):
        end = time.time() + timeout
        while needle not in self.err and time.time() < end:
            r, _, _ = select.select([self.p.stderr], [], [], 0.1)
            if r:
                chunk = os.read(self.p.stderr.fileno(), 65536).decode()
                if not chunk:
                    break
                self.err += chunk
        return needle in self.err

    def finish(self, sig=None, stdin=None, timeout=60):
        if sig:
            self.p.send_signal(sig)
        try:
            out, err = self.p.communicate(input=stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        self.lines += out.splitlines()
        self.err += err
        return self.p.returncode, out


def thread_exits(out):
    """Slot 0 of thread_exits in the generic map printer's JSON (the last print)."""
    val = None
    for line in out.splitlines():
        if '"thread_exits"' not in line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        s = json.dumps(o)
        # {"type":"maps","name":"thread_exits",...,"entries":[{"key":0,"value":N}]} or similar
        for key in ("value", "values"):
            i = s.find('"%s": ' % key)
            if i >= 0:
                num = ""
                for ch in s[i + len(key) + 4:]:
                    if ch.isdigit():
                        num += ch
                    elif num:
                        break
                if num:
                    val = int(num)
                    break
    return val


def main():
    xdg = tempfile.mkdtemp(prefix="gbpf-attach-ocl-")
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = xdg
    env["GBPF_PLUGIN_PATH"] = PLUGIN
    for k in ("GBPF_AGENT_SOCK", "LD_PRELOAD"):
        env.pop(k, None)

    # the reference: the same commands without gbpf
    ref = Proc([APP], env)
    first = ref.read_line()
    if not first or not first.startswith("ready"):
        print("1..0 # SKIP no usable OpenCL device: %s" % ref.finish()[1][:200])
        return 0
    want = [ref.cmd("launch %d" % n) for n in (2, 3, 1, 2, 2)]
    ref.finish(stdin="quit\n")

    app = Proc([GBPF, "run", "--idle", "--backend", "opencl", "--", APP], env)
    first = app.read_line()
    pid = int(first.split()[2]) if first and first.startswith("ready pid") else -1
    ok(pid == app.p.pid, "ocl_loop started idle in gbpf's place", first)
    got = [app.cmd("launch 2")]

    att = Proc([GBPF, "attach", "-j", str(pid), THREADHIST], env)
    ok(att.wait_stderr("attached 1 program(s)", 60), "attach threadhist to the running app", att.err)
    got.append(app.cmd("launch 3"))
    ok(att.wait_stderr("instrumented", 5), "kernel built before the attach is instrumented",
       att.err)
    det = subprocess.run([GBPF, "detach", str(pid)], env=env, capture_output=True, text=True,
                         timeout=60)
    ok(det.returncode == 0, "gbpf detach", det.stderr)
    rc, out = att.finish()
    v = thread_exits(out)
    ok(rc == 0 and v == 3 * ITEMS, "thread_exits == 3 launches x %d work-items (got %s)" % (ITEMS, v),
       out[-2000:] + att.err)
    got.append(app.cmd("launch 1"))
    with open("/proc/%d/maps" % pid) as f:
        ok("memfd:gbpf-maps" not in f.read(), "detached: map region unmapped")

    # re-attach the same object, then hot swap to kernelretsnoop
    att1 = Proc([GBPF, "attach", "-j", str(pid), THREADHIST], env)
    ok(att1.wait_stderr("attached 1 program(s)", 60), "re-attach threadhist", att1.err)
    got.append(app.cmd("launch 2"))
    att2 = Proc([GBPF, "attach", "-j", str(pid), RETSNOOP], env)
    ok(att2.wait_stderr("attached 1 program(s)", 60), "hot swap to kernelretsnoop", att2.err)
    rc1, out1 = att1.finish()
    v = thread_exits(out1)
    ok(rc1 == 0 and v == 2 * ITEMS, "re-attached session counted 2 launches (got %s)" % v,
       out1[-2000:] + att1.err)
    got.append(app.cmd("launch 2"))
    rc2, out2 = att2.finish(sig=signal.SIGINT)
    records = out2.count('"type":"event","map":"events"')
    lost = 0
    for line in out2.splitlines():
        if '"type":"lost_events"' in line:
            lost += json.loads(line).get("count", 0)
    ok(rc2 == 0 and records + lost == 2 * ITEMS,
       "kernelretsnoop: records %d + lost %d == 2 launches x %d" % (records, lost, ITEMS),
       att2.err)
    app.finish(stdin="quit\n")
    ok(app.p.returncode == 0 and got == want, "app output identical to the run without gbpf",
       "%s\n%s\n%s" % (got, want, app.err))
    print("1..%d" % n_test)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
