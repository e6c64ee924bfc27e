"""trainprof's Python shim, put first on PYTHONPATH by `trainprof run` (see python/README.md).

It must never change what the program does: every step is guarded, nothing is printed on stdout,
and it costs nothing until `torch` is imported. It then runs the `sitecustomize` the program
would have had without us.
"""

import os
import sys


def _trainprof_install_import_hook():
    """Instruments torch right after `import torch` finished (_trainprof/torch_phases.py), and
    Lightning's profiler base class right after its module was imported (lightning_phases.py)."""
    import importlib.abc
    import importlib.util

    def instrument(fullname, module):
        from _trainprof import native

        if native.get() is None:
            return
        if fullname == "torch":
            from _trainprof import torch_phases

            torch_phases.install(module)
        else:
            from _trainprof import lightning_phases

            lightning_phases.install(module)

    class _ImportHook(importlib.abc.MetaPathFinder):
        busy = False
        # Lightning's profiler modules: _trainprof/lightning_phases.py MODULES (not imported here:
        # a program without torch pays for nothing but this set).
        pending = {"torch", "lightning.pytorch.profilers.profiler", "pytorch_lightning.profilers.profiler",
                   "pytorch_lightning.profiler.profiler", "pytorch_lightning.profiler.base"}

        def find_spec(self, fullname, path=None, target=None):
            if fullname not in self.pending or self.busy:
                return None
            self.busy = True
            try:
                spec = importlib.util.find_spec(fullname)
            finally:
                self.busy = False
            loader = getattr(spec, "loader", None)
            exec_module = getattr(loader, "exec_module", None)
            if exec_module is None:
                return None
            self.pending.discard(fullname)
            if not self.pending:
                try:
                    sys.meta_path.remove(self)
                except ValueError:
                    pass

            def exec_and_instrument(module):
                exec_module(module)
                try:
                    instrument(fullname, module)
                except Exception:
                    pass

            loader.exec_module = exec_and_instrument
            return spec

    sys.meta_path.insert(0, _ImportHook())


def _trainprof_next_sitecustomize():
    """The sitecustomize.py Python would have found without our folder first, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        if folder == here:
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            return candidate
    return None


if os.environ.get("TRAINPROF_LIB") and "torch" not in sys.modules:
    try:
        _trainprof_install_import_hook()
    except Exception:
        pass

# Run the program's own sitecustomize in this module's namespace: `import sitecustomize` then gives
# the program its module's names, as without trainprof.
try:
    _trainprof_next = _trainprof_next_sitecustomize()
    if _trainprof_next is not None:
        with open(_trainprof_next, "rb") as _trainprof_f:
            _trainprof_code = compile(_trainprof_f.read(), _trainprof_next, "exec")
        __file__ = _trainprof_next
        exec(_trainprof_code, globals())
except Exception as _trainprof_error:  # the program's own sitecustomize failed: say so as Python would
    sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                     % (type(_trainprof_error).__name__, _trainprof_error))
