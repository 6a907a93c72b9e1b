#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gbpf attach / detach end to end on the test backend (no GPU).

argv: GBPF LOOP_APP PLUGIN COUNT_OBJ TOTAL_OBJ BAD_FRAMES_APP [MEMWRITE_OBJ LAUNCH_APP CUPTI_APP
      [PUTS_OBJ]]

An idle application (`gbpf run --idle`, tests/agent/apps/loop_app.c)
launches on command, so every check knows exactly how many launches
happened while probes were attached: attach, detach, re-attach, hot swap,
Ctrl-C and SIGKILL of the controller, two processes and a child in one
job (aggregate and --per-process), the socket's owner checks, and
malformed frames on the controller's socket (#11). With MEMWRITE_OBJ and
LAUNCH_APP also: a replacement the agent refuses leaves the attached
programs counting, the options of `gbpf run --idle` (--engine,
--allow-app-writes) applied to attaches, and `gbpf run --per-process`. With
CUPTI_APP: a CUPTI client's failure reported by the agent, its calls forwarded
unchanged. With PUTS_OBJ: device print lines of two attach sessions in a
row, each through its own print ring (core/agent/print_ring.h).
"""
import json
import os
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time

GBPF, APP, PLUGIN, COUNT, TOTAL, BAD_FRAMES = sys.argv[1:7]
MEMWRITE = sys.argv[7] if len(sys.argv) > 7 else None
LAUNCH_APP = sys.argv[8] if len(sys.argv) > 8 else None
CUPTI_APP = sys.argv[9] if len(sys.argv) > 9 else None
PUTS = sys.argv[10] if len(sys.argv) > 10 else None
# GBPF_AGENT_F_* (include/gbpf/plugin.h), as the test backend reports them
F_ALLOW_APP_WRITES, F_ENGINE_PTX, F_ENGINE_SANITIZER = 1, 4, 8
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


def expected_sum(n):
    """What loop_app prints for `launch n` (the test runtime's return values)."""
    return sum((1 << (i % 8)) * 128 + 6 for i in range(n))


class App:
    """loop_app started idle; commands on stdin, one answer line each."""

    def __init__(self, env, extra_env=None, opts=()):
        e = dict(env)
        e.update(extra_env or {})
        self.p = subprocess.Popen([GBPF, "run", "--idle", "--backend", "hosttest"] + list(opts) +
                                  ["--", APP],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=e, text=True, bufsize=1)
        self.lines = []
        first = self.read_line(10)
        self.pid = int(first.split()[2]) if first and first.startswith("ready pid") else -1

    def read_line(self, timeout=10):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None
        line = self.p.stdout.readline().rstrip("\n")
        self.lines.append(line)
        return line

    def cmd(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()
        return self.read_line(20)

    def launch(self, n):
        return self.cmd("launch %d" % n)

    def quit(self):
        try:
            out, err = self.p.communicate(input="quit\n", timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        self.lines += out.splitlines()
        return self.p.returncode, err


class Controller:
    """A `gbpf attach` (or any gbpf command) running in the background."""

    def __init__(self, args, env):
        self.p = subprocess.Popen([GBPF] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, text=True)
        self.err = ""
        self.out = ""

    def wait_stderr(self, needle, timeout=10):
        end = time.time() + timeout
        while needle not in self.err and time.time() < end:
            r, _, _ = select.select([self.p.stderr], [], [], 0.1)
            if r:
                chunk = os.read(self.p.stderr.fileno(), 65536).decode()
                if not chunk:
                    break
                self.err += chunk
        return needle in self.err

    def finish(self, sig=None, timeout=20):
        if sig:
            self.p.send_signal(sig)
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        self.out += out
        self.err += err
        return self.p.returncode


def json_lines(text):
    res = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                res.append(json.loads(line))
            except ValueError:
                pass
    return res


def map_data(objs, name):
    """The last printed contents of map `name` (JSON lines of gbpf -j)."""
    found = None
    for o in objs:
        if o.get("type") == "map" and name in o.get("data", {}):
            found = o["data"][name]
        if o.get("type") == "maps" and o.get("name") == name:
            found = o
        if o.get("type") == "hist" and name in o.get("data", {}):
            found = o["data"][name]
    return found


def total_value(text):
    """Value of element 0 of the `total` array in the generic map printer's JSON."""
    for o in reversed(json_lines(text)):
        s = json.dumps(o)
        if '"total"' in s:
            for e in o.get("entries", o.get("data", [])) if isinstance(o, dict) else []:
                if isinstance(e, dict) and "value" in e:
                    return e["value"]
            return s
    return None


def threads(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def maps_of(pid):
    with open("/proc/%d/maps" % pid) as f:
        return f.read()


def print_ring_sessions(env):
    """Each attach session maps a print ring of its own; its lines reach that session's gbpf."""
    app = App(env)
    for session in (1, 2):
        att = Controller(["attach", "-j", str(app.pid), PUTS], env)
        ok(att.wait_stderr("attached 1 program(s)"), "session %d: puts probe attached" % session, att.err)
        ok("memfd:gbpf-print" in maps_of(app.pid), "session %d: the print ring is mapped" % session)
        app.launch(6)
        det = subprocess.run([GBPF, "detach", str(app.pid)], env=env, capture_output=True, text=True,
                             timeout=30)
        att.finish(timeout=20)
        lines = [o for o in json_lines(att.out)
                 if o.get("type") == "printf" and o.get("msg") == "hello from kern_a"]
        ok(det.returncode == 0 and len(lines) == 3,
           "session %d: kern_a's 3 launches, 3 lines through the ring (%d)" % (session, len(lines)),
           att.out + att.err)
        ok("memfd:gbpf-print" not in maps_of(app.pid), "session %d: detached, the ring unmapped" % session)
    rc, err = app.quit()
    ok(rc == 0, "the app ran on after both sessions", err)


def main():
    xdg = tempfile.mkdtemp(prefix="gbpf-attach-test-")
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = xdg
    env["GBPF_PLUGIN_PATH"] = PLUGIN
    env.pop("GBPF_AGENT_SOCK", None)
    env.pop("LD_PRELOAD", None)
    sockdir = os.path.join(xdg, "gbpf")

    # ---- one idle process: attach, detach, re-attach, hot swap ----
    app = App(env)
    ok(app.pid == app.p.pid, "--idle runs CMD in gbpf's place (same pid)",
       "ready line: %s, pid %d" % (app.lines, app.p.pid))
    sock = os.path.join(sockdir, "%d.sock" % app.pid)
    st_dir = os.stat(sockdir)
    st_sock = os.stat(sock) if os.path.exists(sock) else None
    ok(stat.S_IMODE(st_dir.st_mode) == 0o700 and st_dir.st_uid == os.geteuid(),
       "socket directory is owner-only (0700)", oct(st_dir.st_mode))
    ok(st_sock is not None and stat.S_ISSOCK(st_sock.st_mode) and
       stat.S_IMODE(st_sock.st_mode) == 0o600, "per-process socket %d.sock is 0600" % app.pid)
    base_threads = threads(app.pid)
    ok(app.launch(6) == "launched 6 sum %d" % expected_sum(6), "idle app runs")

    att = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att.wait_stderr("attached 1 program(s)"), "gbpf attach: the agent attached", att.err)
    ok("memfd:gbpf-maps" in maps_of(app.pid), "attached: the map region is mapped")
    ok(app.launch(10) == "launched 10 sum %d" % expected_sum(10), "app output unchanged while attached")
    det = subprocess.run([GBPF, "detach", str(app.pid)], env=env, capture_output=True, text=True,
                         timeout=30)
    ok(det.returncode == 0 and "detached" in det.stderr, "gbpf detach PID succeeds", det.stderr)
    rc = att.finish(timeout=20)
    objs = json_lines(att.out)
    launches = map_data(objs, "launches")
    events = [o for o in objs if o.get("type") == "event"]
    ok(rc == 0, "the attached gbpf exits 0 after the detach", att.err)
    ok(launches == {"kern_a": 5, "kern_b": 5}, "counts = the 10 launches made while attached",
       "%s\n%s" % (launches, att.err))
    ok(len(events) == 10, "one ring record per attached launch (%d)" % len(events))
    hist = map_data(objs, "grid_hist")
    ok(hist is not None and sum(b["count"] for b in hist) == 10, "histogram counts 10 launches",
       hist)
    ok(app.launch(4) == "launched 4 sum %d" % expected_sum(4), "detached app runs on")
    ok("memfd:gbpf-maps" not in maps_of(app.pid), "detached: the map region is unmapped")
    ok(threads(app.pid) == base_threads, "detached: no thread left behind (%d threads)" %
       threads(app.pid))

    # re-attach, then replace the probes with another object (hot swap)
    att1 = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att1.wait_stderr("attached 1 program(s)"), "re-attach", att1.err)
    app.launch(8)
    att2 = Controller(["attach", "-j", str(app.pid), TOTAL], env)
    ok(att2.wait_stderr("attached 1 program(s)"), "hot swap: a second attach replaces the first",
       att2.err)
    rc1 = att1.finish(timeout=20)
    ok(rc1 == 0 and map_data(json_lines(att1.out), "launches") == {"kern_a": 4, "kern_b": 4},
       "replaced session counted its 8 launches", att1.out + att1.err)
    ok("another gbpf attach or detach took over" in att1.err, "replaced session is told why",
       att1.err)
    app.launch(6)
    rc2 = att2.finish(sig=signal.SIGINT, timeout=20)
    ok(rc2 == 0, "Ctrl-C detaches, exit status 0", att2.err)
    ok('"total"' in att2.out and ":6" in att2.out.replace(" ", ""),
       "replacement probe counted its 6 launches", att2.out)
    ok("memfd:gbpf-maps" not in maps_of(app.pid) and threads(app.pid) == base_threads,
       "after Ctrl-C: unmapped, no thread left")

    # SIGKILL of the controller: the agent sees the socket close and detaches
    att3 = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att3.wait_stderr("attached 1 program(s)"), "attach before SIGKILL", att3.err)
    att3.finish(sig=signal.SIGKILL)
    end = time.time() + 5
    while "memfd:gbpf-maps" in maps_of(app.pid) and time.time() < end:
        time.sleep(0.05)
    ok("memfd:gbpf-maps" not in maps_of(app.pid), "controller killed: the agent detaches")
    att4 = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att4.wait_stderr("attached 1 program(s)"), "attach again after a killed controller",
       att4.err)
    app.launch(2)
    att4.finish(sig=signal.SIGTERM)
    ok(map_data(json_lines(att4.out), "launches") == {"kern_a": 1, "kern_b": 1},
       "counts after a killed controller start from zero", att4.out + att4.err)

    rc, err = app.quit()
    want = ["ready pid %d" % app.pid] + ["launched %d sum %d" % (n, expected_sum(n))
                                         for n in (6, 10, 4, 8, 6, 2)]
    ok(rc == 0 and app.lines == want, "app output identical to an uninstrumented run",
       "%s\n%s" % (app.lines, err))
    ok(not os.path.exists(sock), "socket removed at exit")

    # ---- a job of two processes and a child: one controller ----
    a1, a2 = App(env), App(env)
    att = Controller(["attach", "-j", "--per-process", str(a1.pid), str(a2.pid), COUNT], env)
    ok(att.wait_stderr("info: attached") and att.wait_stderr("pid %d: info: attached" % a2.pid)
       and att.wait_stderr("pid %d: info: attached" % a1.pid),
       "one gbpf attach PID1 PID2 attaches both", att.err)
    a1.launch(4)
    a2.launch(6)
    line = a1.cmd("spawn 3")
    line2 = a1.read_line(20)
    ok(line == "batch 3 sum %d" % expected_sum(3) and line2 == "child status 0",
       "attached process starts a child (fork + exec), output unchanged", "%s / %s" % (line, line2))
    rc = att.finish(sig=signal.SIGINT)
    objs = json_lines(att.out)
    # aggregate first, then per process after a {"type":"process"} line
    agg, per, cur = None, {}, None
    for o in objs:
        if o.get("type") == "process":
            cur = o["pid"]
        elif o.get("type") == "map" and "launches" in o.get("data", {}):
            if cur is None:
                agg = o["data"]["launches"]
            else:
                per[cur] = o["data"]["launches"]
    ok(agg == {"kern_a": 2 + 3 + 2, "kern_b": 2 + 3 + 1},
       "aggregate = sum of both processes and the child", "%s\n%s" % (att.out, att.err))
    ok(per.get(a1.pid) == {"kern_a": 2, "kern_b": 2} and per.get(a2.pid) == {"kern_a": 3, "kern_b": 3},
       "--per-process: each process's own counts", per)
    child = [p for p in per if p not in (a1.pid, a2.pid)]
    ok(len(child) == 1 and per[child[0]] == {"kern_a": 2, "kern_b": 1},
       "the child joined the job through its parent (own counts)", per)
    for a in (a1, a2):
        a.quit()

    # ---- refusals ----
    r = subprocess.run([GBPF, "attach", "1", COUNT], env=env, capture_output=True, text=True,
                       timeout=30)
    ok(r.returncode != 0 and "no idle agent" in r.stderr, "attach to a process without agent: refused",
       r.stderr)
    r = subprocess.run([GBPF, "detach", "1"], env=env, capture_output=True, text=True, timeout=30)
    ok(r.returncode != 0 and "no idle agent" in r.stderr, "detach of a process without agent fails",
       r.stderr)
    os.chmod(sockdir, 0o755)
    bad = App(env)
    rc, err = bad.quit()
    ok(bad.pid > 0 and rc == 0 and "not listening" in err and "mode 0700" in err,
       "a socket directory others can read: the agent refuses to listen, the app runs", err)
    os.chmod(sockdir, 0o700)
    if os.geteuid() == 0:
        foreign_check(env, sockdir)
    else:
        print("ok %d - # SKIP foreign uid check needs root" % (n_test + 1))
        globals()["n_test"] += 1

    malformed_frames(env)
    if MEMWRITE and LAUNCH_APP:
        refused_replacement(env)
        idle_options(env)
        run_per_process(env)
        if CUPTI_APP:
            cupti_watch(env)
        if PUTS:
            print_ring_sessions(env)
    else:
        print("ok %d - # SKIP MEMWRITE_OBJ / LAUNCH_APP not given" % (n_test + 1))
        globals()["n_test"] += 1
    print("1..%d" % n_test)
    return 1 if failed else 0


