#!/usr/bin/env python3
"""Count every check of a meson test run and print 'N passed, N failed'.

TAP tests count one per 'ok' / 'not ok' line ('# SKIP' counts as skipped);
other tests count one each by their result. A TAP test that crashed after
its last check counts one more failure, so a crash is never hidden.
"""
import json
import re
import sys

OK = re.compile(r"^ok\b(.*)$")
NOT_OK = re.compile(r"^not ok\b")


def main(path):
    passed = failed = skipped = 0
    failures = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            name, result = t.get("name", "?"), t.get("result", "")
            if t.get("protocol") == "tap" or re.search(r"^(not )?ok \d", t.get("stdout") or "", re.M):
                p = fl = s = 0
                for out in (t.get("stdout") or "").splitlines():
                    if NOT_OK.match(out):
                        fl += 1
                        failures.append(f"{name}: {out}")
                    else:
                        m = OK.match(out)
                        if m:
                            if "# SKIP" in m.group(1).upper():
                                s += 1
                            else:
                                p += 1
                if result not in ("OK", "EXPECTEDFAIL", "SKIP") and fl == 0:
                    fl += 1
                    failures.append(f"{name}: {result} after {p} passed checks")
                passed, failed, skipped = passed + p, failed + fl, skipped + s
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
                failures.append(f"{name}: {result}")
    for f in failures[:50]:
        print("FAILED", f)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)


if __name__ == "__main__":
    main(sys.argv[1])
