"""The Python shim records the phases of real PyTorch loops (Debian python3-torch 1.13, CPU)."""

import os
import unittest

from common import PYTHON, WORKLOADS, TraceTest, by_pid, ranges

PLANTED = os.path.join(WORKLOADS, "planted.py")
DDP = os.path.join(WORKLOADS, "ddp_straggler.py")
MAIN_ITER = "trainprof:enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def calls(process, name):
    row = ranges(process["nvtx_ranges"]).get(name)
    return row["calls"] if row else 0


class PhaseRecordingTest(TraceTest):
    def run_planted(self, case, steps=12, workers=2, extra=()):
        self.profile([PYTHON, PLANTED, case, "--steps", str(steps), "--workers", str(workers)], extra=extra)
        rep = self.report()
        procs = by_pid(rep)
        main = [p for p in procs.values() if p["ppid"] not in procs][0]
        workers_ = [p for p in procs.values() if p["role"] == "DataLoader worker"]
        return main, workers_

    def test_main_process_and_worker_phases_with_pytorch_names(self):
        main, workers = self.run_planted("worker_init", steps=12)
        # 12 batches + the __next__ that raised StopIteration at the end of the epoch.
        self.assertEqual(calls(main, MAIN_ITER), 13)
        self.assertEqual(calls(main, "trainprof:Linear.forward"), 12)
        self.assertEqual(calls(main, "trainprof:Tensor.backward"), 12)
        self.assertEqual(calls(main, "trainprof:Optimizer.step#SGD.step"), 12)
        self.assertEqual(calls(main, "trainprof:Optimizer.zero_grad#SGD.zero_grad"), 12)
        self.assertEqual(len(workers), 2)
        self.assertEqual(sum(calls(w, "trainprof:_MapDatasetFetcher.fetch") for w in workers), 12)
        self.assertEqual(sum(calls(w, "trainprof:Items.__getitem__") for w in workers), 96)  # batch size 8
        self.assertEqual(sum(calls(w, "trainprof:default_collate") for w in workers), 12)
        for w in workers:
            init = ranges(w["nvtx_ranges"])["trainprof:worker_init_fn:slow_worker_init"]
            self.assertEqual(init["calls"], 1)
            self.assertGreater(init["mean_ns"], 0.38e9)  # the planted 400 ms sleep

    def test_slow_getitem_shows_in_the_worker_item_ranges(self):
        _, workers = self.run_planted("getitem", steps=8)
        items = [ranges(w["nvtx_ranges"])["trainprof:Items.__getitem__"] for w in workers]
        self.assertEqual(sum(r["calls"] for r in items), 64)
        for r in items:
            self.assertGreater(r["mean_ns"], 3.8e6)  # planted 4 ms sleep per item

    def test_single_process_loading_records_fetches_in_the_main_process(self):
        main, workers = self.run_planted("collate", steps=6, workers=0)
        self.assertEqual(workers, [])
        self.assertEqual(calls(main, "trainprof:enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), 7)
        self.assertEqual(calls(main, "trainprof:_MapDatasetFetcher.fetch"), 6)
        collate = ranges(main["nvtx_ranges"])["trainprof:slow_collate"]
        self.assertEqual(collate["calls"], 6)
        self.assertGreater(collate["mean_ns"], 38e6)  # planted 40 ms sleep per batch

    def test_trace_minus_python_turns_the_shim_off(self):
        main, workers = self.run_planted("compute", steps=4, extra=["--trace=-python"])
        self.assertEqual(main["nvtx_ranges"], [])
        self.assertTrue(all(w["nvtx_ranges"] == [] for w in workers))

    def test_spawned_ddp_ranks_are_named_by_rank(self):
        self.profile([PYTHON, DDP, "--steps", "6", "--port", "29541"])
        rep = self.report()
        ranks = sorted((p["rank"], p["role"]) for p in rep["processes"] if p["rank"] is not None)
        self.assertEqual(ranks, [(0, "rank 0"), (1, "rank 1")])
        for p in rep["processes"]:
            if p["rank"] is not None:
                self.assertEqual(calls(p, "trainprof:DistributedDataParallel.forward"), 6)
                self.assertEqual(calls(p, "trainprof:Tensor.backward"), 6)


if __name__ == "__main__":
    unittest.main()
