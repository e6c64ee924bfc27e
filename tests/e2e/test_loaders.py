"""Training and evaluation kept apart, and the input pipeline per DataLoader, on an MNIST-style
program written as PyTorch's examples/mnist/main.py is (tests/workloads/mnist_style.py: train and
test loaders with 2 workers each, model.eval() + torch.no_grad() in test()), run under
--follow-children. The program's own counts are the truth."""

import json
import os
import re
import shutil
import tempfile
import unittest

from common import PYTHON, WORKLOADS, TraceTest, by_pid, ranges

MNIST = os.path.join(WORKLOADS, "mnist_style.py")


class LoadersTest(TraceTest):
    @classmethod
    def setUpClass(cls):
        cls.counts_dir = tempfile.mkdtemp(prefix="trainprof-e2e-counts-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.counts_dir, ignore_errors=True)

    def run_mnist(self, epochs=2, extra=()):
        counts_path = os.path.join(self.counts_dir, "counts.json")
        self.profile([PYTHON, MNIST, "--epochs", str(epochs), "--counts", counts_path] + list(extra))
        with open(counts_path) as f:
            counts = json.load(f)
        rep = self.report()
        procs = by_pid(rep)
        main = [p for p in procs.values() if p["ppid"] not in procs][0]
        return rep, main, procs, counts

    def test_mnist_style_train_and_test_loaders_and_eval_forward(self):
        epochs = 2
        rep, main, procs, counts = self.run_mnist(epochs)
        # Training and evaluation forward calls are separate rows, with the program's own counts.
        rows = ranges(main["nvtx_ranges"])
        self.assertEqual(rows["trainprof:Net.forward"]["calls"], counts["train_forward"])
        self.assertEqual(rows["trainprof:Net.forward [eval]"]["calls"], counts["eval_forward"])
        self.assertEqual(counts["eval_forward"], 6)  # 96 test items in batches of 32, twice
        merged = {r["name"]: r for r in rep["nvtx_ranges"]}
        self.assertEqual(merged["trainprof:Net.forward [eval]"]["calls"], counts["eval_forward"])

        # Step statistics: the test batches are evaluation steps, not training steps.
        b = rep["bottleneck"]
        self.assertEqual(b["status"], "ok")
        self.assertEqual(len(b["processes"]), 1)
        p = b["processes"][0]
        self.assertEqual(p["steps"], counts["train_batches"])
        self.assertEqual(p["eval_steps"], counts["test_batches"])

        # One entry per DataLoader, the training one first.
        loaders = p["input"]["loaders"]
        self.assertEqual(len(loaders), 2, loaders)
        train, test = loaders
        self.assertEqual(train["dataset"], "TensorDataset")
        self.assertEqual(train["batch_size"], 16)
        self.assertEqual(train["num_workers"], 2)
        self.assertFalse(train["persistent_workers"])
        self.assertFalse(train["pin_memory"])
        self.assertTrue(train["feeds_training"])
        # Each epoch: its batches and the __next__ that raised StopIteration.
        self.assertEqual(train["waits"], counts["train_batches"] + epochs)
        self.assertEqual(train["worker_processes"], 2 * epochs)  # re-created every epoch
        self.assertEqual(train["fetch"]["count"], counts["train_batches"])
        self.assertEqual(train["fetch"]["getitem_calls"], 160 * epochs)
        self.assertEqual(test["dataset"], "Digits")
        self.assertEqual(test["batch_size"], 32)
        self.assertEqual(test["num_workers"], 2)
        # Asked for, not in effect: no CUDA here, so PyTorch pins nothing and the report says so.
        self.assertFalse(test["pin_memory"])
        self.assertFalse(test["feeds_training"])
        self.assertEqual(test["waits"], counts["test_batches"] + epochs)
        self.assertEqual(test["worker_processes"], 2 * epochs)
        self.assertEqual(test["fetch"]["count"], counts["test_batches"])
        self.assertEqual(test["fetch"]["getitem_calls"], 96 * epochs)
        self.assertNotEqual(train["id"], test["id"])

        # The pipeline of the training steps holds the train loader's workers only.
        workers = [q for q in procs.values() if q["role"] == "DataLoader worker"]
        self.assertEqual(len(workers), 4 * epochs)
        self.assertEqual(p["input"]["worker_processes"], 2 * epochs)
        self.assertEqual(p["input"]["concurrent_workers"], 2)
        self.assertEqual(p["input"]["fetch"]["count"], counts["train_batches"])

    def test_workers_whose_files_were_not_given_are_said_so(self):
        """The report of the main process's file alone: its DataLoader workers are shown as not
        recorded, and one warning says their files lie beside it, not given (issue 37, from a
        new-user trial: the legend's reasons did not include it). With the directory, none."""
        rep, main, procs, counts = self.run_mnist(1)
        workers = [q for q in procs.values() if q["role"] == "DataLoader worker"]
        self.assertEqual(len(workers), 4)
        alone = self.report(os.path.join(self.out, "pid-%d.trace" % main["pid"]))
        shown = {q["pid"] for q in alone["processes"] if q["recorded"] == "no"}
        # The workers, and any other child that left a file (PyTorch 2.x's own helpers do).
        with_files = {pid for pid in shown if os.path.exists(os.path.join(self.out, "pid-%d.trace" % pid))}
        self.assertLessEqual({q["pid"] for q in workers}, with_files)
        said = [w for w in alone["warnings"] if "left trace files that were not given" in w]
        self.assertEqual(len(said), 1, alone["warnings"])
        self.assertTrue(said[0].startswith("%d processes shown as (not recorded)" % len(with_files)), said[0])
        named = {int(x) for x in re.findall(r"pid-(\d+)\.trace", said[0])}
        self.assertEqual(len(named), 3, said[0])  # the first 3, then "+N more"
        self.assertLessEqual(named, with_files)
        self.assertIn("+%d more" % (len(with_files) - 3), said[0])
        self.assertFalse([w for w in rep["warnings"] if "not given" in w], rep["warnings"])

    def test_spawned_workers_are_tied_to_their_loader(self):
        # Spawned workers cannot inherit the loader id: tied by start time, dataset and num_workers.
        rep, main, procs, counts = self.run_mnist(1, extra=["--start-method", "spawn"])
        p = rep["bottleneck"]["processes"][0]
        train, test = p["input"]["loaders"]
        self.assertEqual((train["dataset"], train["feeds_training"], train["worker_processes"]), ("TensorDataset", True, 2))
        self.assertEqual((test["dataset"], test["feeds_training"], test["worker_processes"]), ("Digits", False, 2))
        self.assertEqual(train["fetch"]["count"], counts["train_batches"])
        self.assertEqual(test["fetch"]["count"], counts["test_batches"])
        self.assertEqual(p["input"]["worker_processes"], 2)

    def test_persistent_test_workers_are_not_the_training_pipeline(self):
        # The test loader's persistent workers live through the next epochs' training steps: they
        # were counted as training workers, and their fetches mixed in.
        rep, main, procs, counts = self.run_mnist(2, extra=["--persistent-workers"])
        p = rep["bottleneck"]["processes"][0]
        self.assertEqual(p["input"]["concurrent_workers"], 2)
        self.assertEqual(p["input"]["worker_processes"], 2)
        self.assertEqual(p["input"]["other_workers"], 2)
        self.assertEqual(p["input"]["fetch"]["count"], counts["train_batches"])
        train, test = p["input"]["loaders"]
        self.assertTrue(train["persistent_workers"])
        self.assertEqual((train["worker_processes"], test["worker_processes"]), (2, 2))


if __name__ == "__main__":
    unittest.main()
