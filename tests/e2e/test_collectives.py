"""Collectives in the verdict, on a tutorial-style DDP script (tests/workloads/ddp_logging_allreduce.py:
gloo, torch.multiprocessing.spawn, a logging dist.all_reduce after the optimizer step, rank 1 ~20 ms
slower per forward): the straggler is found at DDP's gradient all-reduce (arrival "ddp_backward"), and
DDP's collective time is reported unknown, not 0% (docs/analysis.md, "Collectives")."""

import os
import shutil
import unittest

from common import PYTHON, WORKLOADS, TraceTest, free_port

SCRIPT = os.path.join(WORKLOADS, "ddp_logging_allreduce.py")
STEPS = 12


class DdpLoggingAllReduceTest(TraceTest):
    def run_ddp(self):
        # As test_bottleneck.profile_ddp: PyTorch 2.x's gloo now and then aborts a rank as it tears
        # down, after the steps; that failure, and only it, is retried once.
        args = ["run", "-o", self.out, "--follow-children", "--", PYTHON, SCRIPT, str(free_port()), str(STEPS)]
        proc = self.run_trainprof(args, timeout=300, check=False)
        if proc.returncode != 0 and "terminate called without an active exception" in proc.stderr:
            shutil.rmtree(self.out, ignore_errors=True)
            os.makedirs(self.out)
            args[-2] = str(free_port())
            proc = self.run_trainprof(args, timeout=300, check=False)
        self.assertEqual(proc.returncode, 0, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr))
        self.assertIn("steps %d " % STEPS, proc.stdout)
        return self.report()

    def test_straggler_at_the_gradient_all_reduce_and_collective_unknown(self):
        rep = self.run_ddp()
        b = rep["bottleneck"]
        self.assertEqual(b["status"], "ok")
        ranks = b["ranks"]
        self.assertEqual(sorted(r["rank"] for r in ranks["ranks"]), [0, 1])
        self.assertNotIn(ranks["straggler"], (None, False), ranks["text"])
        self.assertEqual(ranks["latest_rank"], 1)
        late = [r for r in ranks["ranks"] if r["rank"] == 1][0]
        self.assertEqual(late["arrival"], "ddp_backward")
        self.assertGreater(late["median_lateness_ns"], 12e6)  # planted 20 ms per forward
        self.assertLess(late["median_lateness_ns"], 60e6)
        procs = [p for p in b["processes"] if p["rank"] is not None]
        self.assertEqual(len(procs), 2)
        for p in procs:
            self.assertEqual(p["steps"], STEPS)
            c = p["collective"]
            self.assertEqual(c["source"], "unknown")
            self.assertTrue(c["ddp"])
            self.assertEqual(c["backend"], "gloo")
            self.assertIsNone(p["parts"]["collective"]["percent"])
            self.assertGreater(p["parts"]["collective"]["total_ns"], 0)  # the logging all_reduce
            self.assertIn("collective: unknown (DDP's gradient all-reduce is inside backward)", " ".join(p["text"]))
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("rank 1 is the straggler: it reaches DDP's gradient all-reduce", text)


if __name__ == "__main__":
    unittest.main()
