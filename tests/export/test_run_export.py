#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end checks of what `gbpf run` exports, on the hosttest backend (no GPU).

argv: GBPF HOSTTEST_PLUGIN COUNT_OBJ LAUNCH_APP ASYNC_APP GOLDEN_DIR WORK_DIR PRINT_TAGS_OBJ
 - timeline: summary numbers against the simulated GPU (exact) and the app's own
   measure of its waits (within 5%), the --trace file through check_trace.py;
 - Prometheus: --prom-file and --prom (HTTP) through a strict parser (prom_parse.py)
   and prometheus_client's parser when python3-prometheus-client is installed;
 - OTLP/HTTP JSON: --otlp to a receiver in this test that checks the structure;
 - JSON (-j) and text output of maps against golden files
   (GBPF_UPDATE_GOLDEN=1 rewrites them);
 - print tags (GBPF_PRINT_LOG2_HIST / GBPF_PRINT_TABLE): which maps print as
   log2 histograms, in text, JSON and Prometheus.
Prints TAP.
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_parse  # noqa: E402

GBPF, PLUGIN, OBJ, LAUNCH, ASYNC, GOLDEN, WORK, TAGS_OBJ = sys.argv[1:9]
ENV = dict(os.environ, GBPF_PLUGIN_PATH=PLUGIN)
ENV.pop("GBPF_BACKEND", None)
n = 0
failed = 0


def ok(cond, msg):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, msg))
    sys.stdout.flush()
    return cond


def diag(text):
    for line in str(text).splitlines()[:60]:
        print("# " + line)


def gbpf(args, app, timeout=60):
    return subprocess.run([GBPF, "run", "--backend", "hosttest"] + args + [OBJ, "--"] + app,
                          env=ENV, capture_output=True, text=True, timeout=timeout)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def test_timeline():
    trace = os.path.join(WORK, "export-trace.json")
    if os.path.exists(trace):
        os.unlink(trace)
    r = gbpf(["-j", "--trace", trace], [ASYNC, "2", "2000", "3000", "1500"])
    ok(r.returncode == 0, "timeline run exits 0 (%d)" % r.returncode)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    objs = []
    try:
        objs = [json.loads(ln) for ln in lines]
        parsed = True
    except ValueError as e:
        parsed = False
        diag(e)
    ok(parsed and objs, "every -j line is one JSON object (%d lines)" % len(objs))
    summ = [o for o in objs if o.get("type") == "timeline_summary"]
    if not ok(len(summ) == 1, "one timeline_summary object"):
        diag(r.stdout)
        diag(r.stderr)
        return
    d = summ[0]["data"]
    st = sorted(d["streams"], key=lambda s: s["stream"])
    ok(d["events"] == 26 and d["lost_events"] == 0,
       "26 events (12 calls, 12 GPU items, 2 syncs), none lost (%d, %d)"
       % (d["events"], d["lost_events"]))
    ok(len(st) == 2 and all(s["kernel_ns"] == 6000000 and s["kernels"] == 2 for s in st),
       "each stream: 2 kernels, 6.000 ms exactly (simulated GPU): %s" % [s["kernel_ns"] for s in st])
    ok(all(s["h2d_ns"] == 4000000 and s["d2h_ns"] == 3000000 and s["h2d_bytes"] == 2 << 20
           for s in st), "each stream: H2D 4 ms (2 MiB), D2H 3 ms exactly")
    ok(all(s["busy_ns"] == 13000000 and s["idle_ns"] == s["window_ns"] - 13000000 for s in st),
       "busy 13 ms per stream, idle = window - busy")
    sy = d["syncs"]
    waited_us = int(r.stdout.split("waited_us ")[1].split()[0]) if "waited_us " in r.stdout else 0
    ok(len(sy) == 1 and sy[0]["name"] == "cudaDeviceSynchronize" and sy[0]["calls"] == 2,
       "one sync call site, 2 calls")
    if sy:
        got = sy[0]["waited_ns"] / 1000.0
        ok(waited_us > 0 and abs(got - waited_us) <= 0.05 * waited_us,
           "sync waited %.0f us; the app measured %d us (within 5%%)" % (got, waited_us))
        ok(sy[0]["gpu_kernel_ns"] > 0 and sy[0]["gpu_copy_ns"] > 0 and
           sy[0]["gpu_kernel_ns"] + sy[0]["gpu_copy_ns"] <= 2 * sy[0]["waited_ns"],
           "the wait is explained by kernels and copies running meanwhile")
    c = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "check_trace.py"),
                        trace, "streams=2", "flows=12", "waits=4", "syncs=2"],
                       capture_output=True, text=True)
    diag(c.stdout)
    ok(c.returncode == 0, "the --trace file passes the trace-event schema checks (check_trace.py)")
    # The text summary, as people read it.
    r = gbpf([], [ASYNC, "1", "2000", "3000", "1500"])
    ok("GPU timeline: 13 events" in r.stdout and
       "stream 1: kernels 3.00 ms (1), H2D 2.00 ms (1), D2H 1.50 ms (1), idle" in r.stdout and
       "cudaDeviceSynchronize x1: host waited" in r.stdout,
       "text summary per stream and per sync call")
    if failed:
        diag(r.stdout)


