"""trainprof's Python shim, put first on PYTHONPATH by `trainprof run` (see python/README.md).

It must never change what the program does: every step is guarded, nothing is printed on stdout,
and it costs nothing until `torch` is imported. It then runs the `sitecustomize` the program
would have had without us.
"""

import os
import sys


def _install_import_hook():
    """Instruments torch right after `import torch` finished (_trainprof/torch_phases.py)."""
    import importlib.abc
    import importlib.util

    class _TorchHook(importlib.abc.MetaPathFinder):
        busy = False

        def find_spec(self, fullname, path=None, target=None):
            if fullname != "torch" or self.busy:
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

            def exec_and_instrument(module):
                exec_module(module)
                try:
                    sys.meta_path.remove(hook)
                except ValueError:
                    pass
                try:
                    from _trainprof import native, torch_phases

                    if native.get() is not None:
                        torch_phases.install(module)
                except Exception:
                    pass

            loader.exec_module = exec_and_instrument
            return spec

    hook = _TorchHook()
    sys.meta_path.insert(0, hook)


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


if os.environ.get("TRAINPROF_LIB") and "torch" not in sys.modules:
    try:
        _install_import_hook()
    except Exception:
        pass

try:
    _chain_next_sitecustomize()
except Exception as _error:  # the program's own sitecustomize failed: say so as Python would
    sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                     % (type(_error).__name__, _error))
