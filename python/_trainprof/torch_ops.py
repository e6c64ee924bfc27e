"""`trainprof run --trace=torch-ops`: PyTorch's operators (aten::addmm, ...) recorded through
PyTorch's own ITT emission (`torch.autograd.profiler.emit_itt`, entered on the thread that imports
torch, right after `import torch`, until the interpreter exits). The injection library is the ITT
collector (INTEL_LIBITTNOTIFY64, set by `trainprof run`; inject/itt_collector.cc): each operator
becomes a range of the domain "trainprof.torch-ops".

PyTorch allows one profiler per thread: while the program's own profiler (torch.profiler.profile,
torch.autograd.profiler.profile, emit_nvtx, ...) is on, ours is off on that thread and comes back
when the program's is disabled (said once on stderr). A PyTorch built without ITT (Debian's 1.13) records no operators:
said once on stderr."""

import atexit
import os
import sys
import threading

_state = {"ctx": None, "thread": None, "paused": False, "told": False}


def _say(text):
    try:
        sys.stderr.write("trainprof: --trace=torch-ops: %s\n" % text)
    except Exception:
        pass


def wanted():
    return "torch-ops" in os.environ.get("TRAINPROF_TRACE", "").split(",")


def _enter(torch):
    ctx = torch.autograd.profiler.emit_itt()
    ctx.__enter__()
    _state["ctx"] = ctx


def _leave():
    ctx, _state["ctx"] = _state["ctx"], None
    if ctx is not None:
        ctx.__exit__(None, None, None)


def _on_our_thread():
    return _state["thread"] is threading.current_thread()


def _make_wrappers(torch, enable, disable):
    def enable_profiler(*args, **kwargs):
        if _state["ctx"] is not None and _on_our_thread():
            try:
                _leave()
                _state["paused"] = True
                if not _state["told"]:
                    _state["told"] = True
                    _say("the program's own PyTorch profiler is on (PyTorch allows one per thread): "
                         "operators are not recorded by trainprof until it stops")
            except Exception:
                pass
        return enable(*args, **kwargs)

    def disable_profiler(*args, **kwargs):
        result = disable(*args, **kwargs)
        if _state["paused"] and _on_our_thread():
            _state["paused"] = False
            try:
                _enter(torch)
            except Exception:
                pass
        return result

    return enable_profiler, disable_profiler


def _patch_profiler_entry(torch):
    """The program's profilers call torch.autograd.profiler's module-level _enable_profiler /
    _disable_profiler (and emit_nvtx/emit_itt the same): pause ours around theirs."""
    mod = torch.autograd.profiler
    enable, disable = getattr(mod, "_enable_profiler", None), getattr(mod, "_disable_profiler", None)
    if enable is None or disable is None:
        return
    mod._enable_profiler, mod._disable_profiler = _make_wrappers(torch, enable, disable)


def enable(torch):
    """Enters emit_itt() when --trace has torch-ops; never raises."""
    if not wanted() or _state["thread"] is not None:
        return
    try:
        itt = getattr(getattr(torch, "profiler", None), "itt", None)
        if itt is None or not itt.is_available():
            _say("this PyTorch (%s) was built without ITT (torch.profiler.itt.is_available() is False): "
                 "its operators are not recorded" % getattr(torch, "__version__", "?"))
            return
        _enter(torch)
        _state["thread"] = threading.current_thread()
        _patch_profiler_entry(torch)
        # Left entered, PyTorch warns of a leaked callback at exit.
        atexit.register(lambda: _on_our_thread() and _leave())
    except Exception as e:
        _say("could not enable PyTorch's ITT emission (%s): operators are not recorded" % e)