def test_timeline_drops():
    env = dict(ENV, GBPF_HOSTTEST_TL_BURST="10000")
    r = subprocess.run([GBPF, "run", "--backend", "hosttest", "-j", OBJ, "--", LAUNCH, "1", "1",
                        "0", "0", "plain"], env=env, capture_output=True, text=True, timeout=60)
    objs = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    lost = [o for o in objs if o.get("type") == "lost_events" and o.get("map") == "timeline"]
    summ = [o["data"] for o in objs if o.get("type") == "timeline_summary"]
    ok(lost and lost[0]["count"] == 10000 - 8192 and summ and summ[0]["events"] == 8192 and
       summ[0]["lost_events"] == 1808,
       "a burst of 10000 events: 8192 queued, 1808 dropped, counted and reported (%s)"
       % (lost[0] if lost else None))
    r = subprocess.run([GBPF, "run", "--backend", "hosttest", OBJ, "--", LAUNCH, "1", "1",
                        "0", "0", "plain"], env=env, capture_output=True, text=True, timeout=60)
    ok("Lost 1808 timeline events" in r.stderr, "text mode: 'Lost 1808 timeline events' on stderr")


def check_prom_text(text, what, launches):
    try:
        fams = prom_parse.parse(text)
    except ValueError as e:
        ok(False, "%s: strict parser: %s" % (what, e))
        diag(text)
        return
    ok(True, "%s: strict parser accepts %d families" % (what, len(fams)))
    la = {s[1].get("key"): s[2] for s in fams.get("gbpf_launches", {}).get("samples", [])}
    ok(la == {"kern_a": launches / 2, "kern_b": launches / 2},
       "%s: gbpf_launches per kernel label: %s" % (what, la))
    h = fams.get("gbpf_grid_hist", {})
    buckets = [(s[1]["le"], s[2]) for s in h.get("samples", []) if s[0].endswith("_bucket")]
    want = [str((1 << (i + 1)) - 1) for i in range(8)] + ["+Inf"]
    ok(h.get("type") == "histogram" and [b[0] for b in buckets] == want and
       buckets[-1][1] == launches,
       "%s: log2 histogram buckets le=1,3,..,255,+Inf, +Inf = %d" % (what, launches))
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        # Debian's python3-prometheus-client (pure Python) when another python3 runs us.
        sys.path.append("/usr/lib/python3/dist-packages")
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError:
            print("ok %d # SKIP python3-prometheus-client not installed" % (n + 1))
            globals()["n"] += 1
            return
    try:
        names = {f.name for f in text_string_to_metric_families(text)}
        ok("gbpf_grid_hist" in names and "gbpf_launches" in names,
           "%s: prometheus_client parses it too" % what)
    except Exception as e:  # noqa: BLE001 - any parser error is a failure
        ok(False, "%s: prometheus_client: %s" % (what, e))


