#!/usr/bin/env python3
"""Golden outputs of `trainprof report` and `trainprof export` (tests/golden/README.md).

    run_golden.py --trainprof BIN --make-traces BIN [--update] [--keep DIR] [--env NAME=VALUE] [CASE...]

For each case of `make_golden_traces --list` (or the CASEs named): writes its input traces into a
temporary directory, runs the real trainprof on them from inside that directory (so every path it
prints is relative: `.`, `../out/...`), and compares each output byte for byte with
tests/golden/<case>/:

    report.txt            trainprof report .
    report.json           trainprof report --format json .
    csv/*.csv             trainprof report --format csv -o ../out/csv/ .
    export.json           trainprof export -o ../out/export.json .
    ...                   the commands in EXTRA (--by-process, --top/--full-names, --strict)
    status.txt            each command line, its exit status and its stderr

Nothing is normalised: the inputs are deterministic (fixed pids, hosts, clocks) and the commands
see only relative paths. On a mismatch it prints a unified diff per file (missing and extra files
too) and exits 1. --update writes the outputs into tests/golden/<case>/ instead (scripts/update-
golden), removing files and case folders that no longer exist. --keep DIR leaves the traces and
outputs in DIR. --env NAME=VALUE runs trainprof with that setting (a TRAINPROF_* knob that must not
change any output, such as the report's CUDA windows) and compares with the same files. Standard
library only.
"""

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

GOLDEN_DIR = os.path.dirname(os.path.abspath(__file__))
# More commands for some cases: (argv after `trainprof`, stdout file or None).
EXTRA = {
    "pytorch_dataloader": [(["report", "--by-process", "."], "report-by-process.txt"),
                           (["report", "--by-process", "--format", "csv", "-o", "../out/csv-by-process/", "."], None)],
    "cuda": [(["report", "--top", "2", "--full-names", "."], "report-top2-full-names.txt")],
    "cpu_samples": [(["report", "--by-phase", "--by-process", "--top", "4", "."], "report-by-phase-top4.txt"),
                    (["export", "--format", "folded", "-o", "-", "."], "folded.txt")],
    "nvtx_workload": [(["export", "--format", "folded", "-o", "-", "."], None)],
    "damaged": [(["report", "--strict", "-o", "/dev/null", "."], None)],
    "many_ranks": [(["report", "--by-rank", "."], "report-by-rank.txt"),
                   (["report", "--rank", "13,19", "."], "report-rank-13-19.txt"),
                   (["report", "--rank", "20", "."], None)],
    "two_hosts": [(["report", "--rank", "3", "."], "report-rank-3.txt")],
}
# Files of tests/golden/ that are not a case's.
NOT_CASES = {"README.md", "CMakeLists.txt", "make_golden_traces.cc", "run_golden.py", "__pycache__"}


def commands(case):
    """(argv after `trainprof`, stdout file or None) of each output, in order."""
    cmds = [
        (["report", "."], "report.txt"),
        (["report", "--format", "json", "."], "report.json"),
        (["report", "--format", "csv", "-o", "../out/csv/", "."], None),
        (["export", "-o", "../out/export.json", "."], None),
    ]
    return cmds + EXTRA.get(case, [])


# NAME=VALUE settings given with --env: the same outputs are expected with them.
EXTRA_ENV = {}
# --through-summaries together|each: every report is made from the summary files `trainprof
# summarize` wrote of the case's traces (all in one run, or one run per trace file), and must be the
# report of the traces, byte for byte.
THROUGH_SUMMARIES = None