def plugin_flags(text):
    """The flags the test backend's agent_attach got (its report), or None."""
    for line in text.splitlines():
        if "interposed (flags 0x" in line:
            return int(line.split("flags 0x")[1].split(")")[0], 16)
    return None


def refused_replacement(env):
    """A replacement the agent refuses (staged first) leaves the attached programs counting."""
    app = App(env)
    att = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att.wait_stderr("attached 1 program(s)"), "staged swap: first set attached", att.err)
    app.launch(4)
    bad = Controller(["attach", "-j", "--allow-app-writes", str(app.pid), MEMWRITE], env)
    rc = bad.finish(timeout=20)
    ok("--allow-app-writes refused: the application was started without it" in bad.err and
       "the programs attached before stay attached" in bad.err,
       "a replacement asking for app writes the start did not allow is refused, with why", bad.err)
    ok("attached 1 program(s)" not in bad.err, "the refused set was never attached", bad.err)
    app.launch(2)
    ok(att.p.poll() is None and "took over" not in att.err,
       "the first controller was not replaced", att.err)
    att.finish(sig=signal.SIGINT)
    ok(map_data(json_lines(att.out), "launches") == {"kern_a": 3, "kern_b": 3},
       "the first set counted all 6 launches, before and after the refused swap",
       att.out + att.err)
    # a swap right after launches: the two sets' counts add up to every launch
    att1 = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att1.wait_stderr("attached 1 program(s)"), "swap: set 1 attached", att1.err)
    app.launch(5)
    att2 = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att2.wait_stderr("replaces the programs of the previous session"),
       "swap: set 2 says it replaced set 1", att2.err)
    att1.finish(timeout=20)
    app.launch(7)
    att2.finish(sig=signal.SIGINT)
    c1 = map_data(json_lines(att1.out), "launches")
    c2 = map_data(json_lines(att2.out), "launches")
    ok(c1 == {"kern_a": 3, "kern_b": 2} and c2 == {"kern_a": 4, "kern_b": 3},
       "swap: set 1 has the 5 launches before it (printed at the swap), set 2 the 7 after",
       "%s %s\n%s\n%s" % (c1, c2, att1.err, att2.err))
    rc, err = app.quit()
    ok(rc == 0 and app.lines[1:] == ["launched %d sum %d" % (n, expected_sum(n))
                                     for n in (4, 2, 5, 7)],
       "app output unchanged through the refused and the real swap", app.lines)


