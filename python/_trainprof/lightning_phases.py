"""Records Lightning's profiler actions as ranges, named as Lightning's SimpleProfiler names them
("[Strategy]SingleDeviceStrategy.training_step", "[LightningModule]Net.optimizer_step",
"run_training_batch", "[_TrainingEpochLoop].train_dataloader_next", ...).

Lightning reports every action of its loops to `trainer.profiler` through `start(action)` and
`stop(action)` (its `profile()` context manager calls them), and it always has a profiler — a
PassThroughProfiler when the user asked for none. So wrapping `start`/`stop` of the Profiler base
class and of every subclass (including the user's, through `__init_subclass__`) sees each action
once, whichever profiler the Trainer has, and leaves that profiler working as before.

Actions that are phases of a step get their category (format/trainprof/phases.h): training_step,
validation/test/predict_step, backward, optimizer_step, optimizer_zero_grad. The others are
ranges without a category, listed in the report's NVTX table like SimpleProfiler's rows.
"""

import functools
import os
import threading

from . import native as N
from .frames import Calling

_local = threading.local()
_MARKER = "_trainprof_lightning"
_categories = {}

# Modules that define Lightning's profiler base class, by Lightning version:
# 2.x (`lightning` and `pytorch_lightning`), 1.7-1.9, 1.5-1.6.
MODULES = {
    "lightning.pytorch.profilers.profiler": "Profiler",
    "pytorch_lightning.profilers.profiler": "Profiler",
    "pytorch_lightning.profiler.profiler": "Profiler",
    "pytorch_lightning.profiler.base": "BaseProfiler",
}


def category(action):
    """The phase category of a Lightning action name, 0 for none."""
    c = _categories.get(action)
    if c is None:
        if action.endswith(".training_step"):
            c = N.TRAINING_STEP
        elif action.endswith((".validation_step", ".test_step", ".predict_step")):
            c = N.VALIDATION_STEP
        elif action.endswith(".optimizer_step") or action == "optimizer_step":
            c = N.OPTIMIZER_STEP
        elif action.endswith(".optimizer_zero_grad"):
            c = N.ZERO_GRAD
        elif action.endswith(".backward") and action.startswith(("[Strategy]", "[LightningModule]")):
            c = N.BACKWARD
        else:
            c = 0
        _categories[action] = c
    return c


def _open_actions():
    stack = getattr(_local, "actions", None)
    if stack is None:
        stack = _local.actions = []
    return stack


def _wrap_start(fn):
    @functools.wraps(fn)
    def start(self, action_name, *args, **kwargs):
        if getattr(_local, "in_start", False):  # a subclass's start calling super().start()
            with Calling():
                return fn(self, action_name, *args, **kwargs)
        with Calling(_local, "in_start"):
            result = fn(self, action_name, *args, **kwargs)
        nat = N.get()
        if nat is not None and nat.enabled and isinstance(action_name, str):
            try:
                nat.push(action_name, category(action_name))
                _open_actions().append(action_name)
            except Exception:
                pass
        return result

    setattr(start, _MARKER, True)
    return start


def _wrap_stop(fn):
    @functools.wraps(fn)
    def stop(self, action_name, *args, **kwargs):
        if not getattr(_local, "in_stop", False):
            stack = getattr(_local, "actions", None)
            # Close the action and anything left open inside it; a stop without a start is ignored.
            if stack and action_name in stack:
                nat = N.get()
                while stack:
                    top = stack.pop()
                    if nat is not None and nat.enabled:
                        try:
                            nat.pop()
                        except Exception:
                            pass
                    if top == action_name:
                        break
        with Calling(_local, "in_stop"):
            return fn(self, action_name, *args, **kwargs)

    setattr(stop, _MARKER, True)
    return stop


def _wrap_class(cls):
    for attr, wrap in (("start", _wrap_start), ("stop", _wrap_stop)):
        fn = cls.__dict__.get(attr)
        if fn is not None and callable(fn) and not getattr(fn, _MARKER, False):
            setattr(cls, attr, wrap(fn))


def _all_subclasses(cls):
    seen, todo = [], [cls]
    while todo:
        c = todo.pop()
        if c not in seen:
            seen.append(c)
            todo.extend(c.__subclasses__())
    return seen


def install(module):
    """Instruments the profiler base class of the just-imported `module` (a key of MODULES)."""
    base = getattr(module, MODULES.get(module.__name__, "Profiler"), None)
    if not isinstance(base, type) or base.__dict__.get(_MARKER):
        return
    orig = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if orig is not None:
            orig.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            _wrap_class(cls)
        except Exception:
            pass

    base.__init_subclass__ = classmethod(__init_subclass__)
    for cls in _all_subclasses(base):
        _wrap_class(cls)
    setattr(base, _MARKER, True)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: setattr(_local, "actions", []))