def test_prom_file():
    path = os.path.join(WORK, "export-test.prom")
    if os.path.exists(path):
        os.unlink(path)
    r = gbpf(["--prom-file", path], [LAUNCH, "20", "1", "0", "0", "plain"])
    ok(r.returncode == 0 and os.path.exists(path), "--prom-file written at exit")
    if os.path.exists(path):
        check_prom_text(open(path).read(), "prom file", 20)
    ok(not [f for f in os.listdir(WORK) if f.startswith("export-test.prom.tmp")],
       "no temporary file left behind (written by rename)")


def test_prom_http():
    port = free_port()
    p = subprocess.Popen([GBPF, "run", "--backend", "hosttest", "--prom", "127.0.0.1:%d" % port,
                          OBJ, "--", LAUNCH, "40", "1", "0", "25000", "plain"],
                         env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    body, ctype, code404, code405 = None, None, None, None
    deadline = time.time() + 20
    while time.time() < deadline and body is None:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as u:
                text = u.read().decode()
                ctype = u.headers.get("Content-Type")
                if "gbpf_launches{" in text:
                    body = text
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.05)
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/other" % port, timeout=5)
    except urllib.error.HTTPError as e:
        code404 = e.code
    except urllib.error.URLError:
        pass
    try:
        urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                                      data=b"x", method="POST"), timeout=5)
    except urllib.error.HTTPError as e:
        code405 = e.code
    except urllib.error.URLError:
        pass
    out, err = p.communicate(timeout=60)
    ok(p.returncode == 0, "gbpf run --prom exits with the app (%d)" % p.returncode)
    ok(body is not None and ctype == "text/plain; version=0.0.4; charset=utf-8",
       "GET /metrics while the app runs: 200, %s" % ctype)
    ok(code404 == 404 and code405 == 405, "other paths 404 (%s), other methods 405 (%s)"
       % (code404, code405))
    if body:
        fams = prom_parse.parse(body)
        h = [s for s in fams["gbpf_grid_hist"]["samples"] if s[0] == "gbpf_grid_hist_count"]
        ok(h and 0 < h[0][2] <= 40, "a scrape mid-run parses strictly (count %s so far)"
           % (h[0][2] if h else None))
    if failed:
        diag(err)


