"""The corpus (tests/corpus/README.md): training programs written the way users write them, each
with one planted truth, run under `trainprof run --follow-children` and checked through the JSON
report's verdict fields, and against the program's own measurement of the same run (its
time.perf_counter() around each training step, or a Lightning Callback): step count exact, mean
step within 5 %.

Each check is a subTest named after the field it checks, so a run lists every failing check.
`python3 test_corpus.py --table` (scripts/corpus) runs the same tests and then prints, per program
and training process, the verdict, the steps trainprof counted against the program's own count and
the mean step against its own timer, then every check with its outcome, and the failures."""

import glob
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import unittest

from common import MODERN_PYTHON, NO_VENV, PYTHON, SANITIZER, SOURCE_DIR, TraceTest, free_port

CORPUS = os.path.join(SOURCE_DIR, "tests", "corpus")
TORCHRUN = os.path.join(os.path.dirname(MODERN_PYTHON), "torchrun")
MEAN_TOLERANCE = 0.05  # the bound: trainprof's mean step within 5 % of the program's own

# For the --table mode: (program, pid, rank, verdict, steps, own steps, mean ns, own mean ns) per
# training process checked, and (program, check, passed) per check run.
ROWS = []
CHECKS = []


def script(program):
    return os.path.join(CORPUS, program + ".py")


def own_steps_mean_ns(own, skip):
    """The program's own mean step in ns over its steps after the first `skip`, which trainprof's
    statistics leave out (warm-up step 0): like with like."""
    times = own["step_times_s"][skip:]
    return 1e9 * sum(times) / len(times) if times else None


class CorpusTest(TraceTest):
    program = None  # the program of tests/corpus being checked (for the table)

    def run_corpus(self, program, command, processes=1, timing_env=None):
        """Profiles `command` (the run of tests/corpus/`program`.py; told where to write its own
        timing by --timing-out, or by the environment variable `timing_env`), checks it against the
        program's own timer, returns (report, {pid: own measurement}) for the timing files the
        program wrote: `processes` of them (one per rank for DDP)."""
        self.program = program
        timing = os.path.join(self.scratch_dir(), program + ".json")
        timing_dir = os.path.dirname(timing)
        if timing_env:
            env = self.child_env()
            env[timing_env] = timing
            self.profile_ddp(command, env=env)
        else:
            self.profile_ddp(command + ["--timing-out", timing])
        own = {}
        for path in sorted(glob.glob(os.path.join(timing_dir, "*.json"))):
            with open(path) as f:
                d = json.load(f)
            own[d["pid"]] = d
        self.assertEqual(len(own), processes, "timing files written by the program")
        rep = self.report()
        status = rep["bottleneck"]["status"]
        CHECKS.append((program, "bottleneck.status", status == "ok"))
        self.assertEqual(status, "ok", rep["bottleneck"].get("message"))  # else nothing to check
        self.check_against_own_timer(rep, own)
        return rep, own

    def scratch_dir(self):
        """A directory of the test outside self.out (which profile_ddp empties to retry)."""
        path = tempfile.mkdtemp(prefix="trainprof-corpus-")
        self.addCleanup(shutil.rmtree, path, ignore_errors=True)
        return path

    def check(self, name, fn):
        """Runs fn() (assertions on the report, its field lookups inside it) as a subTest named
        `name`: a failing check, or a field missing from the report, is listed and the others run."""
        with self.subTest(check=name):
            passed = False
            try:
                fn()
                passed = True
            finally:
                CHECKS.append((self.program, name, passed))

    def training_processes(self, rep, own):
        """{pid: bottleneck process} of the processes that wrote a timing file."""
        procs = {p["pid"]: p for p in rep["bottleneck"]["processes"]}
        self.assertEqual(sorted(set(own) - set(procs)), [], "processes with own timing but no steps in the report")
        return {pid: procs[pid] for pid in own}

    def check_against_own_timer(self, rep, own):
        """Step count exact and mean step within 5 %, per training process, against the program's
        own timer (docs/testing.md, "The corpus")."""
        for pid, p in sorted(self.training_processes(rep, own).items()):
            mine = own[pid]
            skip = p["steps"] - p["steps_in_statistics"]
            own_mean = own_steps_mean_ns(mine, skip)
            ROWS.append((self.program, pid, p.get("rank"), p["verdict"], p["steps"], mine["steps"],
                         p["step"]["mean_ns"], own_mean))
            tag = "" if p.get("rank") is None else " rank %d" % p["rank"]
            self.check("steps%s" % tag, lambda: self.assertEqual(p["steps"], mine["steps"]))
            self.check("mean_step%s" % tag, lambda: self.assert_mean_close(p, own_mean))

    def assert_mean_close(self, p, own_mean):
        mean = p["step"]["mean_ns"]
        self.assertLessEqual(abs(mean - own_mean), MEAN_TOLERANCE * own_mean,
                             "trainprof's mean step %.2f ms (%d steps) vs the program's own %.2f ms"
                             % (mean / 1e6, p["steps_in_statistics"], own_mean / 1e6))

    def the_process(self, rep, own):
        procs = self.training_processes(rep, own)
        self.assertEqual(len(procs), 1)
        return next(iter(procs.values()))

    def by_rank(self, rep, own):
        return {p["rank"]: p for p in self.training_processes(rep, own).values()}

    def assert_loaders(self, p, *expected):
        """input.loaders, in order, have the values of `expected` (a dict of fields per loader)."""
        loaders = p["input"]["loaders"]
        self.assertEqual(len(loaders), len(expected), loaders)
        for loader, fields in zip(loaders, expected):
            self.assertEqual({k: loader.get(k) for k in fields}, fields)

    def uncovered(self, p, kind):
        return sum(u["ns"] for u in p["coverage"]["uncovered"] if u["kind"] == kind)

    def straggler_rank(self, rep):
        """The rank named straggler, or None: `ranks.straggler` is an object with its rank (or a
        bool beside `latest_rank`)."""
        s = rep["bottleneck"]["ranks"]["straggler"]
        if isinstance(s, dict):
            return s["rank"]
        return rep["bottleneck"]["ranks"]["latest_rank"] if s else None

    def rank_rows(self, rep):
        return {r["rank"]: r for r in rep["bottleneck"]["ranks"]["ranks"]}


