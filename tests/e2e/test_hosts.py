"""Every host on one clock: a two-node DDP job simulated on this machine, one `trainprof run` per
node as a multi-node job runs it, each in a UTS namespace named node-a or node-b (tests/workloads/
two_nodes.py), then node-b's wall clock moved by +2.5 s in its trace files (shift_host_clock.py),
as a host without NTP would have recorded it. The report estimates node-b's clock from the barriers
the ranks share, puts its processes back on node-a's clock and names the same straggler as without
the shift."""

import json
import os
import re
import shutil
import subprocess
import unittest

from common import PYTHON, TRAINPROF, WORKLOADS, TraceTest, free_port
from shift_host_clock import shift_host_clock

TWO_NODES = os.path.join(WORKLOADS, "two_nodes.py")
SHIFT_NS = 2_500_000_000


def can_simulate_hosts():
    """'' or why this machine cannot run the simulated hosts."""
    if os.geteuid() != 0:
        return "a UTS namespace per rank needs root (unshare --uts)"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    if subprocess.run(["unshare", "--uts", "true"]).returncode != 0:
        return "unshare --uts is not allowed here"
    if subprocess.run([PYTHON, "-c", "import torch.distributed"], capture_output=True).returncode != 0:
        return "%s has no torch.distributed" % PYTHON
    return ""


def straggler(report):
    s = report["bottleneck"]["ranks"]["straggler"]
    return s["rank"] if s else None


@unittest.skipIf(can_simulate_hosts(), can_simulate_hosts())
class SimulatedHostsTest(TraceTest):
    def run_nodes(self):
        """node-a and node-b, each `trainprof run -o OUT/node-X` in its UTS namespace, at once."""
        port = str(free_port())
        nodes = []
        for node, host in enumerate(["node-a", "node-b"]):
            cmd = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, TRAINPROF, "run", "-o",
                   os.path.join(self.out, host), "--follow-children", "--", PYTHON, TWO_NODES, "--node", str(node),
                   "--port", port]
            nodes.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          env=self.child_env()))
        for p in nodes:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, "stdout:\n%s\nstderr:\n%s" % (out, err))

    def export_starts(self):
        """{pid: ts of its first complete event} of a Chrome export of the run (µs on its axis)."""
        events = json.loads(self.run_trainprof(["export", "-o", "-", self.out]).stdout)["traceEvents"]
        first = {}
        for e in events:
            if e.get("ph") == "X":
                first[e["pid"]] = min(first.get(e["pid"], e["ts"]), e["ts"])
        self.assertEqual(len(first), 4, first)  # the ranks' phase ranges
        return first

    def test_a_host_clock_off_by_seconds_is_put_back_and_the_straggler_stays(self):
        self.run_nodes()
        before = self.report()
        clocks = {h["host"]: h for h in before["host_clocks"]}
        self.assertEqual(sorted(clocks), ["node-a", "node-b"], before["host_clocks"])
        self.assertEqual(clocks["node-a"]["source"], "reference")  # the host of rank 0
        b = clocks["node-b"]
        self.assertEqual(b["source"], "barrier")
        self.assertEqual(b["instants"], 3)  # the three dist.barrier() calls of every rank
        self.assertEqual(b["ranks"], 2)
        # One machine, one clock: the estimate is 0 up to the barriers' end skew.
        self.assertLess(abs(b["offset_ns"]), max(b["uncertainty_ns"], 1) * 4, b)
        self.assertLess(b["uncertainty_ns"], 20_000_000, b)
        self.assertEqual(straggler(before), 3)
        starts = {p["pid"]: p["start_realtime_ns"] for p in before["processes"]}
        timeline = self.export_starts()

        changed = shift_host_clock(os.path.join(self.out, "node-b"), "node-b", SHIFT_NS)
        # node-b's launcher and its two ranks (a process that exec'd has a file per image: TSan re-execs)
        self.assertEqual(len({re.search(r"pid-(\d+)", os.path.basename(c)).group(1) for c in changed}), 3, changed)
        after = self.report()
        b2 = {h["host"]: h for h in after["host_clocks"]}["node-b"]
        # The same instants, each moved by the shift: the offset moves by exactly the shift.
        self.assertEqual(b2["offset_ns"] - b["offset_ns"], SHIFT_NS)
        self.assertEqual(b2["uncertainty_ns"], b["uncertainty_ns"])
        self.assertLess(abs(b2["offset_ns"] - SHIFT_NS), max(b2["uncertainty_ns"], 1) * 4, b2)
        # node-b's processes are back on node-a's clock, where they were before the shift.
        for p in after["processes"]:
            self.assertEqual(p["start_realtime_ns"], starts[p["pid"]], p["pid"])
        self.assertEqual(straggler(after), 3)
        # The exported timeline (Perfetto) has node-b's events where they were before the shift.
        self.assertEqual(self.export_starts(), timeline)
        sentences = after["bottleneck"]["ranks"]["text"]
        rank_line = [line for line in sentences if line.startswith("Ranks on 2 hosts")]
        self.assertEqual(len(rank_line), 1, sentences)
        self.assertIn("aligned to node-a's", rank_line[0])
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("\nHosts\n", text)
        self.assertRegex(text, r"node-b +2 +2\.50 s +[0-9.]+ [µm]?s +barrier +3\n")


if __name__ == "__main__":
    unittest.main()
