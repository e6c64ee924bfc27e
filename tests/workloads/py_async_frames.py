"""Driver of tests/e2e/test_python_async.py: loads the test probe (tests/programs/py_async_probe.cc:
a SIGPROF handler reading this thread's Python frames the way the CPU sampler does, without the
interpreter) and prints, as one JSON object, what it read against what the interpreter says, in
the situations a training program puts its frames in.

    python py_async_frames.py PROBE.so CASE [ARG]
"""

import ctypes
import json
import os
import sys
import tempfile
import threading

lib = ctypes.CDLL(sys.argv[1])  # CDLL: the GIL is released around each call, as in a C extension
CASE = sys.argv[2]
ARG = sys.argv[3] if len(sys.argv) > 3 else ""
lib.tp_probe_frame.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                               ctypes.POINTER(ctypes.c_int)]
lib.tp_probe_count.argtypes = [ctypes.c_char_p]
for f in ("tp_probe_count", "tp_probe_ticks", "tp_probe_ticks_missed", "tp_probe_ticks_empty", "tp_probe_name_misses"):
    getattr(lib, f).restype = ctypes.c_ulong
lib.tp_probe_offset.restype = ctypes.c_long
lib.tp_probe_offset.argtypes = [ctypes.c_char_p]
lib.tp_probe_cost.restype = ctypes.c_double


def probed():
    """The frames the probe's last capture read: [(function, file, line)], innermost first."""
    out = []
    fn, fl, ln = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_int()
    i = 0
    while lib.tp_probe_frame(i, ctypes.byref(fn), ctypes.byref(fl), ctypes.byref(ln)):
        out.append((fn.value.decode(), fl.value.decode(), ln.value))
        i += 1
    return out


def name_of(code):
    """The function's name as the walk reads it: co_qualname (3.11+), co_name (3.10: no qualname)."""
    return getattr(code, "co_qualname", code.co_name)


