"""Call stacks recorded in the profiled process (`trainprof run --backtrace`, issue 15), checked in
the trace itself with trace_decode.py: STACK, EVENT_STACK and MODULE records, whose addresses are
placed in the planted functions with the executable's own symbol table (nm), not with trainprof's
reader.

tests/programs/callsites.cc opens the range "work" 30 times from load_batch and 10 + 7 times from
save_checkpoint (the 7 on a second thread), marks "batch_ready" from load_batch 30 times, and
calls plugin_step of a library it dlopens 5 times; cupti_fake_workload's "stacks" mode makes CUDA
calls from named functions against the stand-in CUPTI."""

import os
import re
import subprocess
import unittest

from common import PROGRAMS, SOURCE_DIR, TraceTest, program, skip_in_sanitizer_build
from trace_decode import event_stacks, of, read_trace, stacks, string

PLUGIN = os.path.join(PROGRAMS, "libtp_callsites_plugin.so")
FLAG_FORKED_CHILD = 1  # FileFlag kFlagForkedChild (format/trainprof/trace_format.h)


def function_ranges(path, names):
    """{name: [(start, end), ...]} ELF virtual addresses of the functions `names` in the file at
    path: a function may have several parts (GCC's `name.cold` clone, `[clone .cold]` demangled,
    holds its unlikely paths: TSan's instrumentation put an NVTX call there)."""
    out = subprocess.run(["nm", "-C", "-S", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) != 4 or parts[2].lower() not in ("t", "w"):
            continue
        name = re.sub(r"\(.*$", "", parts[3].replace("(anonymous namespace)::", ""))
        if name in names:
            start = int(parts[0], 16)
            found.setdefault(name, []).append((start, start + int(parts[1], 16)))
    return found


def build_id_of(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else ""


def require(test, paths, reason):
    """Skips `test` unless every file in `paths` was built."""
    if not all(os.path.exists(p) for p in paths):
        test.skipTest(reason)


class Placed:
    """Native addresses of one trace placed in modules (MODULE records) and named functions."""

    def __init__(self, trace, path, names):
        self.trace = trace
        # Paths as the loader gives them (a dlopen's argument as written), the executable's real.
        self.modules = [dict(m, path_text=os.path.realpath(string(trace, m["path"])),
                             build_id_text=string(trace, m["build_id"])) for m in of(trace, "MODULE")]
        real = os.path.realpath(path)
        self.exe = [m for m in self.modules if m["path_text"] == real]
        self.funcs = function_ranges(real, names)

    def module_of(self, address):
        for m in self.modules:
            if m["start"] <= address < m["end"]:
                return m
        return None

    def function_of(self, address, module):
        """The named function whose code holds the return address (address - 1: the call)."""
        vaddr = address - 1 - module["bias"]
        for name, parts in self.funcs.items():
            if any(lo <= vaddr < hi for lo, hi in parts):
                return name
        return None

    def first_named(self, frames, module):
        """The innermost named function among the native frames in `module`."""
        for f in frames:
            if f[0] == "native" and module["start"] <= f[1] < module["end"]:
                name = self.function_of(f[1], module)
                if name is not None:
                    return name
        return None


class NvtxStacksTest(TraceTest):
    def setUp(self):
        super().setUp()
        require(self, [program("callsites")], "tp_callsites was not built (no NVTX headers)")

    def run_callsites(self, backtrace, *args):
        extra = ["--backtrace=" + backtrace] if backtrace is not None else []
        proc = self.profile([program("callsites")] + list(args), follow=False, extra=extra)
        self.assertIn("callsites done", proc.stdout)
        files = self.trace_files()
        self.assertEqual(len(files), 1, files)
        trace = read_trace(os.path.join(self.out, files[0]))
        self.assertEqual(trace["errors"], [])
        return trace

    def test_by_callsite_names_the_function_and_the_line_of_each_call(self):
        # The NVTX call is inlined from nvToolsExt's header: the line must be the program's.
        self.run_callsites("nvtx", PLUGIN)
        with open(os.path.join(SOURCE_DIR, "tests", "programs", "callsites.cc")) as f:
            source = f.read().splitlines()

        def line_in(function, text):
            start = next(i for i, l in enumerate(source) if (" %s(" % function) in l and l.endswith("{"))
            return next(i for i in range(start, len(source)) if text in source[i]) + 1

        # save_checkpoint is called from main (10) and from the second thread's lambda (7): a row
        # per caller, each naming it.
        rows = {(r["kind"], r["name"], r["function"], (r["caller"] or "").split(" at ")[0]): r
                for r in self.report(extra=["--by-callsite"])["callsites"]}
        lambda_caller = [k[3] for k in rows if k[2] == "save_checkpoint(int)" and k[3] != "main"]
        self.assertEqual(len(lambda_caller), 1, sorted(rows))
        self.assertIn("lambda", lambda_caller[0])
        for kind, name, function, caller, calls, call in (
                ("range", "work", "load_batch(int)", "", 30, 'nvtxRangePushA("work")'),
                ("range", "work", "save_checkpoint(int)", "main", 10, 'nvtxRangePushA("work")'),
                ("range", "work", "save_checkpoint(int)", lambda_caller[0], 7, 'nvtxRangePushA("work")'),
                ("mark", "batch_ready", "load_batch(int)", "", 30, "nvtxMarkA")):
            r = rows[(kind, name, function, caller)]
            self.assertEqual(r["calls"], calls, r)
            self.assertEqual(os.path.basename(r["file"]), "callsites.cc", r)
            self.assertEqual(r["line"], line_in(function.split("(")[0], call), r)
            self.assertEqual(r["frames"][1]["function"], caller or "main", r)  # the caller, then the rest
        text = self.run_trainprof(["report", "--by-callsite", self.out]).stdout
        self.assertIn("load_batch(int) at callsites.cc:%d" % line_in("load_batch", 'nvtxRangePushA("work")'), text)

    def test_a_range_helper_of_the_program_is_split_by_its_callers(self):
        """An RAII scope class opens "io" for read_shard (30 calls) and write_log (10): one call
        site, the helper's constructor; a row per caller, each naming the caller's line (issue 37,
        class 7: it was one row of 40 calls naming the helper's line)."""
        proc = self.profile([program("callsites_wrapper")], follow=False, extra=["--backtrace=nvtx"])
        self.assertIn("callsites done", proc.stdout)
        with open(os.path.join(SOURCE_DIR, "tests", "programs", "callsites_wrapper.cc")) as f:
            source = f.read().splitlines()

        def line_of(function, text):
            start = next(i for i, l in enumerate(source) if (" %s(" % function) in l and l.endswith("{"))
            return next(i for i in range(start, len(source)) if text in source[i]) + 1

        rows = [r for r in self.report(extra=["--by-callsite"])["callsites"] if r["name"] == "io"]
        got = {(r["function"], r["line"], r["caller"]): r["calls"] for r in rows}
        helper = ("ScopedRange::ScopedRange(char const*)", line_of("ScopedRange", "nvtxRangePushA(name)"))
        self.assertEqual(got, {
            helper + ("read_shard(int) at callsites_wrapper.cc:%d" % line_of("read_shard", 'range("io")'),): 30,
            helper + ("write_log(int) at callsites_wrapper.cc:%d" % line_of("write_log", 'range("io")'),): 10})
        text = self.run_trainprof(["report", "--by-callsite", self.out]).stdout
        self.assertIn("ScopedRange::ScopedRange(char const*) at callsites_wrapper.cc:%d, from read_shard(int) at "
                      "callsites_wrapper.cc:%d" % (helper[1], line_of("read_shard", 'range("io")')), text)

    def test_range_stacks_name_the_function_that_opened_each_range(self):
        trace = self.run_callsites("nvtx", PLUGIN)
        self.assertEqual(trace["header"]["meta"].get("stacks"), "backtrace=nvtx")
        placed = Placed(trace, program("callsites"), {"load_batch", "save_checkpoint", "main"})
        self.assertEqual(set(placed.funcs), {"load_batch", "save_checkpoint", "main"})
        # The executable is described once, by its real path and its build id.
        self.assertEqual(len(placed.exe), 1, [m["path_text"] for m in placed.modules])
        exe = placed.exe[0]
        self.assertEqual(string(trace, exe["path"]), os.path.realpath(program("callsites")))
        self.assertEqual(exe["build_id_text"], build_id_of(program("callsites")))
        self.assertLess(exe["start"], exe["end"])
        table = stacks(trace)
        counts = {}
        for name, rec, sid in event_stacks(trace):
            self.assertIn(sid, table, "EVENT_STACK names an undefined stack %d" % sid)
            self.assertIsNotNone(name, "an EVENT_STACK without its event")
            frames = table[sid]
            self.assertTrue(all(f[0] == "native" for f in frames))  # no Python here
            self.assertLessEqual(len(frames), 64)
            # trainprof's own frames are left out: the innermost is the program's.
            innermost = placed.module_of(frames[0][1])
            self.assertIsNotNone(innermost, "address %#x outside every MODULE" % frames[0][1])
            self.assertFalse(innermost["path_text"].endswith("libtrainprof_inject.so"))
            label = string(trace, rec.get("name", 0))
            key = (name, label, placed.first_named(frames, exe) if label != "plugin" else innermost["path_text"])
            counts[key] = counts.get(key, 0) + 1
        self.assertEqual(counts, {
            ("RANGE_PUSH", "work", "load_batch"): 30,
            ("RANGE_PUSH", "work", "save_checkpoint"): 17,
            ("MARK", "batch_ready", "load_batch"): 30,
            ("RANGE_PUSH", "plugin", os.path.realpath(PLUGIN)): 5,
        })
        # Every push and mark got a stack (30 + 17 + 5 pushes, 30 marks); pops none.
        self.assertEqual(len(of(trace, "RANGE_PUSH")), 52)
        self.assertEqual(len(of(trace, "MARK")), 30)
        self.assertEqual(len(event_stacks(trace)), 82)
        # A repeated stack is one STACK: the main thread's 30 pushes from load_batch share an id.
        main_tid = trace["header"]["pid"]
        load_ids = [sid for name, rec, sid in event_stacks(trace)
                    if name == "RANGE_PUSH" and rec["tid"] == main_tid and string(trace, rec["name"]) == "work"
                    and placed.first_named(table[sid], exe) == "load_batch"]
        # (NVTX's first call of each function goes through its initialisation: one more stack.)
        self.assertGreaterEqual(max(load_ids.count(i) for i in set(load_ids)), 29, load_ids)
        self.assertEqual(len(of(trace, "STACK")), len(table))  # each id defined once
        self.assertLessEqual(len(table), 12)

    def test_library_loaded_later_gets_its_module_before_its_stacks(self):
        trace = self.run_callsites("nvtx", PLUGIN)
        real = os.path.realpath(PLUGIN)
        order = [(n, r) for n, r in trace["records"] if n in ("MODULE", "STACK")]
        plugin_at = [i for i, (n, r) in enumerate(order)
                     if n == "MODULE" and os.path.realpath(string(trace, r["path"])) == real]
        self.assertEqual(len(plugin_at), 1)
        module = order[plugin_at[0]][1]
        self.assertEqual(string(trace, module["build_id"]), build_id_of(PLUGIN))
        table = stacks(trace)
        plugin_ids = [sid for name, rec, sid in event_stacks(trace)
                      if name == "RANGE_PUSH" and string(trace, rec["name"]) == "plugin"]
        self.assertEqual(len(plugin_ids), 5)
        # One stack for the 5 calls, or two: the first call into the plugin's NVTX functions runs
        # their one-time initialisation (nvtxRangePushA_impl_init), whose frames sit between the
        # library and plugin_step when the compiler made no tail call of it (the TSan build).
        self.assertGreaterEqual(max(plugin_ids.count(i) for i in plugin_ids), 4, plugin_ids)
        for sid in set(plugin_ids):
            self.assertTrue(module["start"] <= table[sid][0][1] < module["end"])
            stack_at = [i for i, (n, r) in enumerate(order) if n == "STACK" and r["id"] == sid]
            self.assertLess(plugin_at[0], stack_at[0])
        # Modules recorded once each, even though stacks were taken before and after the dlopen.
        keys = [(m["start"], m["bias"]) for m in of(trace, "MODULE")]
        self.assertEqual(len(keys), len(set(keys)))

    def test_library_dlopened_by_a_relative_path_is_recorded_by_its_absolute_path(self):
        # dlopen("./libtp_callsites_plugin.so") from the programs' directory: the loader names
        # the object relative to that working directory; the report runs elsewhere.
        proc = self.run_trainprof(["run", "-o", self.out, "--backtrace=nvtx", "--", program("callsites"),
                                   "./" + os.path.basename(PLUGIN)], cwd=PROGRAMS)
        self.assertIn("callsites done", proc.stdout)
        trace = read_trace(os.path.join(self.out, self.trace_files()[0]))
        paths = [string(trace, m["path"]) for m in of(trace, "MODULE")]
        self.assertIn(os.path.realpath(PLUGIN), paths)
        self.assertEqual([p for p in paths if not p.startswith("/") and not p.startswith("linux-vdso")], [])
        report = self.run_trainprof(["report", "--by-callsite", self.out], cwd="/")
        self.assertIn("plugin_step at callsites_plugin.cc:6", report.stdout)

    def test_no_stacks_for_nvtx_by_default_or_with_none(self):
        for backtrace, meta in ((None, "backtrace=cuda:1000"), ("none", None)):
            with self.fresh_subtest(backtrace=backtrace):
                trace = self.run_callsites(backtrace)
                self.assertEqual(trace["header"]["meta"].get("stacks"), meta)
                self.assertEqual(len(of(trace, "RANGE_PUSH")), 47)
                for kind in ("STACK", "EVENT_STACK", "MODULE"):
                    self.assertEqual(of(trace, kind), [], kind)

    def test_bad_backtrace_is_a_usage_error(self):
        proc = self.run_trainprof(["run", "-o", self.out, "--backtrace=nvtx,stacks", "--", program("callsites")],
                                  check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("trainprof: --backtrace: unknown value 'stacks'", proc.stderr)
        self.assertNotIn("callsites done", proc.stdout)


class HostileStacksTest(TraceTest):
    """Stacks taken where the library must neither allocate nor wait for a lock the interrupted
    code holds: tests/programs/signal_first_call.cc, whose threads' first NVTX calls come from a
    SIGUSR1 handler that interrupted malloc, under --backtrace=nvtx (libunwind, the table, the
    first stack's MODULE records in the handler)."""

    THREADS = 40

    @skip_in_sanitizer_build("thread", "tp_signal_first_call dies of SIGSEGV under TSan (as in test_reliability's "
                                       "SignalFirstCallTest); the normal and ASan builds run it")
    def test_stacks_in_a_handler_that_interrupted_malloc(self):
        require(self, [program("signal_first_call")], "tp_signal_first_call was not built")
        proc = self.run_or_fail_if_hung(["run", "-o", self.out, "--backtrace=nvtx", "--", program("signal_first_call"),
                                         str(self.THREADS), "3"],
                                        "a stack taken in a handler that interrupted malloc deadlocked")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        handled = int(re.search(r"handler ranges: (\d+)", proc.stdout).group(1))
        self.assertGreaterEqual(handled, 3 * self.THREADS)
        trace = read_trace(os.path.join(self.out, self.trace_files()[0]))
        self.assertEqual(trace["errors"], [])
        self.assertEqual(trace["header"]["records_dropped"], 0)
        name = [i for i, s in trace["strings"].items() if s == "handler"]
        table = stacks(trace)
        with_stack = [sid for n, rec, sid in event_stacks(trace) if n == "RANGE_PUSH" and rec["name"] in name]
        self.assertEqual(len(with_stack), handled)  # every handler's push has its stack
        self.assertTrue(all(sid in table for sid in with_stack))
        self.assertGreater(len(of(trace, "MODULE")), 0)


class ForkStacksTest(TraceTest):
    """Fork children of a process whose threads keep the dynamic loader busy
    (tests/programs/fork_while_dlopen.cc). libunwind and the MODULE scan call dl_iterate_phdr,
    whose lock a parent thread may hold at the fork: a child that took a native stack could wait
    for it forever (a new-user pass hung one child of 200 that way). Children take no native
    frames; every child finishes."""

    CHILDREN = 150

    # Off in CI until the remaining hang is found: with native frames off in children (this fix) the
    # old deterministic hang is gone (the old library hung on the first run; the fixed one passed 4
    # runs of 300 forks alone), but one run in ~6 under heavy load still hung, and a new-user pass
    # saw the same program hang once in ~8 with --backtrace=none: a second cause, not in the stacks.
    @unittest.skipUnless(os.environ.get("TRAINPROF_TEST_FORK_STRESS") == "1",
                         "TRAINPROF_TEST_FORK_STRESS=1 runs it (a rare hang of another cause is open)")
    def test_fork_children_of_a_loader_busy_process_never_hang(self):
        require(self, [program("fork_while_dlopen"), PLUGIN], "tp_fork_while_dlopen was not built")
        proc = self.run_or_fail_if_hung(["run", "--follow-children", "-o", self.out, "--backtrace=nvtx", "--",
                                         program("fork_while_dlopen"), PLUGIN, str(self.CHILDREN)],
                                        "a fork child waited for a lock its parent's thread held", timeout=180)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("children ok: %d" % self.CHILDREN, proc.stdout)
        files = self.trace_files()
        self.assertEqual(len(files), self.CHILDREN + 1)
        parent_native = children_native = children = 0
        for f in files:
            trace = read_trace(os.path.join(self.out, f))
            self.assertEqual(trace["errors"], [], f)
            native = sum(1 for frames in stacks(trace).values() for fr in frames if fr[0] == "native")
            if not trace["header"]["flags"] & FLAG_FORKED_CHILD:
                parent_native += native
            else:
                children += 1
                children_native += native
                self.assertEqual(len(of(trace, "MODULE")), 0, f)  # no loader scan in a child
        self.assertEqual(children, self.CHILDREN)
        self.assertGreater(parent_native, 0)  # the parent's ranges have their stacks
        self.assertEqual(children_native, 0)


class CudaStacksTest(TraceTest):
    """--backtrace=cuda:THRESHOLD against the stand-in CUPTI (tests/programs/fake_cupti.cc)."""

    def setUp(self):
        super().setUp()
        self.fake = os.path.join(PROGRAMS, "libfake_cupti.so")
        require(self, [self.fake, program("cupti_fake_workload")], "the fake CUPTI was not built (no CUPTI headers)")

    def run_stacks(self, backtrace):
        env = self.child_env()
        env.pop("TRAINPROF_CUDA_QUIET", None)
        env["TRAINPROF_CUPTI_PATH"] = self.fake
        proc = self.run_trainprof(["run", "-o", self.out, "--backtrace=" + backtrace, "--",
                                   program("cupti_fake_workload"), "stacks"], env=env, check=False, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("stacks done", proc.stdout)
        files = self.trace_files()
        self.assertEqual(len(files), 1)
        return read_trace(os.path.join(self.out, files[0]))

    def test_blocking_calls_over_the_threshold_name_their_caller(self):
        trace = self.run_stacks("cuda:1000000")  # 1 ms
        self.assertEqual(trace["header"]["meta"].get("stacks"), "backtrace=cuda:1000000")
        names = {"wait_for_loss", "grow_pool", "quick_sync", "launch_step"}
        placed = Placed(trace, program("cupti_fake_workload"), names)
        self.assertEqual(set(placed.funcs), names)
        exe = placed.exe[0]
        table = stacks(trace)
        got = {}
        for name, rec, sid in event_stacks(trace):
            self.assertEqual(name, "CUDA_API_EXIT")  # the NVTX ranges of the program have none
            got[rec["correlation"]] = placed.first_named(table[sid], exe)
        self.assertEqual(got, {101: "wait_for_loss", 102: "wait_for_loss", 103: "wait_for_loss",
                               104: "wait_for_loss", 111: "grow_pool", 112: "grow_pool"})
        # The 4 quick syncs (under 1 ms) and the launches (not blocking) were recorded without one.
        exits = {r["correlation"] for r in of(trace, "CUDA_API_EXIT")}
        self.assertTrue({121, 122, 123, 124, 131, 132, 133, 134} <= exits, exits)

    def test_none_takes_no_stack(self):
        trace = self.run_stacks("none")
        self.assertEqual(len(of(trace, "CUDA_API_EXIT")), 14)
        for kind in ("STACK", "EVENT_STACK", "MODULE"):
            self.assertEqual(of(trace, kind), [], kind)


if __name__ == "__main__":
    unittest.main()
