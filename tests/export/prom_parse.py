# SPDX-License-Identifier: MIT
"""A strict parser of the Prometheus text exposition format 0.0.4.

parse(text) -> {family: {"type": str, "help": str, "samples": [(name, labels, value)]}}
Raises ValueError naming the line for anything the format does not allow: a sample
before its TYPE, a TYPE after samples, duplicate families or series, bad names, bad
label syntax or escapes, values that are not floats; and for histograms, buckets
that are not cumulative, a missing +Inf bucket, +Inf != _count, missing _sum/_count.
"""
import math
import re

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")


def _labels(s, lineno):
    """Parse '{a="x",b="y"}' content; returns (dict, rest)."""
    labels = {}
    i = 1
    while True:
        if s[i] == "}":
            return labels, s[i + 1:]
        m = re.match(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", s[i:])
        if not m:
            raise ValueError("line %d: bad label at %r" % (lineno, s[i:i + 20]))
        name = m.group(1)
        i += m.end()
        val = []
        while True:
            if i >= len(s):
                raise ValueError("line %d: unterminated label value" % lineno)
            c = s[i]
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt not in ("\\", "\"", "n"):
                    raise ValueError("line %d: bad escape \\%s" % (lineno, nxt))
                val.append({"n": "\n"}.get(nxt, nxt))
                i += 2
                continue
            if c == "\"":
                i += 1
                break
            if c == "\n":
                raise ValueError("line %d: raw newline in label value" % lineno)
            val.append(c)
            i += 1
        if name in labels:
            raise ValueError("line %d: duplicate label %s" % (lineno, name))
        labels[name] = "".join(val)
        if s[i] == ",":
            i += 1
        elif s[i] != "}":
            raise ValueError("line %d: expected , or } after label %s" % (lineno, name))


def _value(v, lineno):
    if v in ("+Inf", "-Inf", "NaN"):
        return float(v.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.match(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\Z", v):
        raise ValueError("line %d: bad value %r" % (lineno, v))
    return float(v)


def _family_of(name, fams):
    for suf in ("_bucket", "_sum", "_count"):
        if name.endswith(suf) and name[:-len(suf)] in fams and \
                fams[name[:-len(suf)]]["type"] == "histogram":
            return name[:-len(suf)]
    return name


def parse(text):
    if text and not text.endswith("\n"):
        raise ValueError("text does not end with a newline")
    fams = {}
    series = set()
    for lineno, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                fam = parts[2]
                if not NAME.match(fam):
                    raise ValueError("line %d: bad metric name %r" % (lineno, fam))
                f = fams.setdefault(fam, {"type": None, "help": None, "samples": []})
                if parts[1] == "TYPE":
                    if f["type"] is not None:
                        raise ValueError("line %d: second TYPE for %s" % (lineno, fam))
                    if f["samples"]:
                        raise ValueError("line %d: TYPE after samples of %s" % (lineno, fam))
                    if len(parts) != 4 or parts[3] not in ("counter", "gauge", "histogram",
                                                           "summary", "untyped"):
                        raise ValueError("line %d: bad TYPE line" % lineno)
                    f["type"] = parts[3]
                else:
                    if f["help"] is not None:
                        raise ValueError("line %d: second HELP for %s" % (lineno, fam))
                    f["help"] = parts[3] if len(parts) == 4 else ""
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)", line)
        if not m:
            raise ValueError("line %d: bad sample line %r" % (lineno, line))
        name = m.group(1)
        rest = line[m.end():]
        labels = {}
        if rest.startswith("{"):
            labels, rest = _labels(rest, lineno)
        if not rest.startswith(" "):
            raise ValueError("line %d: no space before the value" % lineno)
        fields = rest.strip().split(" ")
        if len(fields) not in (1, 2):
            raise ValueError("line %d: trailing garbage" % lineno)
        value = _value(fields[0], lineno)
        fam = _family_of(name, fams)
        if fam not in fams or fams[fam]["type"] is None:
            raise ValueError("line %d: sample %s before its TYPE" % (lineno, name))
        key = (name, tuple(sorted(labels.items())))
        if key in series:
            raise ValueError("line %d: duplicate series %s%s" % (lineno, name, labels))
        series.add(key)
        if fams[fam]["type"] == "counter" and (value < 0 or math.isnan(value)):
            raise ValueError("line %d: negative counter" % lineno)
        fams[fam]["samples"].append((name, labels, value))
    for fam, f in fams.items():
        if f["type"] == "histogram":
            _check_hist(fam, f)
    return fams


def _check_hist(fam, f):
    groups = {}
    for name, labels, value in f["samples"]:
        base = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        g = groups.setdefault(base, {"buckets": [], "sum": None, "count": None})
        if name == fam + "_bucket":
            if "le" not in labels:
                raise ValueError("%s: bucket without le" % fam)
            g["buckets"].append((_value(labels["le"], 0), value))
        elif name == fam + "_sum":
            g["sum"] = value
        elif name == fam + "_count":
            g["count"] = value
        else:
            raise ValueError("%s: unexpected sample %s in a histogram" % (fam, name))
    for base, g in groups.items():
        b = g["buckets"]
        if not b or b[-1][0] != math.inf:
            raise ValueError("%s%s: no +Inf bucket last" % (fam, dict(base)))
        if any(b[i][0] >= b[i + 1][0] for i in range(len(b) - 1)):
            raise ValueError("%s%s: bucket bounds not increasing" % (fam, dict(base)))
        if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            raise ValueError("%s%s: buckets not cumulative" % (fam, dict(base)))
        if g["sum"] is None or g["count"] is None:
            raise ValueError("%s%s: _sum or _count missing" % (fam, dict(base)))
        if b[-1][1] != g["count"]:
            raise ValueError("%s%s: +Inf bucket %s != _count %s" % (fam, dict(base), b[-1][1],
                                                                   g["count"]))
