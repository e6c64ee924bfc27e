"""A small, independent decoder of trainprof trace files (format versions 1 to 5, docs/trace-format.md).

Standard library only, so that the end-to-end tests and scripts/gpu_check (on a machine that may
have nothing but Python) can look at every record — the CUDA ones included — without the
collector. It is written from the format documentation, not from the collector's code.

    python3 trace_decode.py FILE...      prints a JSON summary of each file
"""

import json
import os
import struct
import sys

MAGIC = b"TRPROF\r\n"
CHUNK_MAGIC = 0x4B435054
HEADER = struct.Struct("<8sIIIIiiQQIIIIIiQQIIQQ16s16sQQ")  # FileHeader, 160 bytes
CHUNK = struct.Struct("<IIIIQIIQQQQ")  # ChunkHeader, 64 bytes
FLAG_TSC_CLOCK = 1 << 4  # version 4 (and 3, from writers before 4): timed records in TSC ticks, converted through the pairs

# tag: (name, fields). "dt" makes a record timed; "zs"/"ze" are zigzag times relative to the
# chunk's base; "z..." is a zigzag signed value; "bytes" follows a "length" field.
LAYOUT = {
    1: ("RANGE_PUSH", ["dt", "domain", "name", "category"]),
    2: ("RANGE_POP", ["dt", "domain"]),
    3: ("MARK", ["dt", "domain", "name", "category"]),
    4: ("RANGE_START", ["dt", "domain", "name", "category", "range_id"]),
    5: ("RANGE_END", ["dt", "range_id"]),
    16: ("STRING", ["id", "length", "bytes"]),
    17: ("DOMAIN", ["domain", "name"]),
    18: ("THREAD_NAME", ["tid", "name"]),
    19: ("CATEGORY_NAME", ["domain", "category", "name"]),
    20: ("DOMAIN_DESTROY", ["dt", "domain"]),
    21: ("ROLE", ["name"]),
    22: ("PROCESS_ENV", ["name"]),
    32: ("PROCESS_END", ["dt", "kind", "zcode"]),
    33: ("FORK", ["dt", "pid"]),
    34: ("EXEC", ["dt", "path"]),
    35: ("CHILD_EXIT", ["dt", "pid", "kind", "zcode"]),
    36: ("MISUSE", ["dt", "what", "detail"]),
    48: ("CUDA_API_ENTER", ["dt", "api", "cbid", "name", "correlation"]),
    49: ("CUDA_API_EXIT", ["dt", "correlation", "status"]),
    50: ("GPU_KERNEL", ["zs", "ze", "device", "context", "stream", "correlation", "name", "grid_x", "grid_y",
                        "grid_z", "block_x", "block_y", "block_z", "registers", "static_shared",
                        "dynamic_shared", "graph", "launch"]),
    51: ("GPU_MEMCPY", ["zs", "ze", "device", "context", "stream", "correlation", "copy_kind", "src_kind",
                        "dst_kind", "bytes_copied", "src_device", "dst_device", "flags", "graph"]),
    52: ("GPU_MEMSET", ["zs", "ze", "device", "context", "stream", "correlation", "bytes_set", "value", "memory",
                        "flags", "graph"]),
    53: ("GPU_SYNC", ["zs", "ze", "context", "stream_plus_1", "type", "correlation"]),
    54: ("GPU_OVERHEAD", ["zs", "ze", "kind", "object_kind", "object_id"]),
    55: ("GPU_DEVICE", ["device", "name", "cc_major", "cc_minor", "sms", "memory"]),
    56: ("GPU_CONTEXT", ["context", "device"]),
    57: ("GPU_DROPPED", ["dt", "count"]),
    58: ("GPU_STATUS", ["dt", "state", "result", "cupti_version", "driver_version", "message"]),
    59: ("CAPTURE", ["dt", "on", "reason"]),
    64: ("STACK", ["id", "length", "bytes"]),
    65: ("EVENT_STACK", ["stack"]),
    66: ("MODULE", ["bias", "start", "end", "path", "build_id"]),
    67: ("SAMPLE", ["dt", "stack", "python_missed"]),
    68: ("SAMPLE_THREAD_LOST", ["dt", "reason", "error", "limit", "queued"]),
    69: ("SAMPLE_PAUSED", ["dt", "cpu_ns"]),
}
GPU_STATE = {1: "on", 2: "unavailable", 3: "flushed"}
MEMCPY_KIND = {0: "unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
               9: "HtoH", 10: "PtoP"}
MEMORY_KIND = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed", 6: "device_static",
               7: "managed_static"}
SYNC_TYPE = {0: "unknown", 1: "event_synchronize", 2: "stream_wait_event", 3: "stream_synchronize",
             4: "context_synchronize"}


