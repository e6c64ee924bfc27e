#!/usr/bin/env python3
"""README.md's measured figures come from docs/performance.md: check_readme_figures.py README PERF

README.md's cost paragraph (between the lines `<!-- figures: docs/performance.md -->` and
`<!-- end of figures -->`) may state only figures that docs/performance.md's current results table
states too (the table under the first "### At the end of" heading, which a new measurement
replaces). A figure is a number with a unit: 29.5 ns, 0.83×, 4.40 B, +25.7%, 8.39 s, 69 MiB,
100M. Each must occur, written the same way, in that table; a figure README keeps after the table
moved on fails here, naming it, as does a time per call or a memory figure in README's prose
outside the block that the table does not state. Exit 0: all found; 1: the figures not found, listed."""

import re
import sys

FIGURE = re.compile(r"(?<![\w.])[+−-]?\d+(?:\.\d+)?(?:×|%|\s?(?:ns|µs|ms|s|B|bytes|KiB|MiB|GiB|kB|MB|GB|M)(?![\w]))")
BEGIN, END = "<!-- figures: docs/performance.md -->", "<!-- end of figures -->"


def figures(text):
    """The figures of `text`, in order, as written (a no-break or plain space before the unit)."""
    return [re.sub(r"\s", " ", m.group(0)) for m in FIGURE.finditer(text)]


def current_table(perf):
    """docs/performance.md's current results: from the first '### At the end of' to the next heading."""
    start = perf.find("\n### At the end of")
    if start < 0:
        sys.exit("check_readme_figures: docs/performance.md has no '### At the end of' results section")
    end = perf.find("\n#", start + 1)
    return perf[start:end if end > 0 else len(perf)]


def main(readme_path, perf_path):
    readme = open(readme_path, encoding="utf-8").read()
    perf = open(perf_path, encoding="utf-8").read()
    b, e = readme.find(BEGIN), readme.find(END)
    if b < 0 or e < b:
        sys.exit("check_readme_figures: %s has no %s ... %s block around its figures" % (readme_path, BEGIN, END))
    quoted = figures(readme[b + len(BEGIN):e])
    if not quoted:
        sys.exit("check_readme_figures: no figure between the markers of %s" % readme_path)
    known = set(figures(current_table(perf)))
    missing = [f for f in quoted if f not in known]
    # Outside the block, README's prose (not the example output in ``` blocks) states no cost of
    # the kinds the table measures: nanoseconds per call, memory.
    outside = re.sub(r"```.*?```", "", readme[:b] + readme[e:], flags=re.S)
    stray = [f for f in figures(outside) if re.search(r"(ns|KiB|MiB|GiB|MB|GB)$", f) and f not in known]
    for f in missing:
        print("README.md states %r; docs/performance.md's current results do not" % f)
    for f in stray:
        print("README.md states %r outside its figures block, and docs/performance.md's current results do not" % f)
    if missing or stray:
        return 1
    print("README.md: %d figures, each in docs/performance.md's current results" % len(quoted))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