class Receiver(http.server.BaseHTTPRequestHandler):
    got = []
    status = 200

    def do_POST(self):  # noqa: N802 - http.server's naming
        n_ = int(self.headers.get("Content-Length", "0"))
        Receiver.got.append((self.path, self.headers.get("Content-Type"), self.rfile.read(n_)))
        self.send_response(Receiver.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def check_otlp(doc):
    rm = doc["resourceMetrics"]
    attrs = {a["key"]: a["value"] for a in rm[0]["resource"]["attributes"]}
    ok(attrs.get("service.name") == {"stringValue": "gbpf"}, "OTLP resource service.name")
    metrics = {m["name"]: m for m in rm[0]["scopeMetrics"][0]["metrics"]}
    h = metrics.get("gbpf_grid_hist", {}).get("histogram")
    ok(h is not None and h["aggregationTemporality"] == 2, "gbpf_grid_hist is a cumulative histogram")
    if h:
        dp = h["dataPoints"][0]
        bounds, counts = dp["explicitBounds"], [int(c) for c in dp["bucketCounts"]]
        ok(bounds == [(1 << (i + 1)) - 1 for i in range(8)] and len(counts) == len(bounds) + 1 and
           sum(counts) == int(dp["count"]) == 20 and isinstance(dp["count"], str) and
           int(dp["startTimeUnixNano"]) <= int(dp["timeUnixNano"]),
           "histogram: explicitBounds 1..255, bucketCounts one longer, sum = count = 20")
    g = metrics.get("gbpf_launches", {}).get("gauge")
    vals = {}
    if g:
        for dp in g["dataPoints"]:
            a = {x["key"]: x["value"]["stringValue"] for x in dp["attributes"]}
            vals[a.get("key")] = int(dp["asInt"])
    ok(vals == {"kern_a": 10, "kern_b": 10}, "gauge gbpf_launches with key attributes: %s" % vals)
    lost = metrics.get("gbpf_lost_events", {}).get("sum")
    ok(lost is not None and lost["isMonotonic"] is True, "ring buffer losses as a monotonic sum")


def test_otlp():
    srv = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    url = "http://127.0.0.1:%d/v1/metrics" % srv.server_address[1]
    r = gbpf(["--otlp", url], [LAUNCH, "20", "1", "0", "0", "plain"])
    ok(r.returncode == 0 and len(Receiver.got) >= 1, "--otlp POSTs at exit (%d requests)"
       % len(Receiver.got))
    if Receiver.got:
        path, ctype, body = Receiver.got[-1]
        ok(path == "/v1/metrics" and ctype == "application/json",
           "POST /v1/metrics, application/json")
        try:
            check_otlp(json.loads(body))
        except (ValueError, KeyError, IndexError, TypeError) as e:
            ok(False, "OTLP JSON structure: %s" % e)
            diag(body[:2000])
    Receiver.got.clear()
    r = gbpf(["--otlp-traces", url.replace("metrics", "traces")], [ASYNC, "1", "200", "300", "100"])
    spans = []
    try:
        path, ctype, body = Receiver.got[-1]
        doc = json.loads(body)
        spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        ok(path == "/v1/traces" and ctype == "application/json", "--otlp-traces POSTs /v1/traces")
    except (IndexError, ValueError, KeyError) as e:
        ok(False, "--otlp-traces request: %s" % e)
    ids = {s_["spanId"]: s_ for s_ in spans}
    kernels = [s_ for s_ in spans if s_["name"] in ("vec_add(float*, float*)", "scale(float*)")]
    ok(len(spans) == 13 and all(len(s_["traceId"]) == 32 and len(s_["spanId"]) == 16 and
                                int(s_["startTimeUnixNano"]) <= int(s_["endTimeUnixNano"])
                                for s_ in spans),
       "13 spans (6 calls, 6 GPU items, 1 sync) with trace/span ids and times")
    ok(len(kernels) == 2 and all(ids.get(k.get("parentSpanId"), {}).get("name") == "gbpf_test_launch"
                                 for k in kernels),
       "each kernel span is a child of its launch call span")
    Receiver.status = 500
    r = gbpf(["--otlp", url], [LAUNCH, "2", "1", "0", "0", "plain"])
    ok(r.returncode == 0 and "collector answered 'HTTP/1.0 500" in r.stderr,
       "a collector's error is reported, the run goes on")
    srv.shutdown()
    r = gbpf(["--otlp", "https://example.invalid/v1/metrics"], [LAUNCH, "1", "1", "0", "0", "plain"])
    ok("https is not supported" in r.stderr, "https URLs are refused with a reason")


def golden(name, text):
    path = os.path.join(GOLDEN, name)
    if os.environ.get("GBPF_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    if not os.path.exists(path):
        ok(False, "golden file %s missing (GBPF_UPDATE_GOLDEN=1 writes it)" % name)
        return
    want = open(path).read()
    if not ok(text == want, "output matches golden/%s" % name):
        import difflib
        diag("".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True))))


def gbpf_lines(text):
    """gbpf's own output: the app's lines ("thread N: sum S", "done") interleave at random."""
    return "".join(ln + "\n" for ln in text.splitlines()
                   if not ln.startswith("thread ") and ln != "done")


def test_golden():
    r = gbpf(["-j"], [LAUNCH, "8", "1", "0", "0", "plain"])
    for ln in r.stdout.splitlines():
        if ln.startswith("{"):
            json.loads(ln)
    golden("run_launch.jsonl", gbpf_lines(r.stdout))
    r = gbpf([], [LAUNCH, "8", "1", "0", "0", "plain"])
    golden("run_launch.txt", gbpf_lines(r.stdout))
    r = gbpf(["-j", "--no-summary"], [ASYNC, "1", "100", "100", "100"])
    ok("timeline_summary" not in r.stdout, "--no-summary leaves the summary out")
    r = subprocess.run([GBPF, "run", "--help"], capture_output=True, text=True)
    ok(r.returncode == 0 and "--trace FILE.json" in r.stderr and "--prom-file PATH" in r.stderr
       and "--otlp URL" in r.stderr, "gbpf run --help documents the export options")


