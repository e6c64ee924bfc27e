"""trainprof-dask: `trainprof summarize` mapped over a Dask cluster, then one `trainprof report`.

    trainprof-dask (--scheduler ADDRESS | --scheduler-file FILE | --local N) [--node-local]
                   [--trainprof PATH] [--summaries DIR] [--chunk N] PATH... [-- REPORT-OPTIONS...]

PATH...: trace files or directories of them, as `trainprof report` takes them. On a shared file
system the client lists the files and each task summarises --chunk of them on a worker. With
--node-local each path is a directory on every node (the -o of `trainprof run` on node-local
disks): one task per host summarises that host's files there. The summaries come back to the
client, are written to --summaries (default: a temporary directory) and merged by
`trainprof report [REPORT-OPTIONS] DIR`, whose output and exit status are the driver's.
"""

import argparse
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile

TRACE_SUFFIXES = (".trace", ".pt.trace.json", ".pt.trace.json.gz")


def find_traces(paths):
    """The trace files of `paths` (a file as given; a directory searched as `trainprof report` searches
    one), each with its folder under the directory it was found in ("" at the top or given itself)."""
    found = {}
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, files in os.walk(p):
                for f in files:
                    if f.endswith(TRACE_SUFFIXES):
                        found.setdefault(os.path.join(root, f), os.path.relpath(root, p) if root != p else "")
        else:
            found.setdefault(p, "")
    return sorted(found.items())