class ModernCorpusTest(CorpusTest):
    """Programs of the modern stack (.venv): as the tests labelled torch2, normal build only
    (docs/testing.md, "Skipped tests")."""

    def setUp(self):
        if SANITIZER:
            self.skipTest("the modern stack's programs run in the normal build only")
        if not os.access(MODERN_PYTHON, os.X_OK):
            self.skipTest(NO_VENV % MODERN_PYTHON)
        super().setUp()


class MnistTest(CorpusTest):
    def test_mnist_slow_getitem_two_loaders(self):
        rep, own = self.run_corpus("mnist", [PYTHON, script("mnist")])
        p = self.the_process(rep, own)
        self.check("verdict", lambda: self.assertEqual(p["verdict"], "input_bound"))
        self.check("advice.cause", lambda: self.assertEqual(p["advice"]["cause"], "getitem"))
        self.check("steps_found_by", lambda: self.assertEqual(p["steps_found_by"], "dataloader"))
        # The training loader first: 320 / 16 batches and the StopIteration call; then the test one.
        train = dict(dataset="RandomMNIST", batch_size=16, num_workers=2, feeds_training=True, waits=21,
                     worker_processes=2)
        test = dict(dataset="RandomMNIST", batch_size=32, num_workers=2, feeds_training=False)
        self.check("input.loaders", lambda: self.assert_loaders(p, train, test))
        self.check("input.loaders[0].fetch",
                   lambda: self.assertGreater(p["input"]["loaders"][0]["fetch"]["getitem_percent"], 80))
        self.check("nvtx_ranges [eval]", lambda: self.assert_eval_rows(rep))

    def assert_eval_rows(self, rep):
        calls = {r["name"]: r["calls"] for r in rep["nvtx_ranges"]}
        train = [n for n in calls if n.endswith("Net.forward")]
        evals = [n for n in calls if n.endswith("Net.forward [eval]")]
        self.assertEqual(len(train), 1, sorted(calls))
        self.assertEqual(calls[train[0]], 20)  # 320 / 16
        self.assertEqual(len(evals), 1, sorted(calls))
        self.assertEqual(calls[evals[0]], 4)  # 128 / 32, under model.eval() and no_grad


