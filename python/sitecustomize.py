"""trainprof's Python shim, put first on PYTHONPATH by `trainprof run` (see python/README.md).

It must never change what the program does: every step is guarded, nothing is printed on stdout,
and until `torch` is imported it is an import hook and nothing else. At start-up it imports the `sitecustomize` the
program would have had without us (a module, a package, a sourceless .pyc, an extension module:
the next one Python's import system finds), which becomes the module `import sitecustomize` gives.
"""

import os
import sys


def _trainprof_drop_frames(exc):
    """Drops the leading traceback entries of exc that are this module's frames, before a bare
    `raise` (CPython 3.11+ re-raises with the exception's own traceback: _trainprof/frames.py)."""
    try:
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None and tb.tb_frame.f_globals is globals():
            tb = tb.tb_next
        exc.__traceback__ = tb
    except Exception:
        pass


def _trainprof_next_sitecustomize_spec():
    """The spec of the `sitecustomize` Python's import system would have found without our folder
    on sys.path: a module, a package (`sitecustomize/__init__.py`), a sourceless `.pyc`, an
    extension module, or what another finder on sys.meta_path provides; None when there is none."""
    import importlib.machinery

    here = os.path.dirname(os.path.abspath(__file__))
    ours = {here, os.path.realpath(here)}

    def is_ours(entry):
        try:
            folder = os.path.abspath(entry or os.getcwd())
            return folder in ours or os.path.realpath(folder) in ours
        except Exception:  # not a str path (bytes, an object a path hook knows): not ours
            return False

    rest = [entry for entry in sys.path if not is_ours(entry)]
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            if finder is importlib.machinery.PathFinder:
                spec = find_spec("sitecustomize", rest)
            else:
                spec = find_spec("sitecustomize", None)
        except Exception:
            continue
        if spec is None:
            continue
        origin = getattr(spec, "origin", None)
        if isinstance(origin, str) and is_ours(os.path.dirname(origin)):
            continue  # a finder that searched sys.path itself found us again
        return spec
    return None


def _trainprof_load(spec):
    """Imports `sitecustomize` from spec as the import system would, and makes it the module that
    `import sitecustomize` gives the program (importlib keeps what sys.modules holds when this
    module's code ends). An exception from the program's sitecustomize propagates, so that `site`
    reports it as it would without trainprof ("Error in sitecustomize; ...")."""
    try:  # importlib.util's own, without importing importlib.util (contextlib, functools: ~7 ms)
        from importlib._bootstrap import module_from_spec
    except ImportError:
        from importlib.util import module_from_spec

    loader = spec.loader
    if loader is not None and not hasattr(loader, "exec_module") and hasattr(loader, "load_module"):
        del sys.modules[spec.name]
        return loader.load_module(spec.name)  # a legacy loader: it puts the module in sys.modules
    module = module_from_spec(spec)
    sys.modules[spec.name] = module
    if loader is not None:
        loader.exec_module(module)
    return module


if os.environ.get("TRAINPROF_LIB") and "torch" not in sys.modules:
    try:
        from _trainprof import import_hook as _trainprof_import_hook

        _trainprof_import_hook.install()
    except Exception:
        pass

# Then the program's own sitecustomize, whatever form it has.
try:
    _trainprof_next = _trainprof_next_sitecustomize_spec()
except Exception:
    _trainprof_next = None
if _trainprof_next is not None:
    try:
        _trainprof_load(_trainprof_next)
    except BaseException as _trainprof_error:  # the program's own: reported by `site` as usual
        _trainprof_drop_frames(_trainprof_error)
        raise