def summarize(trainprof, paths):
    """Runs `trainprof summarize` on `paths` here (a Dask task): ({summary path under the output, as
    summarize laid it out: bytes}, its stderr)."""
    out = tempfile.mkdtemp(prefix="trainprof-dask-")
    try:
        p = subprocess.run([trainprof, "summarize", "-o", out, *paths], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("trainprof summarize on %s failed (exit %d): %s" % (socket.gethostname(), p.returncode,
                                                                                 p.stderr.strip()))
        summaries = {}
        for root, _dirs, files in os.walk(out):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    summaries[os.path.relpath(os.path.join(root, name), out)] = f.read()
        return summaries, p.stderr
    finally:
        shutil.rmtree(out, ignore_errors=True)


def default_trainprof():
    """The `trainprof` next to this driver's launcher (bin/), else the one on PATH."""
    here = os.environ.get("TRAINPROF_DASK_BIN_DIR", "")
    candidate = os.path.join(here, "trainprof") if here else ""
    return candidate if candidate and os.access(candidate, os.X_OK) else (shutil.which("trainprof") or "trainprof")


def summarize_on_cluster(client, paths, trainprof, node_local=False, chunk=8, progress=False):
    """Maps `trainprof summarize` over `paths` on the cluster of `client`; returns the summaries as
    {name: bytes} and the tasks' warnings (lines). A name two tasks both wrote (pid-7.summary of two
    hosts) is kept apart as pid-7.2.summary, as `trainprof summarize` names a second file."""
    from dask.distributed import progress as dask_progress  # noqa: WPS433 (imported with Dask only)

    if node_local:
        # One task per host, pinned to one of its workers: each summarises that host's files.
        hosts = {}
        for address, info in sorted(client.scheduler_info()["workers"].items()):
            hosts.setdefault(info.get("host", address), address)
        futures = [client.submit(summarize, trainprof, list(paths), workers=[address], allow_other_workers=False,
                                 pure=False, key="trainprof-summarize-%s" % host)
                   for host, address in sorted(hosts.items())]
    else:
        files = find_traces(paths)
        if not files:
            raise SystemExit("trainprof-dask: no trace files in %s" % ", ".join(paths))
        # Chunks of one folder each, its summaries put under that folder: the report then finds them in
        # the order of the traces (and names two folders' pid-7.summary apart).
        by_folder = {}
        for path, folder in files:
            by_folder.setdefault(folder, []).append(path)
        groups = [(folder, paths_here[i:i + chunk]) for folder, paths_here in sorted(by_folder.items())
                  for i in range(0, len(paths_here), chunk)]
        futures = [client.submit(summarize, trainprof, g, pure=False, key="trainprof-summarize-%d" % i)
                   for i, (_folder, g) in enumerate(groups)]
    if progress:
        dask_progress(futures, notebook=False)
        sys.stderr.write("\n")
    folders = [folder for folder, _g in groups] if not node_local else [""] * len(futures)
    summaries, warnings = {}, []
    for folder, (summaries_here, stderr) in zip(folders, client.gather(futures)):
        for line in stderr.splitlines():
            if line.startswith("trainprof: warning:"):
                warnings.append(line)
        for name, data in summaries_here.items():
            name = os.path.join(folder, name) if folder else name
            unique, k = name, 2
            while unique in summaries:
                unique = "%s.%d.summary" % (name[: -len(".summary")], k)
                k += 1
            summaries[unique] = data
    return summaries, warnings


def parse(argv):
    if "--" in argv:
        cut = argv.index("--")
        argv, report_options = argv[:cut], argv[cut + 1:]
    else:
        report_options = []
    ap = argparse.ArgumentParser(
        prog="trainprof-dask", description=__doc__.splitlines()[0],
        usage="trainprof-dask (--scheduler ADDRESS | --scheduler-file FILE | --local N) [--node-local] "
              "[--trainprof PATH] [--summaries DIR] [--chunk N] PATH... [-- REPORT-OPTIONS...]",
        epilog="REPORT-OPTIONS after -- go to `trainprof report` (--format json, -o FILE, --rank R, ...).")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (tcp://host:8786)")
    where.add_argument("--scheduler-file", metavar="FILE", help="the scheduler file a Dask cluster wrote "
                       "(dask-jobqueue, `dask scheduler --scheduler-file`)")
    where.add_argument("--local", metavar="N", type=int, help="a LocalCluster of N worker processes on this machine")
    ap.add_argument("--node-local", action="store_true",
                    help="each PATH is a directory on every node: one task per host summarises its files there")
    ap.add_argument("--trainprof", default=default_trainprof(), help="the trainprof binary on the workers "
                    "(default: the one next to this driver)")
    ap.add_argument("--summaries", metavar="DIR", help="keep the summary files here (default: a temporary directory)")
    ap.add_argument("--chunk", type=int, default=8, metavar="N", help="trace files per task on a shared file system")
    ap.add_argument("paths", nargs="+", metavar="PATH")
    args = ap.parse_args(argv)
    if not (os.path.isfile(args.trainprof) and os.access(args.trainprof, os.X_OK)):
        found = shutil.which(args.trainprof)
        if not found:
            ap.error("--trainprof %s: no such executable" % args.trainprof)
        args.trainprof = found
    if args.summaries and os.path.exists(args.summaries) and (not os.path.isdir(args.summaries) or os.listdir(args.summaries)):
        ap.error("--summaries %s: %s (its summaries would be merged with this run's)"
                 % (args.summaries, "not a directory" if not os.path.isdir(args.summaries) else "not empty"))
    if args.scheduler_file and not os.path.isfile(args.scheduler_file):
        ap.error("--scheduler-file %s: no such file (the cluster writes it when its scheduler starts)" % args.scheduler_file)
    if args.chunk < 1:
        ap.error("--chunk must be 1 or more")
    if args.local is not None and args.local < 1:
        ap.error("--local must be 1 or more workers")
    return args, report_options


def main(argv=None):
    args, report_options = parse(sys.argv[1:] if argv is None else argv)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        sys.stderr.write("trainprof-dask: needs dask.distributed (pip install 'dask[distributed]')\n")
        return 2
    show_progress = sys.stderr.isatty()
    cluster = None
    try:
        if args.local is not None:
            # Its workers' logs stay quiet: a failing task is said once, below.
            cluster = LocalCluster(n_workers=args.local, threads_per_worker=1, processes=True, dashboard_address=":0",
                                   silence_logs=logging.CRITICAL)
            client = Client(cluster)
        elif args.scheduler_file:
            client = Client(scheduler_file=args.scheduler_file, timeout="30s")
        else:
            client = Client(args.scheduler, timeout="30s")
    except (OSError, TimeoutError) as e:
        sys.stderr.write("trainprof-dask: error: cannot reach the Dask cluster (%s): %s\n"
                         % (args.scheduler or args.scheduler_file or "LocalCluster", e))
        if cluster is not None:
            cluster.close()
        return 2
    keep = args.summaries
    out = keep or tempfile.mkdtemp(prefix="trainprof-summaries-")
    try:
        paths = [os.path.abspath(p) for p in args.paths]
        try:
            summaries, warnings = summarize_on_cluster(client, paths, args.trainprof, args.node_local, args.chunk,
                                                       show_progress)
        except RuntimeError as e:  # a task's trainprof summarize failed: its own message says why
            sys.stderr.write("trainprof-dask: error: %s\n" % e)
            return 2
        os.makedirs(out, mode=0o700, exist_ok=True)
        for name, data in summaries.items():
            os.makedirs(os.path.dirname(os.path.join(out, name)), mode=0o700, exist_ok=True)
            fd = os.open(os.path.join(out, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        sys.stderr.write("trainprof-dask: %d summary files from %d workers%s\n"
                         % (len(summaries), len(client.scheduler_info()["workers"]),
                            " kept in %s" % out if keep else ""))
        report = subprocess.run([args.trainprof, "report", *report_options, out], stderr=subprocess.PIPE, text=True)
        # The tasks' warnings the report does not say again (a damaged file's it does), then its own.
        for line in warnings:
            if line not in report.stderr:
                sys.stderr.write(line + "\n")
        sys.stderr.write(report.stderr)
        return report.returncode
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        if not keep:
            shutil.rmtree(out, ignore_errors=True)