def idle_options(env):
    """gbpf run --idle --engine / --allow-app-writes: the start's options reach every attach."""
    plain = App(env)
    att = Controller(["attach", "-j", str(plain.pid), COUNT], env)
    ok(att.wait_stderr("attached 1 program(s)"), "idle without options: attach", att.err)
    att.finish(sig=signal.SIGINT)
    ok(plugin_flags(att.err) == 0, "idle without options: an attach gets no engine flag",
       att.err)
    plain.quit()

    app = App(env, opts=["--engine", "ptx", "--allow-app-writes"])
    att = Controller(["attach", "-j", str(app.pid), COUNT], env)
    ok(att.wait_stderr("attached 1 program(s)"), "idle --engine ptx: attach", att.err)
    app.launch(2)
    att.finish(sig=signal.SIGINT)
    ok(plugin_flags(att.err) == F_ENGINE_PTX and "(engine ptx)" in att.err,
       "idle --engine ptx: an attach naming no engine gets ptx (plugin flags)", att.err)
    att = Controller(["attach", "-j", "--engine", "sanitizer", str(app.pid), COUNT], env)
    ok(att.wait_stderr("attached 1 program(s)"), "idle --engine ptx: attach --engine sanitizer",
       att.err)
    att.finish(sig=signal.SIGINT)
    ok(plugin_flags(att.err) == F_ENGINE_SANITIZER,
       "an attach naming its engine keeps it", att.err)
    att = Controller(["attach", "-j", "--allow-app-writes", str(app.pid), MEMWRITE], env)
    ok(att.wait_stderr("attached 2 program(s)"),
       "idle --allow-app-writes: a writer attached with --allow-app-writes", att.err)
    app.launch(3)
    att.finish(sig=signal.SIGINT)
    ok(plugin_flags(att.err) == F_ENGINE_PTX | F_ALLOW_APP_WRITES,
       "the plugin gets ALLOW_APP_WRITES and the start's engine", att.err)
    rc, err = app.quit()
    ok(rc == 0, "app with idle options exits 0", err)

    app = App(env)
    with open("/proc/%d/environ" % app.pid, "rb") as f:
        idle_env = dict(kv.decode().split("=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    r = subprocess.run([GBPF, "attach", "-j", "--allow-app-writes", str(app.pid), MEMWRITE],
                       env=env, capture_output=True, text=True, timeout=30)
    ok("--allow-app-writes refused: the application was started without it" in r.stderr and
       "attached" not in r.stderr.replace("detached", ""),
       "idle without --allow-app-writes: a writer is refused by the agent", r.stderr)
    ok(app.launch(2) == "launched 2 sum %d" % expected_sum(2), "the app runs on after the refusal")
    app.quit()
    # by hand, as gbpf run --idle starts it (its environment) but with both engines set
    idle_env["GBPF_AGENT_IDLE_FLAGS"] = "12"
    bad = subprocess.run([APP], input="quit\n", env=idle_env, capture_output=True, text=True,
                         timeout=30)
    rc, err = bad.returncode, bad.stderr
    ok(rc == 0 and "GBPF_AGENT_IDLE_FLAGS=12: not a set of start options" in err,
       "both engines in the start options: reported, none applied, the app runs", err)
    r = subprocess.run([GBPF, "run", "--idle", "--per-process", "--", "true"], env=env,
                       capture_output=True, text=True, timeout=30)
    ok(r.returncode != 0 and "--per-process" in r.stderr, "run --idle --per-process is refused",
       r.stderr)


def run_per_process(env):
    """gbpf run --per-process: the job's sum, then each process (a fork + exec child too)."""
    r = subprocess.run([GBPF, "run", "-j", "--per-process", "--backend", "hosttest", COUNT, "--",
                        LAUNCH_APP, "6", "2", "0", "0", "fork"], env=env, capture_output=True,
                       text=True, timeout=60)
    plain = subprocess.run([LAUNCH_APP, "6", "2", "0", "0", "fork"], env=env, capture_output=True,
                           text=True, timeout=60)
    objs = json_lines(r.stdout)
    agg, per, cur, procs = None, {}, None, []
    for o in objs:
        if o.get("type") == "process":
            cur = o["pid"]
            procs.append(o)
        elif o.get("type") == "map" and "launches" in o.get("data", {}):
            if cur is None:
                agg = o["data"]["launches"]
            else:
                per[cur] = o["data"]["launches"]
    ok(r.returncode == 0 and agg == {"kern_a": 9, "kern_b": 9},
       "run --per-process: the sum of both processes first (2 x 6 + 6 launches)",
       r.stdout[-2000:] + r.stderr)
    ok(sorted(per.values(), key=lambda d: d["kern_a"]) == [{"kern_a": 3, "kern_b": 3},
                                                           {"kern_a": 6, "kern_b": 6}],
       "run --per-process: parent (2 threads x 6) and fork + exec child (6) apart", per)
    ok(all(p.get("exe") == os.path.basename(LAUNCH_APP) for p in procs) and len(procs) == 2,
       "run --per-process: each process named by pid and executable", procs)
    events = [o for o in objs if o.get("type") == "event"]
    ok(len(events) == 18, "run --per-process: every process's ring records (%d)" % len(events))
    app_lines = [l for l in r.stdout.splitlines() if not l.startswith("{")]
    ok(sorted(app_lines) == sorted(plain.stdout.splitlines()),
       "run --per-process: app output unchanged", "%s\n%s" % (app_lines, plain.stdout))
    r = subprocess.run([GBPF, "run", "--per-process", "--prom-file", "/dev/null", COUNT, "--",
                        "true"], env=env, capture_output=True, text=True, timeout=30)
    ok(r.returncode != 0 and "--per-process cannot be combined with --prom" in r.stderr,
       "run --per-process with an exporter is refused, with why", r.stderr)


def cupti_watch(env):
    """The agent watches CUPTI's answers: a failure is reported, every call forwarded unchanged."""
    plain = subprocess.run([CUPTI_APP], env=env, capture_output=True, text=True, timeout=30)
    r = subprocess.run([GBPF, "run", "--backend", "hosttest", COUNT, "--", CUPTI_APP], env=env,
                       capture_output=True, text=True, timeout=60)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("cupti ")]
    ok(r.returncode == 0 and line and line[0].startswith("cupti subscribe 0 ok activity 0 ok") and
       line == plain.stdout.splitlines(),
       "CUPTI calls go through the agent unchanged (arguments and results)",
       r.stdout + plain.stdout + r.stderr)
    ok("CUPTI client" not in r.stderr, "a CUPTI that succeeds is not reported", r.stderr)
    e = dict(env)
    e["FAKE_CUPTI_RESULT"] = "39"
    r = subprocess.run([GBPF, "run", "--backend", "hosttest", COUNT, "--", CUPTI_APP], env=e,
                       capture_output=True, text=True, timeout=60)
    ok(r.returncode == 0 and "\ncupti subscribe 39 ok activity 39 ok" in "\n" + r.stdout,
       "a failing CUPTI: the app gets CUPTI's own answer and runs on", r.stdout + r.stderr)
    ok("error: a CUPTI client in this process (e.g. the PyTorch profiler) failed: cuptiSubscribe "
       "returned 39 (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (fake))" in r.stderr and
       "run gbpf with --engine ptx to profile beside it" in r.stderr and
       "cuptiActivityEnable returned 39" in r.stderr,
       "the failure is reported by gbpf with the call, the result and the way out", r.stderr)
    r = subprocess.run([GBPF, "run", "--backend", "hosttest", "--engine", "ptx", COUNT, "--",
                        CUPTI_APP], env=e, capture_output=True, text=True, timeout=60)
    ok("cuptiSubscribe returned 39" in r.stderr and "--engine ptx to profile" not in r.stderr,
       "under --engine ptx the report does not blame the Sanitizer engine", r.stderr)