def environment():
    """The caller's environment without TRAINPROF_* settings (none may change the output; a stray
    one must not either) and with a fixed locale and time zone; then the --env settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINPROF_")}
    env.update(LC_ALL="C", TZ="UTC")
    env.update(EXTRA_ENV)
    return env


def produce(case, trainprof, make_traces, work):
    """Writes the case's traces under work/traces, runs the commands; returns {name: bytes}."""
    traces = os.path.join(work, "traces")
    out = os.path.join(work, "out")
    os.makedirs(out)
    subprocess.run([make_traces, case, traces], check=True)
    summaries = os.path.join(work, "summaries")
    if THROUGH_SUMMARIES == "together":  # the reports from summary files, written as a map step would
        subprocess.run([trainprof, "summarize", "-o", summaries, "."], cwd=traces, env=environment(), check=True,
                       stderr=subprocess.DEVNULL)
    elif THROUGH_SUMMARIES == "each":  # one trace file at a time (xargs -P, a task per file)
        for name in sorted(os.listdir(traces)):
            subprocess.run([trainprof, "summarize", "-o", summaries, os.path.join(".", name)], cwd=traces,
                           env=environment(), check=True, stderr=subprocess.DEVNULL)
    outputs = {}
    status = []
    for argv, stdout_name in commands(case):
        cwd = summaries if THROUGH_SUMMARIES and argv[0] == "report" else traces
        p = subprocess.run([trainprof] + argv, cwd=cwd, env=environment(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        status.append(("$ trainprof %s\nexit %d\n" % (" ".join(argv), p.returncode)).encode() + p.stderr)
        if stdout_name:
            outputs[stdout_name] = p.stdout
        elif p.stdout:
            status.append(b"stdout:\n" + p.stdout)
    outputs["status.txt"] = b"".join(status)
    outputs.update(read_tree(out))
    return outputs


def read_tree(base):
    """{path relative to base: bytes} of every file below base ({} if it does not exist)."""
    files = {}
    for root, _, names in os.walk(base):
        for f in names:
            path = os.path.join(root, f)
            with open(path, "rb") as fh:
                files[os.path.relpath(path, base)] = fh.read()
    return files


def expected(case):
    """{name: bytes} of tests/golden/<case>/ ({} if the folder does not exist)."""
    return read_tree(os.path.join(GOLDEN_DIR, case))


def lines(data):
    return data.decode("utf-8", errors="backslashreplace").splitlines(keepends=True)


def compare(case, got, want):
    """Prints a unified diff per differing file; returns the number of differing files."""
    bad = 0
    for name in sorted(set(got) | set(want)):
        a, b = want.get(name), got.get(name)
        if a == b:
            continue
        bad += 1
        old = "tests/golden/%s/%s" % (case, name) if a is not None else "/dev/null"
        new = "actual/%s/%s" % (case, name) if b is not None else "/dev/null"
        diff = difflib.unified_diff(lines(a or b""), lines(b or b""), old, new)
        for line in diff:
            sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return bad


def write(case, got):
    base = os.path.join(GOLDEN_DIR, case)
    shutil.rmtree(base, ignore_errors=True)
    for name, data in got.items():
        path = os.path.join(base, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainprof", required=True)
    ap.add_argument("--make-traces", required=True)
    ap.add_argument("--update", action="store_true", help="rewrite tests/golden/<case>/ instead of comparing")
    ap.add_argument("--keep", help="leave the traces and outputs in this directory")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="run trainprof with this setting too: the outputs must stay the same "
                         "(e.g. TRAINPROF_CUDA_WINDOW_RECORDS=2)")
    ap.add_argument("--through-summaries", choices=["together", "each"],
                    help="report from `trainprof summarize`'s files of the traces, summarised in one run or one "
                         "run per file: the outputs must stay the same")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    global THROUGH_SUMMARIES
    THROUGH_SUMMARIES = args.through_summaries
    for setting in args.env:
        name, eq, value = setting.partition("=")
        if not eq or not name:
            ap.error("--env takes NAME=VALUE, not %r" % setting)
        EXTRA_ENV[name] = value
    if args.update and (EXTRA_ENV or THROUGH_SUMMARIES):
        ap.error("--update writes the outputs of the plain environment: no --env with it")
    args.trainprof = os.path.abspath(args.trainprof)  # the commands run in the trace directory
    args.make_traces = os.path.abspath(args.make_traces)

    all_cases = subprocess.run([args.make_traces, "--list"], check=True, stdout=subprocess.PIPE,
                               text=True).stdout.split()
    cases = args.cases or all_cases
    unknown = [c for c in cases if c not in all_cases]
    if unknown:
        sys.exit("run_golden: no case %s (make_golden_traces --list: %s)" % (", ".join(unknown), " ".join(all_cases)))
    stale = sorted(d for d in os.listdir(GOLDEN_DIR) if d not in NOT_CASES and d not in all_cases)

    work = args.keep or tempfile.mkdtemp(prefix="trainprof-golden-")
    failed = []
    try:
        for case in cases:
            case_work = os.path.join(work, case)
            shutil.rmtree(case_work, ignore_errors=True)
            got = produce(case, args.trainprof, args.make_traces, case_work)
            if args.update:
                write(case, got)
                continue
            bad = compare(case, got, expected(case))
            print("golden %s: %s" % (case, "ok (%d files)" % len(got) if not bad else "%d of %d files differ" % (bad, len(got))))
            if bad:
                failed.append(case)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    if args.update:
        for d in stale if not args.cases else []:
            shutil.rmtree(os.path.join(GOLDEN_DIR, d))
            print("golden: removed %s (no such case)" % d)
        return 0
    if stale and not args.cases:
        print("golden: tests/golden/ has folders of no case: %s (scripts/update-golden removes them)" % " ".join(stale))
        failed += stale
    if failed:
        print("golden: FAILED: %s. If the change is intended, run scripts/update-golden and commit the new "
              "outputs with it (the diff is part of the review)." % " ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
