"""Moves one host's wall clock in a directory of trace files, as if that host's CLOCK_REALTIME had
been off by NS nanoseconds during the run (no NTP, a drifting VM): adds NS to the header's
start_realtime_ns (FileHeader offset 32, docs/trace-format.md) of every trace file whose metadata
names HOST. The monotonic clock, and so every record's time, stays as it was.

    shift_host_clock.py DIR HOST NS      prints the files it changed
"""

import os
import struct
import sys

from trace_decode import read_trace

START_REALTIME_OFFSET = 32  # FileHeader.start_realtime_ns


def shift_host_clock(directory, host, ns):
    """Returns the paths changed."""
    changed = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not name.endswith(".trace"):
            continue
        if read_trace(path)["header"]["meta"].get("host") != host:
            continue
        with open(path, "r+b") as f:
            f.seek(START_REALTIME_OFFSET)
            (realtime,) = struct.unpack("<Q", f.read(8))
            f.seek(START_REALTIME_OFFSET)
            f.write(struct.pack("<Q", realtime + ns))
        changed.append(path)
    return changed


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    for p in shift_host_clock(sys.argv[1], sys.argv[2], int(sys.argv[3])):
        print(p)
