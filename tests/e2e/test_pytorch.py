"""Real PyTorch (Debian python3-torch 1.13, CPU): DataLoader workers are traced processes."""

import os
import unittest

from common import PYTHON, WORKLOADS, TraceTest, by_pid

SCRIPT = os.path.join(WORKLOADS, "dataloader_train.py")


class PyTorchDataLoaderTest(TraceTest):
    def test_each_dataloader_worker_gets_its_own_trace(self):
        proc = self.profile([PYTHON, SCRIPT, "--workers", "2"], timeout=300)
        self.assertIn("trained", proc.stdout)
        worker_pids = [int(p) for p in proc.stdout.split("workers ")[1].split("\n")[0].split()]
        rep = self.report()
        procs = by_pid(rep)
        main = [p for p in procs.values() if p["ppid"] not in procs][0]
        self.assertEqual(main["role"], "main")
        for pid in worker_pids:
            self.assertIn(pid, procs)
            worker = procs[pid]
            self.assertEqual(worker["ppid"], main["pid"])
            self.assertEqual(worker["role"], "DataLoader worker")
            # Workers end through os._exit: the exit record is still there.
            self.assertEqual(worker["exit"]["kind"], "exit")
            self.assertFalse(worker["truncated"])
        self.assertEqual(rep.get("warnings", []), [])

    def test_a_worker_killed_with_sigkill_leaves_a_readable_trace(self):
        proc = self.profile([PYTHON, SCRIPT, "--workers", "2", "--kill-worker", "--batches", "40"], timeout=300)
        self.assertIn("killing", proc.stdout)
        victim = int(proc.stdout.split("killing ")[1].split()[0])
        rep = self.report(extra=["--strict"])  # --strict: any damaged file would make this fail
        procs = by_pid(rep)
        self.assertIn(victim, procs)
        self.assertNotEqual(procs[victim]["exit"]["kind"], "exit")
        self.assertGreater(procs[victim]["events"], 0)
        self.assertEqual(procs[victim]["role"], "DataLoader worker")

    def test_without_follow_children_workers_are_not_traced(self):
        self.profile([PYTHON, SCRIPT, "--workers", "2", "--batches", "4"], follow=False)
        self.assertEqual(len(self.trace_files()), 1)


if __name__ == "__main__":
    unittest.main()
