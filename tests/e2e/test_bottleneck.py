"""The bottleneck verdict on real PyTorch loops (Debian python3-torch 1.13, CPU) with one planted
bottleneck each (tests/workloads/planted.py, ddp_straggler.py), run under --follow-children."""

import os
import unittest

from common import PYTHON, SANITIZER, WORKLOADS, TraceTest, free_port

PLANTED = os.path.join(WORKLOADS, "planted.py")
DDP = os.path.join(WORKLOADS, "ddp_straggler.py")
DDP_CHECKPOINT = os.path.join(WORKLOADS, "ddp_checkpoint.py")


class VerdictTest(TraceTest):
    def verdict(self, case, steps=16, extra=()):
        self.profile([PYTHON, PLANTED, case, "--steps", str(steps)] + list(extra))
        rep = self.report()
        self.assertEqual(rep["bottleneck"]["status"], "ok")
        procs = rep["bottleneck"]["processes"]
        self.assertEqual(len(procs), 1)  # the main process; workers are not training processes
        p = procs[0]
        self.assertEqual(p["steps"], steps)
        text = self.run_trainprof(["report", self.out]).stdout
        return p, text

    def test_slow_getitem_is_input_bound_in_the_dataset(self):
        p, text = self.verdict("getitem")
        self.assertEqual(p["verdict"], "input_bound")
        self.assertGreater(p["parts"]["data_wait"]["percent"], 50)
        self.assertEqual(p["input"]["worker_processes"], 2)
        self.assertGreater(p["input"]["busy_percent"], 80)  # the workers never rest
        self.assertGreater(p["input"]["fetch"]["getitem_percent"], 80)
        self.assertGreater(p["input"]["fetch"]["getitem_mean_ns"], 3.8e6)  # planted 4 ms per item
        self.assertEqual(p["advice"]["cause"], "getitem")
        self.assertGreater(p["advice"]["workers_needed"], 2)
        self.assertIn("__getitem__", text)
        self.assertIn("Input-bound", text)

    def test_slow_collate_is_input_bound_in_collate(self):
        p, text = self.verdict("collate")
        self.assertEqual(p["verdict"], "input_bound")
        self.assertGreater(p["input"]["fetch"]["collate_percent"], 80)
        self.assertEqual(p["advice"]["cause"], "collate")
        self.assertIn("collate_fn", text)

    def test_heavy_model_is_compute_bound(self):
        # Batches from the main process: with worker processes, a loaded machine (CI running tests
        # side by side) delays their replies by milliseconds per step — real data wait, but not
        # what this test is about.
        p, text = self.verdict("compute", steps=10, extra=["--workers", "0"])
        self.assertEqual(p["verdict"], "compute_bound")
        self.assertLess(p["parts"]["data_wait"]["percent"], 5)
        self.assertIn(p["largest_phase"], ("forward", "backward"))
        self.assertGreater(p["parts"]["forward"]["percent"] + p["parts"]["backward"]["percent"], 80)
        self.assertIn("Compute-bound", text)

    def test_slow_worker_init_shows_as_worker_start_up(self):
        p, text = self.verdict("worker_init", steps=12)
        startup = p["input"]["startup"]
        self.assertEqual(startup["init_fn_calls"], 2)
        self.assertGreater(startup["init_fn_ns"], 2 * 0.38e9)  # planted 400 ms in each worker
        self.assertGreater(startup["wait_ns"], 0.3e9)  # the main process waited for it
        self.assertTrue(p["advice"]["startup_significant"])
        self.assertIn("worker_init_fn", text)

    def test_ddp_straggler_rank_is_named(self):
        self.profile_ddp([PYTHON, DDP, "--steps", "10", "--slow-rank", "1", "--port", str(free_port())])
        rep = self.report()
        ranks = rep["bottleneck"]["ranks"]
        self.assertEqual(sorted(r["rank"] for r in ranks["ranks"]), [0, 1])
        straggler = ranks["straggler"]
        self.assertIsNotNone(straggler)
        self.assertEqual(straggler["rank"], 1)
        self.assertGreater(straggler["median_lateness_ns"], 40e6)  # planted 60 ms of extra compute
        self.assertGreater(straggler["last_percent"], 80)
        rank0 = [r for r in ranks["ranks"] if r["rank"] == 0][0]
        self.assertGreater(rank0["wait_ns"], 40e6)  # rank 0 waits for it in backward
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("rank 1 is the straggler", text)

    def test_ddp_straggler_follows_the_slow_rank(self):
        self.profile_ddp([PYTHON, DDP, "--steps", "8", "--slow-rank", "0", "--port", str(free_port())])
        self.assertEqual(self.report()["bottleneck"]["ranks"]["straggler"]["rank"], 0)

    def test_ddp_checkpoint_once_is_no_straggler(self):
        # Symmetric ranks; rank 0 saves a checkpoint once, slowly, after step 10: its mean lateness
        # is high, its median is not. No straggler; step 10 of rank 0 is an isolated slow step.
        self.profile_ddp([PYTHON, DDP_CHECKPOINT, "--steps", "20", "--save-at", "10", "--port", str(free_port()),
                          "--dir", self.out])
        b = self.report()["bottleneck"]
        self.assertEqual([p["steps"] for p in b["processes"]], [20, 20])
        ranks = b["ranks"]
        rank0 = [r for r in ranks["ranks"] if r["rank"] == 0][0]
        self.assertEqual(ranks["latest_rank"], 0)
        self.assertGreater(rank0["mean_lateness_ns"], 0.28e9 / 19)  # the 300 ms pause, over 19 steps
        # Symmetric ranks: no straggler. In a sanitizer build on a loaded machine rank 0 (which also
        # serves the TCPStore) can really be late in most steps, by a few ms (a TSan CI run: median
        # 5.6 ms, last in 84%); naming it then is right, and e2e_corpus's DdpCheckpointTest checks
        # that case against the program's own clock. Either way the one 300 ms save never moves the
        # median lateness.
        loaded_straggler = SANITIZER and ranks["straggler"] and ranks["straggler"]["rank"] == 0
        self.assertLess(rank0["median_lateness_ns"], 0.03e9)
        if not loaded_straggler:
            self.assertFalse(ranks["straggler"])
            self.assertLess(rank0["median_lateness_ns"], ranks["late_threshold_ns"])  # on time in most steps
        self.assertEqual(rank0["late_step_list"][0]["train_step"], 11)  # the save delays step 11's arrival
        self.assertGreater(rank0["late_step_list"][0]["lateness_ns"], 0.28e9)
        p0 = [p for p in b["processes"] if p["rank"] == 0][0]
        slow = {s["train_step"]: s for s in p0["slow_steps"]}
        self.assertIn(10, slow)
        self.assertGreater(slow[10]["duration_ns"], 0.3e9)
        self.assertGreater(slow[10]["times_median"], 3)
        text = self.run_trainprof(["report", self.out]).stdout
        if not loaded_straggler:
            self.assertIn("No straggler: rank 0 was late in ", text)
        self.assertIn("Isolated slow step", text)
        self.assertIn("step 10 of rank 0 took ", text)


if __name__ == "__main__":
    unittest.main()