def foreign_check(env, sockdir):
    """A process of another uid that reaches the socket gets nothing (peer credentials)."""
    app = App(env)
    sock = os.path.join(sockdir, "%d.sock" % app.pid)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        res = b"?"
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            os.seteuid(65534)
            libc.setfsuid(0)  # reach the 0700 directory; SO_PEERCRED still says 65534
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(sock)
            data = s.recv(16)
            res = b"refused" if data == b"" else b"accepted"
        except Exception as e:  # noqa: BLE001 - reported to the parent
            res = ("error " + str(e)).encode()
        os.write(w, res)
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    res = os.read(r, 256).decode()
    ok(res == "refused", "another uid connecting to the agent gets no hello", res)
    ok(app.launch(2) == "launched 2 sum %d" % expected_sum(2), "the app runs on after the refusal")
    app.quit()


def malformed_frames(env):
    """#11: a fake agent sends malformed frames to `gbpf run`; each error says what and where."""
    r = subprocess.run([GBPF, "run", "--backend", "hosttest", COUNT, "--", BAD_FRAMES], env=env,
                       capture_output=True, text=True, timeout=60)
    e = r.stderr
    checks = [
        ("bad frame at byte 0 of its stream, disconnected: frame: bad magic 0x58585858", "bad magic"),
        ("frame: protocol version 9, expected ", "bad version"),
        ("frame: unknown message type 99", "unknown type"),
        ("frame: message type 2 (setup) is sent by the controller, never by an agent",
         "controller-only type from an agent"),
        ("frame: hello payload of 1048576 bytes is longer than the", "payload too long"),
        ("frame: reserved field is 7, not 0", "reserved field"),
        ("bad frame at byte 37 of its stream", "offset after a valid hello"),
    ]
    ok("fake done" in r.stdout, "fake agent ran", r.stdout + e)
    for needle, what in checks:
        ok(needle in e, "malformed frame reported exactly: " + what, e)
    ok("too long" not in e.replace("is longer than", ""), "no frame is called 'too long' by mistake", e)


if __name__ == "__main__":
    sys.exit(main())
