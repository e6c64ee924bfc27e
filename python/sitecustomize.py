"""trainprof's Python shim, put first on PYTHONPATH by `trainprof run` (see python/README.md).

It must never change what the program does: every step is guarded, nothing is printed on stdout,
and it costs nothing until a process forks. It then runs the `sitecustomize` the program would
have had without us.

What it does now: names the role of DataLoader worker processes (a fork made while a
torch.utils.data DataLoader iterator starts its workers) through the injection library's C entry
point `trainprof_set_role`.
"""

import os
import sys


def _trainprof_lib():
    path = os.environ.get("TRAINPROF_LIB")
    if not path:
        return None
    try:
        import ctypes

        lib = ctypes.CDLL(path)  # already loaded through LD_PRELOAD: same handle, no new copy
        lib.trainprof_set_role.argtypes = [ctypes.c_char_p]
        lib.trainprof_set_role.restype = ctypes.c_int
        return lib
    except Exception:
        return None


def _role_of_fork():
    """Returns the role of a process forked from the current Python stack, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename.replace("\\", "/")
        if filename.endswith("torch/utils/data/dataloader.py"):
            return "DataLoader worker"
        frame = frame.f_back
    return None


def _after_fork_in_child():
    try:
        role = _role_of_fork()
        if role is None:
            return
        lib = _trainprof_lib()
        if lib is not None:
            lib.trainprof_set_role(role.encode())
    except Exception:
        pass


def _chain_next_sitecustomize():
    """Runs the sitecustomize.py that Python would have found without our folder first."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        if folder == here:
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate, "rb") as f:
                code = compile(f.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate, "__builtins__": __builtins__})
            return


if os.environ.get("TRAINPROF_LIB") and hasattr(os, "register_at_fork"):
    try:
        os.register_at_fork(after_in_child=_after_fork_in_child)
    except Exception:
        pass

try:
    _chain_next_sitecustomize()
except Exception as _error:  # the program's own sitecustomize failed: say so as Python would
    sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                     % (type(_error).__name__, _error))
