#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every kernel an app launched under `gbpf -j run kernelids.bpf.o` has a report.

Usage: check_reports.py STDOUT STDERR [INSTRUMENTED_NAME...]
STDOUT holds gbpf's JSON lines (the "launches" hash: kernel id -> host
launches, ids being FNV-1a 64 of the mangled name; the "names" hash: id ->
the name's first 63 bytes), STDERR gbpf's reports ("gbpf run: pid P: KIND:
kernel NAME: MESSAGE"). Checks, in TAP: launches were seen; each launched
kernel has its own report: the report's name hashes to the id or, where
the report cut a long name, a distinct cut report begins with the
launched name's 63 bytes; each "not instrumented" report gives a reason;
each INSTRUMENTED_NAME is reported instrumented. Prints a summary of the
kernels per outcome as comments.
"""
import json
import re
import sys

REPORT = re.compile(r"^gbpf run: pid \d+: (info|not instrumented|error): kernel (\S+): (.*)$")


def fnv1a64(name):
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def key_id(text):
    """The controller prints a u64 key in decimal, or as text when its bytes are all printable."""
    if text.isdigit():
        return int(text)
    return int.from_bytes(text.encode("latin-1").ljust(8, b"\0")[:8], "little")


def launched(path):
    """(id -> launches, id -> name prefix) from the last print of each map (the final state)."""
    ids, names = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            table = obj.get("data", {}).get("launches") if isinstance(obj.get("data"), dict) else None
            if isinstance(table, dict):
                ids = {key_id(k): v for k, v in table.items()}
            for m in obj.get("maps", []) if isinstance(obj.get("maps"), list) else []:
                if m.get("name") == "names":
                    names = {e["key"]: bytes(e["value"]).split(b"\0")[0].decode("latin-1")
                             for e in m.get("data", []) if isinstance(e.get("value"), list)}
    return ids, names


def match_cut(unmatched, names, cut):
    """Each unmatched id to a distinct cut report (index into cut, a list of names: two kernels
    may be cut to the same text) whose name begins with the id's name prefix (augmenting paths:
    prefixes of templated kernels are shared). Returns the ids left over."""
    owner = {}

    def assign(i, seen):
        for r, text in enumerate(cut):
            if r in seen or not names.get(i) or not text.startswith(names[i]):
                continue
            seen.add(r)
            if r not in owner or assign(owner[r], seen):
                owner[r] = i
                return True
        return False

    return [i for i in unmatched if not assign(i, set())]


def reports(path):
    """name -> list of (kind, message), and the name of every report line in order: two
    kernels whose long names were cut to the same text give two lines of the same name."""
    out, lines = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            m = REPORT.match(line.rstrip("\n"))
            if m:
                out.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
                lines.append(m.group(2))
    return out, lines


def main():
    if len(sys.argv) < 3:
        print("usage: check_reports.py STDOUT STDERR [INSTRUMENTED_NAME...]", file=sys.stderr)
        return 2
    ids, names = launched(sys.argv[1])
    reps, lines = reports(sys.argv[2])
    by_id = {fnv1a64(n): n for n in reps}
    tests = []

    def ok(cond, what):
        tests.append((bool(cond), what))

    ok(ids, "host launches recorded (%d kernels, %d launches)" % (len(ids), sum(ids.values())))
    unmatched = [i for i in ids if i not in by_id]
    cut = [n for n in lines if fnv1a64(n) not in ids]
    missing = match_cut(unmatched, names, cut)
    ok(not missing, "every launched kernel has a report (%d by id, %d by the prefix of a cut name, %d without: %s)"
       % (len(ids) - len(unmatched), len(unmatched) - len(missing), len(missing),
          ", ".join("%#x %s" % (i, names.get(i, "?")) for i in missing[:4])))
    instr = sorted(n for n, r in reps.items() if any(k == "info" and m.startswith("instrumented") for k, m in r))
    notins = sorted(n for n, r in reps.items() if any(k == "not instrumented" for k, _ in r))
    errors = sorted(n for n, r in reps.items() if any(k == "error" for k, _ in r))
    noreason = [n for n in notins if any(k == "not instrumented" and not m.strip() for k, m in reps[n])]
    ok(not noreason, "every 'not instrumented' report gives a reason (%d without)" % len(noreason))
    for name in sys.argv[3:]:
        ok(name in instr, "%s reported instrumented" % name)
    print("1..%d" % len(tests))
    for i, (c, what) in enumerate(tests, 1):
        print("%s %d - %s" % ("ok" if c else "not ok", i, what))
    reasons = {}
    for n in notins:
        for k, m in reps[n]:
            if k == "not instrumented":
                reasons[m] = reasons.get(m, 0) + 1
    print("# instrumented: %d (%s)" % (len(instr), " ".join(instr)[:300]))
    print("# not instrumented: %d; errors: %d (%s)" % (len(notins), len(errors), " ".join(errors)[:200]))
    for m, c in sorted(reasons.items(), key=lambda x: -x[1])[:5]:
        print("#   %d x %s" % (c, m[:200]))
    return 0 if all(c for c, _ in tests) else 1


if __name__ == "__main__":
    sys.exit(main())
