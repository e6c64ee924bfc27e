"""What a stack with Python frames costs per NVTX range (docs/cli.md, "Call stacks"): push+pop
through build/tests/programs/libtp_pynvtx.so at a few Python depths, with the GIL held
(ctypes.PyDLL: native + Python frames) and released (ctypes.CDLL: native frames only). Run it
under trainprof, with and without stacks, and compare:

    trainprof run -o /tmp/b --backtrace=none -- /usr/bin/python3 bench/python/python_stack_cost.py LIB
    trainprof run -o /tmp/b --backtrace=nvtx -- /usr/bin/python3 bench/python/python_stack_cost.py LIB

Prints ns per push+pop (the best of 5 rounds). Not run by ctest."""
import ctypes
import sys
import time


def at_depth(push, pop, depth, n):
    if depth > 0:
        return at_depth(push, pop, depth - 1, n)
    t = time.perf_counter_ns()
    for _ in range(n):
        push(b"r")
        pop()
    return (time.perf_counter_ns() - t) / n


for kind, loader in (("GIL held (native + Python frames)", ctypes.PyDLL),
                     ("GIL released (native frames only)", ctypes.CDLL)):
    lib = loader(sys.argv[1])
    lib.tp_nvtx_push.argtypes = [ctypes.c_char_p]
    for depth in (0, 10, 60):
        at_depth(lib.tp_nvtx_push, lib.tp_nvtx_pop, depth, 2000)
        best = min(at_depth(lib.tp_nvtx_push, lib.tp_nvtx_pop, depth, 20000) for _ in range(5))
        print("%s, %d Python frames: %.0f ns per push+pop" % (kind, depth + 2, best))
