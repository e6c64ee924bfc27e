"""The import hook of trainprof's Python shim, installed by sitecustomize.py: instruments torch right
after `import torch` finished (torch_phases.py, torch_ops.py), and Lightning's profiler base class
right after its module was imported (lightning_phases.py). In this package (not in
sitecustomize.py) so that its frames, which sit under every `import torch` of the program, are
trainprof's own to the stack walkers (a `_trainprof/` file: inject/stacks/python_walk.h) and to
tracebacks (frames.py)."""

import sys

from _trainprof.frames import drop_own_frames


def _spec_from_the_other_finders(hook, fullname, path, target):
    """The spec the import system would find for fullname without `hook`: the first other finder
    of sys.meta_path that has one, as importlib._bootstrap._find_spec asks them; None if none."""
    for finder in list(sys.meta_path):
        if finder is hook:
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


def install():
    """Instruments torch right after `import torch` finished (_trainprof/torch_phases.py), and
    Lightning's profiler base class right after its module was imported (lightning_phases.py)."""
    def instrument(fullname, module):
        from _trainprof import native

        if native.get() is None:
            return
        if fullname == "torch":
            from _trainprof import torch_ops, torch_phases

            torch_phases.install(module)
            torch_ops.enable(module)
        else:
            from _trainprof import lightning_phases

            lightning_phases.install(module)

    if any(getattr(f, "_trainprof_hook", False) for f in sys.meta_path):
        return  # this module run again (`import sitecustomize` after the program's own failed)

    # A plain class: a meta path finder needs only find_spec (PEP 451). importlib.abc.MetaPathFinder
    # would import importlib.resources, pathlib and typing (~60 modules, ~15 ms) into every Python
    # process trainprof starts, torch or not; importlib.util, contextlib and functools (~7 ms).
    class _ImportHook:
        _trainprof_hook = True
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
                spec = _spec_from_the_other_finders(self, fullname, path, target)
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
                try:
                    exec_module(module)
                except BaseException as e:  # e.g. a broken torch install: its traceback as without us
                    drop_own_frames(e)
                    raise
                try:
                    instrument(fullname, module)
                except Exception:
                    pass

            loader.exec_module = exec_and_instrument
            return spec

    sys.meta_path.insert(0, _ImportHook())
