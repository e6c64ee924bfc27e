"""The installed prefix (`cmake --install`) and the Debian package (`cpack -G DEB`) work on their own:
moved elsewhere, they profile a PyTorch program with DataLoader workers and report it."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from common import PYTHON, TraceTest, by_pid, ranges

BUILD_DIR = os.environ.get("TRAINPROF_BUILD_DIR", "")
CMAKE = os.environ.get("TRAINPROF_CMAKE", "cmake")
CPACK = os.environ.get("TRAINPROF_CPACK", "cpack")

# A training script as users write it: a Dataset, a DataLoader with worker processes, a model and
# an SGD loop. It prints where trainprof's pieces came from (the library, the shim).
PROGRAM = r'''
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 48

    def __getitem__(self, i):
        x = torch.full((4,), float(i) / 48)
        return x, x.sum() ** 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.layers(x).squeeze(1)


def main():
    loader = DataLoader(Squares(), batch_size=8, num_workers=2)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    import _trainprof
    print("library", os.environ.get("TRAINPROF_LIB"))
    print("shim", os.path.dirname(os.path.dirname(os.path.abspath(_trainprof.__file__))))


if __name__ == "__main__":
    main()
'''
BATCHES = 6  # 48 items, batch size 8


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=240, **kwargs)


class InstallTest(TraceTest):
    def setUp(self):
        super().setUp()
        if not BUILD_DIR or not os.path.isfile(os.path.join(BUILD_DIR, "cmake_install.cmake")):
            self.skipTest("TRAINPROF_BUILD_DIR (set by ctest) is not a configured build folder")
        self.tmp = tempfile.mkdtemp(prefix="trainprof-e2e-install-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def env(self):
        env = self.child_env()
        env.pop("TRAINPROF_INJECT_LIB", None)  # the library must come from the prefix
        return env

    def check(self, proc, what):
        self.assertEqual(proc.returncode, 0, "%s exited %d\nstdout:\n%s\nstderr:\n%s"
                         % (what, proc.returncode, proc.stdout, proc.stderr))
        return proc

    def files_under(self, root):
        return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)

    def test_moved_prefix_profiles_a_dataloader_training_run(self):
        first = os.path.join(self.tmp, "prefix")
        self.check(run([CMAKE, "--install", BUILD_DIR, "--prefix", first]), "cmake --install")
        files = self.files_under(first)
        self.assertIn("bin/trainprof", files)
        libs = [f for f in files if f.endswith("/trainprof/libtrainprof_inject.so")]
        self.assertEqual(len(libs), 1, files)
        self.assertTrue(libs[0].startswith("lib"), libs)
        self.assertIn("share/trainprof/python/sitecustomize.py", files)
        self.assertIn("share/trainprof/python/_trainprof/torch_phases.py", files)
        self.assertIn("share/doc/trainprof/README.md", files)
        self.assertIn("share/doc/trainprof/docs/cli.md", files)
        self.assertIn("bin/trainprof-dask", files)  # the Dask driver (cluster/) next to trainprof
        self.assertIn("share/trainprof/cluster/trainprof_dask/driver.py", files)
        # Nothing else: no tests, no GoogleTest, no benchmarks. (bin/trainprof covers bin/trainprof-dask.)
        pieces = ("bin/trainprof", os.path.dirname(libs[0]) + "/", "share/trainprof/python/", "share/doc/trainprof/",
                  "share/trainprof/cluster/trainprof_dask/")
        self.assertEqual([f for f in files if not f.startswith(pieces)], [])

        moved = os.path.join(self.tmp, "moved", "elsewhere")
        os.makedirs(os.path.dirname(moved))
        self.check(run(["mv", first, moved]), "mv")
        trainprof = os.path.join(moved, "bin", "trainprof")
        # The moved driver finds its package beside it (its help needs no Dask).
        dask_help = self.check(run([PYTHON, os.path.join(moved, "bin", "trainprof-dask"), "--help"]), "trainprof-dask --help")
        self.assertIn("--scheduler-file", dask_help.stdout)
        work = os.path.join(self.tmp, "work")
        os.makedirs(work)
        with open(os.path.join(work, "prog.py"), "w") as f:
            f.write(PROGRAM)
        out = os.path.join(self.tmp, "out")
        proc = self.check(run([trainprof, "run", "-o", out, "--follow-children", "--", PYTHON, "prog.py"],
                              cwd=work, env=self.env()), "trainprof run")
        where = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
        self.assertEqual(where.get("library"), os.path.join(moved, libs[0]), proc.stdout)
        self.assertEqual(where.get("shim"), os.path.join(moved, "share", "trainprof", "python"), proc.stdout)

        rep = json.loads(self.check(run([trainprof, "report", "--format", "json", out], env=self.env()),
                                    "trainprof report").stdout)
        procs = by_pid(rep)
        main = [p for p in procs.values() if p["ppid"] not in procs][0]
        workers = [p for p in procs.values() if p["role"] == "DataLoader worker"]
        self.assertEqual(main["role"], "main")
        self.assertEqual(len(workers), 2)
        self.assertTrue(all(w["ppid"] == main["pid"] and w["exit"]["kind"] == "exit" for w in workers))
        names = ranges(main["nvtx_ranges"])
        self.assertEqual(names["trainprof:Net.forward"]["calls"], BATCHES)
        self.assertEqual(names["trainprof:Tensor.backward"]["calls"], BATCHES)
        self.assertEqual(names["trainprof:Optimizer.step#SGD.step"]["calls"], BATCHES)
        fetches = sum(ranges(w["nvtx_ranges"])["trainprof:_MapDatasetFetcher.fetch"]["calls"] for w in workers)
        self.assertEqual(fetches, BATCHES)
        [training] = rep["bottleneck"]["processes"]
        self.assertEqual(training["steps"], BATCHES)
        self.assertEqual(training["data_waits"], BATCHES + 1)  # with the StopIteration at the end
        self.assertEqual(training["input"]["worker_processes"], 2)
        for part in ("data_wait", "forward", "backward", "optimizer"):
            self.assertGreater(training["parts"][part]["total_ns"], 0, part)

        text = self.check(run([trainprof, "report", out], env=self.env()), "trainprof report").stdout
        self.assertEqual(text.count("DataLoader worker  python3 prog.py"), 2, text)  # the Processes table
        self.assertIn("6 training steps", text)
        self.assertIn("trainprof:Optimizer.step#SGD.step", text)

    @unittest.skipUnless(shutil.which(CPACK) and shutil.which("dpkg-deb"), "no cpack or dpkg-deb on this machine")
    def test_debian_package_holds_the_prefix_and_runs_extracted(self):
        config = os.path.join(BUILD_DIR, "CPackConfig.cmake")
        packages = os.path.join(self.tmp, "packages")
        self.check(run([CPACK, "-G", "DEB", "--config", config, "-B", packages]), "cpack -G DEB")
        [deb] = [f for f in os.listdir(packages) if f.endswith(".deb")]
        self.assertRegex(deb, r"^trainprof_\d+\.\d+\.\d+_[a-z0-9]+\.deb$")
        info = self.check(run(["dpkg-deb", "--field", os.path.join(packages, deb),
                               "Package", "Version", "Maintainer", "Depends", "Recommends"]), "dpkg-deb --field")
        fields = dict(line.split(": ", 1) for line in info.stdout.splitlines())
        self.assertEqual(fields["Package"], "trainprof")
        self.assertIn("libstdc++6", fields["Depends"])
        self.assertIn("zlib1g", fields["Depends"])
        self.assertIn("python3", fields["Recommends"])
        self.assertTrue(fields["Maintainer"])
        description = self.check(run(["dpkg-deb", "--field", os.path.join(packages, deb), "Description"]),
                                 "dpkg-deb --field").stdout
        self.assertIn("profiler", description.splitlines()[0])
        self.assertNotIn(";", description)  # a CMake list in the long description

        root = os.path.join(self.tmp, "root")
        self.check(run(["dpkg-deb", "-x", os.path.join(packages, deb), root]), "dpkg-deb -x")
        files = self.files_under(root)
        self.assertIn("usr/bin/trainprof", files)
        # usr/lib/trainprof/ (GNUInstallDirs: lib/<multiarch>/ when the build was configured for /usr)
        self.assertEqual(len([f for f in files if f.startswith("usr/lib")
                              and f.endswith("/trainprof/libtrainprof_inject.so")]), 1, files)
        self.assertIn("usr/share/trainprof/python/sitecustomize.py", files)
        self.assertIn("usr/share/doc/trainprof/README.md", files)
        self.assertIn("usr/share/doc/trainprof/docs/trace-format.md", files)
        trainprof = os.path.join(root, "usr", "bin", "trainprof")
        version = self.check(run([trainprof, "--version"]), "trainprof --version").stdout
        self.assertIn(fields["Version"], version)
        # `run` finds the extracted library (it fails, status 1, when it finds none).
        out = os.path.join(self.tmp, "out")
        self.check(run([trainprof, "run", "-o", out, "--", "true"], env=self.env()), "trainprof run -- true")
        self.assertEqual(len([f for f in os.listdir(out) if f.endswith(".trace")]), 1)


if __name__ == "__main__":
    unittest.main()