class WordLanguageModelTest(CorpusTest):
    def test_loop_without_dataloader(self):
        rep, own = self.run_corpus("word_language_model", [PYTHON, script("word_language_model")])
        p = self.the_process(rep, own)
        self.check("steps_found_by", lambda: self.assertEqual(p["steps_found_by"], "loop_rhythm"))
        self.check("verdict", lambda: self.assertEqual(p["verdict"], "compute_bound"))
        self.check("parts.data_wait", lambda: self.assertLess(p["parts"]["data_wait"]["percent"], 5))


class DdpStragglerChecks:
    """Rank 1 planted ~20 ms late per step: the straggler, named on consistent lateness."""

    def check_rank1_straggler(self, rep):
        self.check("ranks.straggler", lambda: self.assertEqual(self.straggler_rank(rep), 1))
        rows = self.rank_rows(rep)
        self.check("ranks[1].median_lateness_ns", lambda: self.assertGreater(rows[1]["median_lateness_ns"], 10e6))
        self.check("ranks[1].last_share", lambda: self.assertGreater(rows[1]["last_share"], 0.8))
        # Rank 0 waits for it inside DDP's all-reduce: its own verdict says so first (issue 37, class 4).
        p0 = {p["rank"]: p for p in rep["bottleneck"]["processes"] if p["rank"] is not None}[0]
        self.check("rank 0 waits_for_straggler", lambda: self.assertEqual(p0["waits_for_straggler"]["rank"], 1))
        self.check("rank 0 text", lambda: self.assertTrue(
            any(t.startswith("Bound by waiting for rank 1, the straggler") for t in p0["text"]), p0["text"]))


class DdpSpawnTest(CorpusTest, DdpStragglerChecks):
    def test_spawned_ranks_rank1_straggler(self):
        rep, own = self.run_corpus("ddp_spawn", [PYTHON, script("ddp_spawn"), "--master-port", str(free_port())],
                                   processes=2)
        self.check_rank1_straggler(rep)


class DdpTorchrunTest(ModernCorpusTest, DdpStragglerChecks):
    def test_torchrun_ranks_rank1_straggler(self):
        rep, own = self.run_corpus("ddp_torchrun", [TORCHRUN, "--nproc-per-node", "2", "--master-port",
                                                   str(free_port()), script("ddp_torchrun")], processes=2)
        self.check_rank1_straggler(rep)


class EnsembleTorchrunTest(ModernCorpusTest):
    def test_members_trained_apart_have_no_straggler(self):
        """Two ensemble members under torchrun, no DDP or collective in a step: the ranks do not
        synchronise, nobody waits, and the slower member is the one the program's own timer says
        (issue 37, class 3)."""
        rep, own = self.run_corpus("ensemble_torchrun", [TORCHRUN, "--nproc-per-node", "2", "--master-port",
                                                        str(free_port()), script("ensemble_torchrun")], processes=2)
        ranks = rep["bottleneck"]["ranks"]
        self.check("ranks.synchronised", lambda: self.assertIs(ranks["synchronised"], False))
        self.check("ranks.drift", lambda: self.assertIs(ranks["drift"], False))
        self.check("ranks.straggler", lambda: self.assertIsNone(self.straggler_rank(rep)))
        self.check("ranks[].wait_ns", lambda: self.assertEqual([r["wait_ns"] for r in ranks["ranks"]], [None, None]))
        self.check("ranks.text", lambda: self.assertTrue(
            any(t.startswith("The ranks do not synchronise inside a step") for t in ranks["text"]), ranks["text"]))
        self.check("ranks.text no wait", lambda: self.assertFalse(
            any(re.search(r"rank \d+ waits", t) for t in ranks["text"]), ranks["text"]))
        # The slowest member by the program's own timer is the one the sentence names.
        means = {d["rank"]: own_steps_mean_ns(d, 1) for d in own.values()}
        slowest = max(means, key=means.get)
        self.check("slowest rank", lambda: self.assertTrue(
            any("the slowest, rank %d," % slowest in t for t in ranks["text"]), (means, ranks["text"])))


