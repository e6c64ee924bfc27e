"""Checks what is written from the record schema (format/trainprof/records.def) against it.

    check_schema.py doc TOOL DOC          the record table of DOC (between the records:begin and
                                          records:end markers) is TOOL's markdown, to the letter
    check_schema.py decoder TOOL DECODER  DECODER's LAYOUT table (tests/e2e/trace_decode.py, an
                                          independent decoder) has every record kind of the schema
                                          with its name and fields, in order, encodings included

TOOL is trainprof_record_schema. Exit status 1 with a diff / the differences on a mismatch.
"""

import difflib
import importlib.util
import json
import subprocess
import sys

BEGIN = "<!-- records:begin (generated from format/trainprof/records.def by scripts/update-trace-format-doc) -->"
END = "<!-- records:end -->"


def run(tool, what):
    return subprocess.run([tool, what], check=True, capture_output=True, text=True).stdout


def doc_table(path):
    text = open(path, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        raise SystemExit("trainprof: %s: no record table markers (%s ... %s)" % (path, BEGIN, END))
    return text, text.index(BEGIN) + len(BEGIN) + 1, text.index(END)


def check_doc(tool, path):
    text, a, b = doc_table(path)
    want, have = run(tool, "markdown"), text[a:b]
    if want == have:
        return 0
    sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                               path + " (as it is)", "the schema (scripts/update-trace-format-doc)"))
    return 1


def normalise(fields):
    """trace_decode.py's field names as (name, encoding) pairs: "dt" is the dt, "zs"/"ze" and a
    "z" prefix (zcode) are zigzag, "length" then "bytes" is one string field."""
    out = []
    for f in fields:
        if f == "dt":
            out.append(("dt", "dt"))
        elif f in ("zs", "ze"):
            out.append((f, "z"))
        elif f == "zcode":
            out.append(("code", "z"))
        elif f == "bytes" and out and out[-1] == ("length", "v"):
            out[-1] = ("bytes", "s")
        else:
            out.append((f, "v"))
    return out


def check_decoder(tool, path):
    spec = importlib.util.spec_from_file_location("trace_decode", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    schema = json.loads(run(tool, "json"))
    problems = []
    want = {r["tag"]: r for r in schema}
    for tag in sorted(set(want) | set(mod.LAYOUT)):
        if tag not in mod.LAYOUT:
            problems.append("tag %d (%s): in the schema, not in LAYOUT" % (tag, want[tag]["name"]))
            continue
        if tag not in want:
            problems.append("tag %d (%s): in LAYOUT, not in the schema" % (tag, mod.LAYOUT[tag][0]))
            continue
        name, fields = mod.LAYOUT[tag]
        r = want[tag]
        if name != r["name"]:
            problems.append("tag %d: LAYOUT names it %s, the schema %s" % (tag, name, r["name"]))
        have = normalise(fields)
        schema_fields = [(f["name"], f["encoding"]) for f in r["fields"]]
        if have != schema_fields:
            problems.append("tag %d (%s): LAYOUT fields %s, the schema's %s" % (tag, r["name"], have, schema_fields))
    for p in problems:
        print(p)
    return 1 if problems else 0


def main(argv):
    if len(argv) != 4 or argv[1] not in ("doc", "decoder"):
        print(__doc__, file=sys.stderr)
        return 2
    return (check_doc if argv[1] == "doc" else check_decoder)(argv[2], argv[3])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