def interpreter_view(frame, line):
    """The same frames as the interpreter gives them (the innermost at `line`)."""
    out = [(name_of(frame.f_code), frame.f_code.co_filename, line)]
    frame = frame.f_back
    while frame is not None:
        out.append((name_of(frame.f_code), frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return out


def capture():
    """{"got": probe's frames, "want": interpreter's, "missed": n} taken here (this function is the
    innermost frame)."""
    n, line = lib.tp_probe_capture_now(), sys._getframe().f_lineno
    return {"got": probed(), "want": interpreter_view(sys._getframe(), line), "missed": lib.tp_probe_missed(),
            "frames": n, "version": list(sys.version_info[:2])}


class Model:
    def forward(self):
        return capture()

    class Inner:
        def step(self):
            return (lambda: capture())()


def gen():
    yield capture()


async def coro():
    return capture()


def fünf():
    return capture()


def recurse(k):
    return capture() if k == 0 else recurse(k - 1)


def in_module(path, name, source):
    """Runs `source` (which defines run()) as module `name` from file `path`."""
    with open(path, "w") as f:
        f.write(source)
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.capture = capture
    return mod.run()


def cases():
    """name → a function returning capture()'s result."""
    tmp = tempfile.mkdtemp()
    shim_dir = os.path.join(tmp, "_trainprof")
    os.mkdir(shim_dir)

    def in_thread():
        box = {}
        t = threading.Thread(target=lambda: box.update(r=Model().forward()))
        t.start()
        t.join()
        return box["r"]

    def in_fork_child():
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, json.dumps(Model().forward()).encode())
            os._exit(0)
        os.close(w)
        data = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        os.waitpid(pid, 0)
        return json.loads(data)

    def coroutine():
        c = coro()
        try:
            c.send(None)
        except StopIteration as e:
            return e.value

    return {
        "method": lambda: Model().forward(),
        "nested_lambda": lambda: Model.Inner().step(),
        "generator": lambda: next(gen()),
        "coroutine": coroutine,
        "non_ascii_name": fünf,
        "non_ascii_file": lambda: in_module(os.path.join(tmp, "modülé_données.py"), "m1", "def run():\n    return capture()\n"),
        "long_file": lambda: in_module(os.path.join(tmp, "x" * 200 + ".py"), "m2", "def run():\n    return capture()\n"),
        "thread": in_thread,
        "fork_child": in_fork_child,
        "shim": lambda: in_module(os.path.join(shim_dir, "hooks.py"), "m3", "def run():\n    return capture()\n"),
        "deep": lambda: recurse(int(ARG or "100")),
    }


def offsets():
    """The layout's code and str offsets checked against objects' own addresses (id())."""
    code = capture.__code__
    ptr = lambda addr: ctypes.c_void_p.from_address(addr).value
    s = "plain_ascii_name"
    u = "n\u00e9e"
    u.encode("utf-8")
    return {
        "qualname": ptr(id(code) + lib.tp_probe_offset(b"code_qualname")) == id(getattr(code, "co_qualname", code.co_name)),
        "filename": ptr(id(code) + lib.tp_probe_offset(b"code_filename")) == id(code.co_filename),
        "linetable": ptr(id(code) + lib.tp_probe_offset(b"code_linetable")) == id(code.co_linetable),
        "firstlineno": ctypes.c_int.from_address(id(code) + lib.tp_probe_offset(b"code_firstlineno")).value
        == code.co_firstlineno,
        # The instructions: co_code_adaptive's first opcode (3.11+), the co_code object (3.10).
        "adaptive": ctypes.string_at(id(code) + lib.tp_probe_offset(b"code_adaptive"), 2)[0] != 0
        if sys.version_info >= (3, 11) else ptr(id(code) + lib.tp_probe_offset(b"code_code")) == id(code.co_code),
        "ascii_data": ctypes.string_at(id(s) + lib.tp_probe_offset(b"str_ascii_size"), len(s)) == s.encode(),
        "latin1_data": ctypes.string_at(id(u) + lib.tp_probe_offset(b"str_compact_size"), len(u))
        == u.encode("latin-1"),
    }


def profile(us, work):
    """Runs work() under the probe's ITIMER_PROF every `us` µs of CPU time; the tick counts."""
    lib.tp_probe_profile(us)
    try:
        work()
    finally:
        lib.tp_probe_profile(0)
    return {"ticks": lib.tp_probe_ticks(), "ticks_missed": lib.tp_probe_ticks_missed(),
            "ticks_empty": lib.tp_probe_ticks_empty(), "name_misses": lib.tp_probe_name_misses()}


def main():
    if lib.tp_probe_init() != 1:
        print(json.dumps({"unsupported": sys.version}))
        return
    if CASE == "offsets":
        print(json.dumps(offsets()))
    elif CASE == "spin_split":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import py_spin_split
        r = profile(1000, lambda: py_spin_split.main(int(ARG or "1000000")))
        r.update(heavy=lib.tp_probe_count(b"heavy"), light=lib.tp_probe_count(b"light"))
        print(json.dumps(r))
    elif CASE == "cost":
        def at_depth(k):
            return at_depth(k - 1) if k > 1 else lib.tp_probe_cost(2000)
        print(json.dumps({str(d): at_depth(d) for d in (1, 10, 30, 60)}))
    elif CASE == "churn":
        print(json.dumps(profile(int(ARG or "200"), churn)))
    else:
        print(json.dumps(cases()[CASE]()))


def churn():
    """Frames pushed and popped as fast as Python goes, generators, and threads whose thread states
    come and go, all while the timer interrupts them anywhere."""
    def leaf(i):
        return i + 1

    def g(n):
        for i in range(n):
            yield leaf(i)

    def work():
        x = 0
        for _ in range(20000):
            x += leaf(1) + sum(g(5))
        return x

    for _ in range(20):
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        work()
        for t in ts:
            t.join()


if __name__ == "__main__":
    main()