class HogwildTest(CorpusTest):
    def test_parent_that_only_evaluates_gets_no_training_verdict(self):
        """mnist_hogwild: two processes train a shared model, the parent then tests it (forwards
        under eval() and no_grad only): the parent is described as evaluation only, with no
        training verdict or advice; the trainers get theirs (issue 37, class 2)."""
        rep, own = self.run_corpus("hogwild", [PYTHON, script("hogwild")], processes=2)
        procs = {p["pid"]: p for p in rep["bottleneck"]["processes"]}
        parents = [p for pid, p in procs.items() if pid not in own]
        self.assertEqual(len(parents), 1, sorted(procs))
        parent = parents[0]
        self.check("parent.verdict", lambda: self.assertEqual(parent["verdict"], "evaluation_only"))
        self.check("parent.steps", lambda: self.assertEqual((parent["steps"], parent["eval_steps"]), (0, 4)))
        self.check("parent.evaluation", lambda: self.assertGreater(parent["evaluation"]["mean_ns"], 0))
        self.check("parent.advice", lambda: self.assertIsNone(parent["advice"]["cause"]))
        self.check("parent.text", lambda: self.assertTrue(
            any("evaluation only: 4 evaluation steps" in t for t in parent["text"]), parent["text"]))
        self.check("parent.text no advice", lambda: self.assertFalse(
            any("DataLoader(num_workers" in t or "-bound" in t for t in parent["text"]), parent["text"]))
        for pid in own:
            self.check("trainer %d verdict" % pid, lambda: self.assertIn(
                procs[pid]["verdict"], ("compute_bound", "partly_input_bound", "input_bound")))


class TimeSequencePredictionTest(CorpusTest):
    def test_closure_optimizer_steps_are_the_steps(self):
        """LBFGS's optimizer.step(closure) runs every forward and backward of training: each
        optimizer step is a step, holding the closure's passes; the predictions after each step are
        evaluation steps (issue 37, class 1)."""
        rep, own = self.run_corpus("time_sequence_prediction", [PYTHON, script("time_sequence_prediction")])
        p = self.the_process(rep, own)
        mine = next(iter(own.values()))
        self.check("steps_found_by", lambda: self.assertEqual(p["steps_found_by"], "loop_rhythm"))
        self.check("passes", lambda: self.assertEqual(p["passes"], mine["closure_calls"]))
        self.check("passes_in_optimizer_step",
                   lambda: self.assertEqual(p["passes_in_optimizer_step"], mine["closure_calls"]))
        self.check("eval_steps", lambda: self.assertEqual(p["eval_steps"], mine["steps"]))
        self.check("text", lambda: self.assertTrue(any(
            "%d forward/backward passes, " % mine["closure_calls"] in t and "all run by optimizer.step(closure)" in t
            for t in p["text"]), p["text"]))
        self.check("text no epochs", lambda: self.assertFalse(any(" epochs" in t for t in p["text"]), p["text"]))


class GradAccumulationTest(CorpusTest):
    def test_accumulated_micro_batches_are_one_optimizer_step(self):
        """An accumulation loop (4 DataLoader batches, then GradScaler.step): one step per optimizer
        step, of 4 micro-batches (issue 37, class 6)."""
        rep, own = self.run_corpus("grad_accumulation", [PYTHON, script("grad_accumulation")])
        p = self.the_process(rep, own)
        mine = next(iter(own.values()))
        per_step = mine["micro_batches"] // mine["steps"]
        self.check("micro_batches", lambda: self.assertEqual(p["micro_batches"], {"min": per_step, "max": per_step}))
        self.check("passes", lambda: self.assertEqual(p["passes"], mine["passes"]))
        self.check("text", lambda: self.assertTrue(any(
            "training steps of %d micro-batches each (an optimizer step each; %d forward/backward passes)"
            % (per_step, mine["passes"]) in t
            for t in p["text"]), p["text"]))


