"""trainprof-dask (cluster/): `trainprof summarize` mapped over a real dask.distributed LocalCluster
with two worker processes, then one `trainprof report`, gives the report of the traces, byte for
byte; with files on a shared file system (in chunks, so that both workers get tasks) and with
--node-local (one task per host). Needs dask[distributed] in .venv (scripts/setup)."""

import os
import shutil
import subprocess
import tempfile
import unittest

from common import MODERN_PYTHON, NO_VENV, TRAINPROF


def has_dask():
    if not os.path.exists(MODERN_PYTHON):
        return False
    return subprocess.run([MODERN_PYTHON, "-c", "import dask.distributed"], capture_output=True).returncode == 0


BINARY_DIR = os.path.dirname(os.path.realpath(shutil.which(TRAINPROF) or TRAINPROF))
DRIVER = os.path.join(BINARY_DIR, "trainprof-dask")
MAKE_TRACES = os.path.join(BINARY_DIR, "..", "tests", "golden", "make_golden_traces")


@unittest.skipUnless(has_dask(), NO_VENV % "dask.distributed in .venv")
class DaskTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="trainprof-dask-test-")
        self.addCleanup(shutil.rmtree, self.work, True)

    def traces(self, case):
        path = os.path.join(self.work, case)
        subprocess.run([MAKE_TRACES, case, path], check=True)
        return path

    def driver(self, *argv):
        return subprocess.run([MODERN_PYTHON, DRIVER, "--trainprof", os.path.realpath(shutil.which(TRAINPROF) or TRAINPROF),
                               *argv], capture_output=True, text=True, timeout=300)

    def report(self, *argv):
        p = subprocess.run([TRAINPROF, "report", *argv], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_shared_file_system_two_workers(self):
        ranks = self.traces("many_ranks")
        files = sorted(f for f in os.listdir(ranks) if f.endswith(".trace"))
        self.assertGreater(len(files), 8)
        kept = os.path.join(self.work, "summaries")
        p = self.driver("--local", "2", "--chunk", "3", "--summaries", kept, ranks, "--", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("trainprof-dask: %d summary files from 2 workers" % len(files), p.stderr)
        self.assertEqual(sorted(os.listdir(kept)), sorted(f.replace(".trace", ".summary") for f in files))
        self.assertEqual(p.stdout, self.report("--format", "json", ranks))

    def test_node_local_directories(self):
        hosts = self.traces("two_hosts")  # its two simulated hosts' files in one directory: one host here
        p = self.driver("--local", "2", "--node-local", hosts, "--", "--rank", "3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("trainprof-dask: 6 summary files", p.stderr)
        self.assertEqual(p.stdout, self.report("--rank", "3", hosts))

    def test_a_failing_task_is_said(self):
        p = self.driver("--local", "1", os.path.join(self.work, "no-such-dir", "pid-1.trace"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("trainprof summarize on", p.stderr)
        self.assertIn("no-such-dir", p.stderr)
