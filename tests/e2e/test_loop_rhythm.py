"""Steps of loops without a DataLoader (found from the forward → backward → optimizer rhythm) and
the coverage of a process's time by its steps, on programs written as users write them
(tests/workloads/word_lm.py after PyTorch's word_language_model, spawn_loader.py), each checked
against the script's own time.perf_counter() measurements (docs/analysis.md, "Steps", "Coverage")."""

import json
import os
import socket
import textwrap
import unittest

from common import PYTHON, WORKLOADS, TraceTest, by_pid, ranges

WORD_LM = os.path.join(WORKLOADS, "word_lm.py")
SPAWN_LOADER = os.path.join(WORKLOADS, "spawn_loader.py")


def own_numbers(proc):
    """The JSON the workload prints as its last line of stdout."""
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mean(xs):
    return sum(xs) / len(xs)


class LoopRhythmTest(TraceTest):
    def training_process(self, rep):
        b = rep["bottleneck"]
        self.assertEqual(b["status"], "ok", b["message"])
        self.assertEqual(len(b["processes"]), 1)
        return b["processes"][0]

    def check_word_lm(self, optimizer, batches, data_ms):
        proc = self.profile([PYTHON, WORD_LM, "--batches", str(batches), "--data-ms", str(data_ms),
                             "--optimizer", optimizer])
        own = own_numbers(proc)
        rep = self.report()
        p = self.training_process(rep)
        self.assertEqual(p["steps_found_by"], "loop_rhythm")
        self.assertEqual(p["steps"], own["batches"])  # the script's own count
        self.assertEqual(p["data_waits"], 0)
        self.assertEqual(p["eval_steps"], 4)  # evaluate(): 4 validation batches under no_grad
        # Step 0 is left out as warm-up: compare with the script's iterations 1..n-1.
        own_step = mean(own["step_times"][1:]) * 1e9
        self.assertAlmostEqual(p["step"]["mean_ns"] / own_step, 1.0, delta=0.05)
        # The data wait holds the planted get_batch (its sleep), and is the script's own time from
        # the end of one update to the next forward (clip_grad_norm_, the manual update,
        # repackage_hidden are in it too, optimizer.zero_grad is not).
        wait = p["parts"]["data_wait"]
        self.assertGreaterEqual(wait["mean_ns"], 0.95 * mean(own["get_batch_times"][1:]) * 1e9)
        self.assertGreaterEqual(wait["mean_ns"], data_ms * 1e6)
        self.assertAlmostEqual(wait["mean_ns"] / (mean(own["between_times"]) * 1e9), 1.0, delta=0.05)
        self.assertAlmostEqual(wait["percent"], mean(own["between_times"]) * 1e9 / own_step * 100, delta=5)
        # The verdict follows the script's own share (the model's speed varies with the machine).
        own_share = mean(own["between_times"]) * 1e9 / own_step * 100
        if abs(own_share - 20) > 5:
            self.assertEqual(p["verdict"], "input_bound" if own_share > 20 else "partly_input_bound"
                             if own_share > 5 else "compute_bound")
        kinds = {u["kind"]: u for u in p["coverage"]["uncovered"]}
        self.assertIn("evaluation", kinds)
        self.assertIn("checkpoint", kinds)  # torch.save after the epoch
        self.assertGreater(p["coverage"]["steps_ns"], own["batches"] * data_ms * 1e6 * 0.9)
        self.assertEqual(ranges(by_pid(rep)[p["pid"]]["nvtx_ranges"])["trainprof:torch.save"]["calls"], 1)
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("training steps (found from the loop's rhythm: forward → backward → optimizer step; "
                      "no DataLoader)", text)
        self.assertIn(": the time between cycles (last backward or optimizer step to the next forward) is ", text)
        self.assertNotIn("Were the workers traced", text)
        return p

    def test_word_language_model_with_manual_update(self):
        self.check_word_lm("manual", batches=16, data_ms=30)

    def test_word_language_model_with_sgd(self):
        p = self.check_word_lm("sgd", batches=10, data_ms=30)
        self.assertGreater(p["parts"]["optimizer"]["total_ns"], 0)


class CoverageTest(TraceTest):
    def test_spawn_workers_start_outside_the_steps(self):
        proc = self.profile([PYTHON, SPAWN_LOADER, "--epochs", "1", "--batches", "6", "--workers", "2"])
        own = own_numbers(proc)
        rep = self.report()
        b = rep["bottleneck"]
        self.assertEqual(b["status"], "ok", b["message"])
        p = b["processes"][0]
        self.assertEqual(p["steps_found_by"], "dataloader")
        self.assertEqual(p["steps"], own["steps"])
        c = p["coverage"]
        kinds = {u["kind"]: u for u in c["uncovered"]}
        start = kinds["dataloader_start"]
        # The script's own timer around iter(loader): the spawned workers' start.
        self.assertAlmostEqual(start["ns"] / (own["iter_s"] * 1e9), 1.0, delta=0.1)
        self.assertGreater(start["percent"], 20)
        self.assertLess(c["percent"], 60)
        self.assertAlmostEqual(c["percent"] + sum(u["percent"] for u in c["uncovered"]), 100.0, delta=0.01)
        self.assertEqual(c["wall_ns"], c["steps_ns"] + sum(u["ns"] for u in c["uncovered"]))
        main = by_pid(rep)[p["pid"]]
        self.assertEqual(ranges(main["nvtx_ranges"])["trainprof:iter(DataLoader)#_MultiProcessingDataLoaderIter"]
                         ["calls"], 1)
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("Steps, found from the DataLoader waits, cover ", text)
        self.assertIn("DataLoader iterator start (workers starting) ", text)

    def test_init_process_group_and_checkpoint_load_are_recorded(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        program = os.path.join(self.out, "init_pg.py")
        with open(program, "w") as f:
            f.write(textwrap.dedent("""\
                import io, torch, torch.distributed as dist
                dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d", rank=0, world_size=1)
                model = torch.nn.Linear(4, 2)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                buf = io.BytesIO()
                torch.save(model.state_dict(), buf)
                buf.seek(0)
                model.load_state_dict(torch.load(buf))
                for _ in range(3):
                    opt.zero_grad()
                    model(torch.randn(8, 4)).sum().backward()
                    opt.step()
                dist.destroy_process_group()
                """ % port))
        self.profile([PYTHON, program])
        rep = self.report()
        p = rep["bottleneck"]["processes"][0]
        names = ranges(by_pid(rep)[p["pid"]]["nvtx_ranges"])
        self.assertEqual(names["trainprof:init_process_group"]["calls"], 1)
        self.assertEqual(names["trainprof:torch.save"]["calls"], 1)
        self.assertEqual(names["trainprof:torch.load"]["calls"], 1)
        self.assertEqual(p["steps_found_by"], "loop_rhythm")
        self.assertEqual(p["steps"], 3)
        self.assertEqual(p["rank"], 0)
        kinds = {u["kind"] for u in p["coverage"]["uncovered"]}
        self.assertIn("init_process_group", kinds)
        self.assertIn("checkpoint", kinds)


if __name__ == "__main__":
    unittest.main()