class DdpAllReduceTest(CorpusTest, DdpStragglerChecks):
    def test_logging_all_reduce_rank1_straggler(self):
        rep, own = self.run_corpus("ddp_allreduce", [PYTHON, script("ddp_allreduce"), "--port", str(free_port())],
                                   processes=2)
        self.check_rank1_straggler(rep)
        rows = self.rank_rows(rep)
        # Ranks wait in DDP's gradient all-reduce (in backward), not in the logging all_reduce.
        self.check("ranks[0].arrival", lambda: self.assertIn(rows[0]["arrival"], ("ddp_backward", "backward")))
        for rank, p in sorted(self.by_rank(rep, own).items()):
            self.check("collective rank %d" % rank, lambda: self.assert_ddp_collective(p))

    def assert_ddp_collective(self, p):
        c = p["collective"]
        self.assertTrue(c["ddp"])
        if c["source"] == "unknown":
            self.assertIsNone(p["parts"]["collective"]["percent"])
        else:
            self.assertGreater(p["parts"]["collective"]["percent"], 0)


class DdpCheckpointTest(CorpusTest):
    def test_one_checkpoint_is_a_slow_step_not_a_straggler(self):
        ckpt = self.scratch_dir()
        rep, own = self.run_corpus("ddp_checkpoint", [PYTHON, script("ddp_checkpoint"), "--port", str(free_port()),
                                                     "--ckpt-dir", ckpt], processes=2)
        self.assertEqual(os.listdir(ckpt), ["ckpt_000015.pt"])  # saved once, after iteration index 14
        expected = self.own_straggler(rep, own)
        if expected != "inconclusive":
            self.check("ranks.straggler", lambda: self.assertEqual(self.straggler_rank(rep), expected))
        ranks = self.by_rank(rep, own)
        self.check("slow_steps rank 0", lambda: self.assert_checkpoint_step(ranks[0]))

    def own_straggler(self, rep, own):
        """The straggler by the program's own clock: each rank's arrival is when its forward was
        done (just before backward, where DDP's gradient all-reduce makes ranks wait), on the
        shared CLOCK_MONOTONIC of perf_counter. Symmetric ranks have none; on a loaded machine a
        rank can be consistently late for real (it gets less CPU), and then trainprof must name it
        — but never because of the one checkpoint. Same rule as trainprof's (median at or above
        `late_threshold_ns`, last in half the steps; step 0 left out); "inconclusive" within 25%
        of either threshold."""
        arrivals = {d["rank"]: d["forward_done_s"] for d in own.values()}
        steps = min(len(a) for a in arrivals.values())
        late = {r: [] for r in arrivals}
        for k in range(1, steps):
            first = min(a[k] for a in arrivals.values())
            last = max(arrivals, key=lambda r: arrivals[r][k])
            for r, a in arrivals.items():
                late[r].append((a[k] - first, r == last))
        threshold = rep["bottleneck"]["ranks"]["late_threshold_ns"] / 1e9
        named = []
        for r, rows in late.items():
            median = statistics.median(x for x, _ in rows)
            share = sum(1 for x, is_last in rows if is_last and x > 0) / len(rows)
            if 0.75 * threshold <= median <= 1.25 * threshold and share >= 0.375:
                return "inconclusive"
            if median >= threshold and 0.375 <= share <= 0.625:
                return "inconclusive"
            if median >= threshold and share >= 0.5:
                named.append(r)
        return named[0] if len(named) == 1 else None

    def assert_checkpoint_step(self, p):
        slow = {s["train_step"]: s for s in p["slow_steps"]}
        self.assertIn(14, slow, p["slow_steps"])
        self.assertGreater(slow[14]["duration_ns"], 0.28e9)  # planted 300 ms after the save
        self.assertGreater(slow[14]["times_median"], 3)