class TraceError(Exception):
    pass


def _varint(buf, pos, end):
    value = 0
    shift = 0
    while True:
        if pos >= end or shift > 63:
            raise TraceError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _unzigzag(v):
    return (v >> 1) ^ -(v & 1)


class TscToNs:
    """TSC ticks -> CLOCK_MONOTONIC ns: piecewise-linear between the calibration pairs (the
    nearest segment's line continued at the ends; one pair: the header's tsc_khz)."""

    def __init__(self, pairs, tsc_khz):
        pts = sorted({t: n for t, n in reversed(pairs) if t != 0}.items())
        kept = []
        for t, n in pts:  # drop pairs whose ns go back (the collector keeps the longest run)
            if not kept or n >= kept[-1][1]:
                kept.append((t, n))
        self.pts = kept
        self.khz = tsc_khz

    def __call__(self, ticks):
        pts = self.pts
        if not pts:
            return ticks
        if len(pts) == 1:
            (t0, n0), slope = pts[0], (1e6 / self.khz if self.khz else 1.0)
            return n0 + int((ticks - t0) * slope)
        lo, hi = 0, len(pts) - 1
        while hi - lo > 1:  # the segment [lo, lo + 1] holding ticks (or the nearest one)
            mid = (lo + hi) // 2
            if pts[mid][0] <= ticks:
                lo = mid
            else:
                hi = mid
        (t0, n0), (t1, n1) = pts[lo], pts[lo + 1]
        return n0 + (ticks - t0) * (n1 - n0) // (t1 - t0)


def decode_chunk(buf, begin, end, base_ns, to_ns=None, gpu_base_ns=None):
    """Yields (name, fields) for the records in buf[begin:end]; timed ones get "t" (absolute ns),
    GPU activity gets "start"/"end" (absolute ns). A TSC file's chunk: base_ns in ticks, to_ns
    converts, gpu_base_ns is the chunk's sync_ns."""
    pos = begin
    now = base_ns
    if gpu_base_ns is None:
        gpu_base_ns = base_ns
    while pos < end:
        tag = buf[pos]
        if tag not in LAYOUT:
            raise TraceError("unknown tag %d at offset %d" % (tag, pos))
        name, fields = LAYOUT[tag]
        pos += 1
        rec = {}
        for f in fields:
            if f == "bytes":
                n = rec["length"]
                if pos + n > end:
                    raise TraceError("truncated string")
                rec["text"] = bytes(buf[pos:pos + n]).decode("utf-8", "replace")
                rec["raw"] = bytes(buf[pos:pos + n])
                pos += n
                continue
            v, pos = _varint(buf, pos, end)
            if f == "dt":
                now += v
                rec["t"] = to_ns(now) if to_ns else now
            elif f in ("zs", "ze"):
                rec["start" if f == "zs" else "end"] = gpu_base_ns + _unzigzag(v)
            elif f == "zcode":
                rec["code"] = _unzigzag(v)
            else:
                rec[f] = v
        yield name, rec