def test_print_tags():
    """8 launches of grid 1, 2, .., 128 (kern_a, kern_b alternating): log2 slots 0..7 once each."""
    base = [GBPF, "run", "--backend", "hosttest"]
    app = ["--", LAUNCH, "8", "1", "0", "0", "plain"]
    r = subprocess.run(base + ["-j", TAGS_OBJ] + app, env=ENV, capture_output=True, text=True,
                       timeout=60)
    ok(r.returncode == 0, "print tags: run exits 0 (%d)" % r.returncode)
    hists, others = {}, {}
    for ln in r.stdout.splitlines():
        if not ln.startswith("{"):
            continue
        o = json.loads(ln)
        if o.get("type") == "hist":
            hists.update(o["data"])
        elif o.get("type") == "maps":
            for m in o.get("maps", []):
                others[m["name"]] = m
    want = [{"min": 0 if i == 0 else 1 << i, "max": (1 << (i + 1)) - 1, "count": 1} for i in range(8)]
    ok(hists.get("grid_log2") == want,
       "an array tagged log2_hist prints as a histogram, one launch per slot 0..7")
    ok(hists.get("grid_slots") == want,
       "a hash keyed by the slot tagged log2_hist prints the same histogram")
    per = hists.get("per_kernel", {})
    ok(isinstance(per, dict) and len(per) == 2 and
       sorted(sum(s["count"] for s in h) for h in per.values()) == [4, 4],
       "u64[16] values tagged log2_hist: one histogram per kernel, 4 launches each (%s)" % per)
    ok("grid_hist_raw" not in hists and "grid_hist_raw" in others,
       "an array named like a histogram but tagged table prints as a table")
    golden("run_print_tags.jsonl", gbpf_lines(r.stdout))
    r = subprocess.run(base + [TAGS_OBJ] + app, env=ENV, capture_output=True, text=True, timeout=60)
    ok(r.returncode == 0 and "grid_slots:\n     value               : count    distribution" in r.stdout,
       "text: the slot-keyed hash is drawn as a bcc histogram")
    golden("run_print_tags.txt", gbpf_lines(r.stdout))
    prom = os.path.join(WORK, "print-tags.prom")
    r = subprocess.run(base + ["--prom-file", prom, TAGS_OBJ] + app, env=ENV, capture_output=True,
                       text=True, timeout=60)
    fams = {}
    try:
        fams = prom_parse.parse(open(prom).read())
    except (OSError, ValueError) as e:
        diag(e)
    ok(fams.get("gbpf_grid_slots", {}).get("type") == "histogram" and
       fams.get("gbpf_grid_log2", {}).get("type") == "histogram" and
       fams.get("gbpf_grid_hist_raw", {}).get("type") in ("gauge", "counter"),
       "Prometheus: tagged maps are histograms, the table-tagged one is not (%s)" %
       {k: v.get("type") for k, v in fams.items() if k.startswith("gbpf_grid")})
    buckets = [(smp[1]["le"], smp[2]) for smp in fams.get("gbpf_grid_slots", {}).get("samples", [])
               if smp[0].endswith("_bucket")]
    ok([b[0] for b in buckets] == [str((1 << (i + 1)) - 1) for i in range(8)] + ["+Inf"] and
       [b[1] for b in buckets] == [i + 1 for i in range(8)] + [8],
       "Prometheus: the slot-keyed histogram has buckets up to its last slot, cumulative (%s)" % buckets)


def main():
    test_timeline()
    test_timeline_drops()
    test_prom_file()
    test_prom_http()
    test_otlp()
    test_golden()
    test_print_tags()
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