class SpawnWorkersTest(CorpusTest):
    def test_spawn_worker_start_up_is_uncovered_time(self):
        rep, own = self.run_corpus("spawn_workers", [PYTHON, script("spawn_workers")], timing_env="TIMING_OUT")
        p = self.the_process(rep, own)
        self.check("steps_found_by", lambda: self.assertEqual(p["steps_found_by"], "dataloader"))
        self.check("coverage", lambda: self.assert_startup_uncovered(p))

    def assert_startup_uncovered(self, p):
        cov = p["coverage"]
        self.assertLess(cov["steps_ns"], cov["wall_ns"])
        self.assertAlmostEqual(cov["percent"], 100.0 * cov["steps_ns"] / cov["wall_ns"], delta=0.5)
        # Two spawned interpreters import torch inside iter(trainloader), before step 0: most of
        # what the steps do not cover (the rest: this script's own import of torch, the exit).
        startup = self.uncovered(p, "dataloader_start")
        self.assertGreater(startup, 0.3 * (cov["wall_ns"] - cov["steps_ns"]), cov["uncovered"])


class LightningTrainValTest(ModernCorpusTest):
    def test_lightning_train_and_val_loaders(self):
        rep, own = self.run_corpus("lightning_train_val", [MODERN_PYTHON, script("lightning_train_val")])
        p = self.the_process(rep, own)
        self.check("verdict", lambda: self.assertEqual(p["verdict"], "input_bound"))
        self.check("eval_steps", lambda: self.assertEqual(p["eval_steps"], 6))  # 3 val batches after each of 2
        train = dict(dataset="Digits", num_workers=2, persistent_workers=True, feeds_training=True)
        val = dict(dataset="Digits", num_workers=2, persistent_workers=False, feeds_training=False)
        self.check("input.loaders", lambda: self.assert_loaders(p, train, val))


def exception_line(traceback):
    """The line of a formatted traceback that names the exception (its message's first line)."""
    lines = traceback.strip().splitlines()
    for line in lines:
        if re.match(r"^[\w.]*(Error|Exception)\b", line):
            return line[:240]
    return lines[-1][:240] if lines else ""


def print_table(result, out=sys.stdout):
    """The closing-note table: per program and training process, the verdict, steps trainprof vs
    the program's own count, mean step trainprof vs own; then every check, passed or not, and the
    failures with their messages."""
    row = "%-20s %-5s %-19s %13s %30s"
    print(row % ("program", "rank", "verdict", "steps tp/own", "mean step ms tp/own (diff)"), file=out)
    for program, _pid, rank, verdict, steps, own_steps, mean, own_mean in ROWS:
        diff = "%+.1f%%" % (100.0 * (mean - own_mean) / own_mean) if own_mean else "-"
        print(row % (program, "-" if rank is None else rank, verdict, "%d/%d" % (steps, own_steps),
                     "%.2f/%.2f (%s)" % (mean / 1e6, (own_mean or 0) / 1e6, diff)), file=out)
    print("\nchecks:", file=out)
    for program, name, passed in sorted(CHECKS, key=lambda c: c[0]):  # stable: in run order per program
        print("  %-20s %-28s %s" % (program, name, "ok" if passed else "FAIL"), file=out)
    problems = result.failures + result.errors
    print("\nfailed: %d" % len(problems), file=out)
    for test, traceback in problems:
        print("  %s\n      %s" % (test.id().replace("test_corpus.", ""), exception_line(traceback)), file=out)
    for test, reason in result.skipped:
        print("skipped: %s: %s" % (test.id().replace("test_corpus.", ""), reason), file=out)


if __name__ == "__main__":
    if "--table" in sys.argv:
        sys.argv.remove("--table")
        result = unittest.main(exit=False, verbosity=1).result
        print_table(result)
        sys.exit(0 if result.wasSuccessful() else 1)
    unittest.main()