def read_trace(path):
    """Returns {"header": {...}, "strings": {id: text}, "records": [ (name, fields, tid) ... ],
    "errors": [...]}; chunks are read in (thread, sequence) order."""
    with open(path, "rb") as fh:
        buf = fh.read()
    if len(buf) < HEADER.size or buf[:8] != MAGIC:
        raise TraceError("%s: not a trainprof trace" % path)
    (magic, version, region, chunk_size, flags, pid, ppid, start_rt, start_mono, meta_off, meta_size, image,
     tsc_khz, end_kind, end_code, end_mono, dropped, chunks, stacks_skipped, pid_ns, start_ticks, boot_id,
     run_id, samples_dropped, start_tsc) = HEADER.unpack_from(buf, 0)
    tsc = version >= 3 and bool(flags & FLAG_TSC_CLOCK)
    # Identity (zero = unknown): one process = same boot, pid namespace, pid and start ticks.
    header = dict(version=version, chunk_size=chunk_size, flags=flags, pid=pid, ppid=ppid,
                  start_monotonic_ns=start_mono, end_kind=end_kind, end_code=end_code,
                  end_monotonic_ns=end_mono, records_dropped=dropped, samples_dropped=samples_dropped, stacks_skipped=stacks_skipped, chunks_claimed=chunks, image=image,
                  pid_namespace=pid_ns, start_ticks=start_ticks,
                  boot_id=boot_id.hex() if any(boot_id) else "",
                  run_id=run_id.hex() if any(run_id) else "",
                  clock="tsc" if tsc else "monotonic", tsc_khz=tsc_khz if tsc else 0)
    # Metadata TLVs: u16 key, u32 length, bytes; key 0 ends them.
    meta = {}
    pos, end = meta_off, min(meta_off + meta_size, region, len(buf))
    while pos + 6 <= end:
        key, length = struct.unpack_from("<HI", buf, pos)
        if key == 0 or pos + 6 + length > end:
            break
        value = bytes(buf[pos + 6:pos + 6 + length]).decode("utf-8", "replace")
        name = {1: "host", 2: "command_line", 3: "executable", 4: "working_dir", 5: "env", 6: "version",
                7: "capture", 8: "python_shim_off", 9: "stacks"}.get(key)
        if name == "env":
            meta.setdefault("env", []).append(value)
        elif name is not None:
            meta[name] = value
        pos += 6 + length
    header["meta"] = meta
    chunk_list = []
    off = region
    while off + CHUNK.size <= len(buf):
        magic, tid, index, seq, base, committed, _r, sync_t, sync_n, last_t, last_n = CHUNK.unpack_from(buf, off)
        if magic == CHUNK_MAGIC:
            chunk_list.append((index, seq, tid, base, off + CHUNK.size,
                               min(off + CHUNK.size + committed, off + chunk_size, len(buf)),
                               (sync_t, sync_n), (last_t, last_n)))
        off += chunk_size
    chunk_list.sort()
    to_ns = None
    if tsc:
        pairs = [(start_tsc, start_mono)] + [c[6] for c in chunk_list] + [c[7] for c in chunk_list]
        to_ns = TscToNs(pairs, tsc_khz)
        header["clock_pairs"] = to_ns.pts
    strings = {}
    records = []
    errors = []
    for index, seq, tid, base, begin, end, sync, _last in chunk_list:
        try:
            for name, rec in decode_chunk(buf, begin, end, base, to_ns, sync[1] if tsc else None):
                if name == "STRING":
                    strings[rec["id"]] = rec["text"]
                rec["tid"] = tid
                records.append((name, rec))
        except TraceError as e:
            errors.append("thread %d chunk %d: %s" % (tid, seq, e))
    return {"path": path, "header": header, "strings": strings, "records": records, "errors": errors}


def of(trace, name):
    """The fields of every record called `name`."""
    return [r for n, r in trace["records"] if n == name]


def string(trace, sid):
    return trace["strings"].get(sid, "") if sid else ""


def stack_words(raw):
    """A STACK record's bytes as its frame values (docs/trace-format.md, "Stacks")."""
    words, pos = [], 0
    while pos < len(raw):
        v, pos = _varint(raw, pos, len(raw))
        words.append(v)
    return words


def stacks(trace):
    """{stack id: [frame, ...]} innermost first; a native frame is ("native", address), a Python
    frame ("python", function, file, line) with the strings resolved."""
    out = {}
    for r in of(trace, "STACK"):
        words, frames, i = stack_words(r["raw"]), [], 0
        while i < len(words):
            w = words[i]
            if w & 1:
                fn, file, line = w >> 1, words[i + 1] if i + 1 < len(words) else 0, words[i + 2] if i + 2 < len(words) else 0
                frames.append(("python", string(trace, fn), string(trace, file), line))
                i += 3
            else:
                frames.append(("native", w >> 1))
                i += 1
        out[r["id"]] = frames
    return out


def event_stacks(trace):
    """[(timed record name, its fields, stack id)] for every EVENT_STACK, with the timed record of
    the same thread and chunk before it (None when the EVENT_STACK starts its chunk)."""
    out, prev = [], None
    for n, r in trace["records"]:
        if n == "EVENT_STACK":
            ok = prev is not None and prev[1]["tid"] == r["tid"]
            out.append((prev[0] if ok else None, prev[1] if ok else None, r["stack"]))
        elif "t" in r:
            prev = (n, r)
    return out


def summary(trace):
    counts = {}
    for n, _ in trace["records"]:
        counts[n] = counts.get(n, 0) + 1
    kernels = {}
    for k in of(trace, "GPU_KERNEL"):
        kernels[string(trace, k["name"])] = kernels.get(string(trace, k["name"]), 0) + 1
    status = [dict(state=GPU_STATE.get(s["state"], s["state"]), result=s["result"], cupti=s["cupti_version"],
                   driver=s["driver_version"], message=string(trace, s["message"])) for s in of(trace, "GPU_STATUS")]
    return {"path": trace["path"], "pid": trace["header"]["pid"], "records": counts, "kernels": kernels,
            "gpu_status": status, "errors": trace["errors"]}


if __name__ == "__main__":
    paths = []
    for arg in sys.argv[1:]:
        if os.path.isdir(arg):
            paths += sorted(os.path.join(arg, f) for f in os.listdir(arg) if f.endswith(".trace"))
        else:
            paths.append(arg)
    json.dump([summary(read_trace(p)) for p in paths], sys.stdout, indent=2)
    print()
