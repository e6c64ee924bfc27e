"""NVTX ranges opened by helpers of the program's own, the way training scripts wrap them: a
context manager (contextlib) and a decorator, each used by two callers with known counts, for the
call-site table's split by caller (tests/e2e/test_python_stacks.py):

    python_range_helpers.py LIB [ctypes|nvtx]

  train():    30 x `with annotate("io")` and 30 x train_step (decorated with @traced("step"))
  evaluate(): 10 x `with annotate("io")` and 10 x eval_step (decorated with @traced("step"))

LIB is tests/programs/libtp_pynvtx.so through ctypes.PyDLL (the GIL held, as the `nvtx` package
and torch.cuda.nvtx hold it); with "nvtx", the `nvtx` package's push_range/pop_range. Lines the
test looks for end with "# site: NAME".
"""

import contextlib
import ctypes
import functools
import sys

LIB = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "ctypes"

# push(NAME(name)) and pop(): library calls with no Python frame of this script in between.
if MODE == "nvtx":
    import nvtx

    push, pop, NAME = nvtx.push_range, nvtx.pop_range, str
else:
    _lib = ctypes.PyDLL(LIB)
    _lib.tp_nvtx_push.argtypes = [ctypes.c_char_p]
    push, pop, NAME = _lib.tp_nvtx_push, _lib.tp_nvtx_pop, str.encode


@contextlib.contextmanager
def annotate(name):
    push(NAME(name))  # site: annotate
    try:
        yield
    finally:
        pop()


def traced(name):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            push(NAME(name))  # site: traced
            try:
                return fn(*args, **kwargs)
            finally:
                pop()
        return wrapper
    return decorator


def load(i):
    return [x * x for x in range(200 + i)]


@traced("step")
def train_step(batch):
    return sum(batch)


@traced("step")
def eval_step(batch):
    return max(batch)


def train():
    for i in range(30):
        with annotate("io"):  # site: train->annotate
            batch = load(i)
        train_step(batch)  # site: train->train_step


def evaluate():
    for i in range(10):
        with annotate("io"):  # site: evaluate->annotate
            batch = load(i)
        eval_step(batch)  # site: evaluate->eval_step


if __name__ == "__main__":
    train()
    evaluate()
    print("helpers done")
