"""The injection library's C entry points (inject/c_api.cc), through ctypes.

Ranges go to the NVTX domain "trainprof" with a category per phase; the numbers are those of
format/trainprof/phases.h (part of the trace format: docs/trace-format.md).
"""

import ctypes
import os

DOMAIN = b"trainprof"

# format::Phase
DATA_WAIT = 1
DATA_END = 2
FETCH = 3
GET_ITEM = 4
COLLATE = 5
WORKER_INIT = 6
FORWARD = 7
BACKWARD = 8
OPTIMIZER_STEP = 9
ZERO_GRAD = 10
COLLECTIVE = 11
TRAINING_STEP = 12
VALIDATION_STEP = 13
DATALOADER_ITER = 14
CHECKPOINT = 15
INIT_PROCESS_GROUP = 16
DATALOADER = 17
DATALOADER_BATCH = 18
PROFILER_STEP = 19  # torch.profiler's ProfilerStep#N (imported Kineto traces; the shim does not record it)

CATEGORY_NAMES = {
    DATA_WAIT: "data wait", DATA_END: "data end", FETCH: "batch fetch", GET_ITEM: "dataset item",
    COLLATE: "collate", WORKER_INIT: "worker start-up", FORWARD: "forward", BACKWARD: "backward",
    OPTIMIZER_STEP: "optimizer step", ZERO_GRAD: "zero_grad", COLLECTIVE: "collective",
    TRAINING_STEP: "training step", VALIDATION_STEP: "validation step",
    DATALOADER_ITER: "DataLoader iterator start", CHECKPOINT: "checkpoint",
    INIT_PROCESS_GROUP: "init_process_group",
    DATALOADER: "DataLoader", DATALOADER_BATCH: "DataLoader batch", PROFILER_STEP: "profiler step",
}


class Native:
    """Per-process view of the library. After fork() the child re-interns names and re-creates
    the domain: ids are per trace file."""

    def __init__(self, path):
        # already loaded through LD_PRELOAD: the same copy. PyDLL keeps the GIL held during the
        # calls (CDLL would release it): with --backtrace=nvtx the library adds the Python frames
        # of the caller to the stack of each phase range, which it reads only under the GIL.
        lib = ctypes.PyDLL(path)
        u32 = ctypes.c_uint32
        lib.trainprof_is_recording.restype = ctypes.c_int
        lib.trainprof_set_role.argtypes = [ctypes.c_char_p]
        lib.trainprof_set_env.argtypes = [ctypes.c_char_p]
        lib.trainprof_domain.argtypes = [ctypes.c_char_p]
        lib.trainprof_domain.restype = u32
        lib.trainprof_string.argtypes = [ctypes.c_char_p]
        lib.trainprof_string.restype = u32
        lib.trainprof_category.argtypes = [u32, u32, ctypes.c_char_p]
        lib.trainprof_push.argtypes = [u32, u32, u32]
        lib.trainprof_push.restype = ctypes.c_int
        lib.trainprof_pop.argtypes = [u32]
        lib.trainprof_pop.restype = ctypes.c_int
        lib.trainprof_mark.argtypes = [u32, u32, u32]
        self._lib = lib
        self._push = lib.trainprof_push
        self._pop = lib.trainprof_pop
        self.reset()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.reset)

    def reset(self):
        self.enabled = bool(self._lib.trainprof_is_recording())
        self._domain = None
        self._ids = {}

    def domain(self):
        d = self._domain
        if d is None:
            d = self._lib.trainprof_domain(DOMAIN)
            for category, name in CATEGORY_NAMES.items():
                self._lib.trainprof_category(d, category, name.encode())
            self._domain = d
        return d

    def name_id(self, name):
        i = self._ids.get(name)
        if i is None:
            i = self._lib.trainprof_string(name.encode("utf-8", "replace"))
            self._ids[name] = i
        return i

    def push(self, name, category):
        self._push(self.domain(), self.name_id(name), category)

    def pop(self):
        self._pop(self.domain())

    def mark(self, name, category):
        self._lib.trainprof_mark(self.domain(), self.name_id(name), category)

    def set_role(self, role):
        self._lib.trainprof_set_role(role.encode())

    def set_env(self, name, value):
        """A rank variable learned after start (the trace header has those set before it)."""
        self._lib.trainprof_set_env(("%s=%s" % (name, value)).encode())


_native = None


def get():
    """The Native of this process, or None when the library is not there or not recording."""
    global _native
    if _native is None:
        path = os.environ.get("TRAINPROF_LIB")
        if not path:
            return None
        try:
            _native = Native(path)
        except Exception:
            _native = False
    return _native or None
