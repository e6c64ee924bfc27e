"""Records the phases of a PyTorch training loop, by wrapping PyTorch's own entry points when
`torch` has been imported (PyTorch 1.13 and 2.x). Names follow PyTorch's (torch.profiler's)
names where it has them; categories follow format/trainprof/phases.h.

  main process   creating a DataLoader iterator (iter(loader): starts its workers),
                 DataLoader iterator __next__ (the wait for the next batch), top-level
                 nn.Module calls (forward; "<Module>.forward [eval]" without grad or in eval()),
                 Tensor.backward / torch.autograd.backward, Optimizer.step / zero_grad,
                 torch.distributed collectives, whether it constructs a DistributedDataParallel
                 (TRAINPROF_DDP=<backend>); marks naming each DataLoader (at iter(loader),
                 and inside each wait: which loader it waits on); torch.save / torch.load,
                 torch.distributed.init_process_group
  workers        the batch fetch, each dataset __getitem__, collate_fn, worker_init_fn, and a
                 mark naming the worker's loader

Every wrapper is re-entrancy guarded per thread and phase (only the outermost call records: a
top-level module's submodules, torch's own nested wrappers), and calls straight through when
this process does not record. An exception from the wrapped call is re-raised without the
wrapper's frame in its traceback (frames.py).
"""

import functools
import inspect
import os
import threading

from . import native as N
from .frames import Calling, drop_own_frames

_local = threading.local()
_MARKER = "_trainprof_phase"


def _phase_wrapper(fn, category, name_of, guard=None, only_inside=None, before=None):
    """Wraps fn so that its outermost call on a thread is a range of `category` (the thread-local
    flag `guard` says a call is open). With `only_inside` (a flag of another wrapper), only calls
    made while that flag is set are recorded; `before(args)` runs before a recorded call."""
    guard = guard or "g%d" % category
    nat = N.get()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if (nat is None or not nat.enabled or getattr(_local, guard, False)
                or (only_inside is not None and not getattr(_local, only_inside, False))):
            try:
                return fn(*args, **kwargs)
            except BaseException as e:
                drop_own_frames(e)
                raise
        if before is not None:
            before(args)
        setattr(_local, guard, True)
        try:
            nat.push(name_of(args), category)
            pushed = True
        except Exception:
            setattr(_local, guard, False)
            pushed = False
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            if pushed:
                nat.pop()
                setattr(_local, guard, False)
            drop_own_frames(e)
            raise
        if pushed:
            nat.pop()
            setattr(_local, guard, False)
        return result

    setattr(wrapper, _MARKER, category)
    return wrapper


def _after_call(fn, after, marker):
    """Wraps fn so that after(native, args, result) runs once a call returned, when this process
    records (what a call set up: a rank, DDP use); an exception from `after` is dropped, one from fn
    re-raised without the wrapper's frame. `marker` tags the wrapper as installed."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            drop_own_frames(e)
            raise
        nat = N.get()
        if nat is not None and nat.enabled:
            try:
                after(nat, args, result)
            except Exception:
                pass
        return result

    setattr(wrapper, _MARKER, marker)
    return wrapper


def _wrap_attr(owner, attr, category, name_of, guard=None):
    fn = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
    if fn is None or getattr(fn, _MARKER, None) is not None:
        return
    setattr(owner, attr, _phase_wrapper(fn, category, name_of, guard))


def _cached_name(fmt):
    """name_of(args) for methods: fmt % type(self).__name__, cached per class."""
    cache = {}

    def name_of(args):
        cls = type(args[0]) if args else None
        name = cache.get(cls)
        if name is None:
            name = fmt % (cls.__name__ if cls is not None else "?")
            cache[cls] = name
        return name

    return name_of


# ---- DataLoader: main process ------------------------------------------------------------------

def _patch_dataloader_iter(torch):
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    orig = base.__dict__.get("__next__")
    if orig is None or getattr(orig, _MARKER, None) is not None:
        return
    nat = N.get()
    name_of = _cached_name("enumerate(DataLoader)#%s.__next__")

    @functools.wraps(orig)
    def __next__(self):
        if nat is None or not nat.enabled:
            try:
                return orig(self)
            except BaseException as e:
                drop_own_frames(e)
                raise
        nat.push(name_of((self,)), N.DATA_WAIT)
        loader = getattr(self, "_trainprof_loader", None)
        if loader is not None:
            nat.mark(loader, N.DATALOADER_BATCH)
        try:
            batch = orig(self)
        except StopIteration as e:
            nat.pop()
            nat.mark("DataLoader StopIteration", N.DATA_END)
            drop_own_frames(e)
            raise
        except BaseException as e:
            nat.pop()
            drop_own_frames(e)
            raise
        nat.pop()
        return batch

    setattr(__next__, _MARKER, N.DATA_WAIT)
    base.__next__ = __next__


def _patch_dataloader_iter_init(torch):
    """Creating an iterator (`iter(loader)`, each epoch unless persistent_workers) runs the
    __init__ of a _BaseDataLoaderIter subclass, which starts the workers: one range around the
    outermost __init__ (the subclass's, which calls the base's), "iter(DataLoader)#<IterClass>"."""
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    name_of = _cached_name("iter(DataLoader)#%s")
    for cls in [base] + [c for c in vars(dataloader).values()
                         if isinstance(c, type) and issubclass(c, base) and c is not base]:
        _wrap_attr(cls, "__init__", N.DATALOADER_ITER, name_of, guard="dataloader_iter")


# ---- DataLoader identity: which loader a wait or a worker belongs to ---------------------------

_loader_ids = [0]        # DataLoaders named so far in this process
_creating = [None]       # id of the loader whose iterator is being made (a forked worker inherits it)


def _flag(value):
    return "1" if value else "0"


def _pins(loader):
    """Whether the loader's iterators pin their batches: pin_memory=True takes effect only with a
    device to pin for (PyTorch's _BaseDataLoaderIter: a pin_memory_device named, or CUDA available;
    on a CPU-only machine nothing is pinned). Asked only when pin_memory is set, as the iterator
    asks right after. An accelerator other than CUDA without pin_memory_device reads as 0: the report
    then names no pinning rather than one that may not happen."""
    if not getattr(loader, "pin_memory", False):
        return False
    if getattr(loader, "pin_memory_device", ""):
        return True
    try:
        import torch
        return bool(torch.cuda.is_available())
    except Exception:  # never break the program for a description
        return False


def loader_name(loader):
    """The description mark of a DataLoader, made once per loader object (docs/trace-format.md,
    "DataLoader identity"): "DataLoader#<id> dataset=<Class> batch_size=<n|none> num_workers=<n>
    persistent_workers=<0|1> pin_memory=<0|1>" (pin_memory: pinning in effect, _pins); ids count
    from 1 per process."""
    name = loader.__dict__.get("_trainprof_name")
    if name is None:
        _loader_ids[0] += 1
        batch = getattr(loader, "batch_size", None)
        name = "DataLoader#%d dataset=%s batch_size=%s num_workers=%d persistent_workers=%s pin_memory=%s" % (
            _loader_ids[0], type(getattr(loader, "dataset", None)).__name__,
            "none" if batch is None else int(batch), int(getattr(loader, "num_workers", 0) or 0),
            _flag(getattr(loader, "persistent_workers", False)), _flag(_pins(loader)))
        loader.__dict__["_trainprof_name"] = name
        loader.__dict__["_trainprof_id"] = _loader_ids[0]
    return name


def _patch_dataloader(torch):
    """DataLoader.__iter__: a mark naming the loader (category DATALOADER) before its iterator is
    made, and the iterator remembers the name for the mark inside each of its waits."""
    from torch.utils.data import dataloader

    cls = dataloader.DataLoader
    orig = cls.__dict__.get("__iter__")
    if orig is None or getattr(orig, _MARKER, None) is not None:
        return
    nat = N.get()

    @functools.wraps(orig)
    def __iter__(self):
        if nat is None or not nat.enabled:
            with Calling():
                return orig(self)
        name = None
        try:
            name = loader_name(self)
            nat.mark(name, N.DATALOADER)
        except Exception:
            pass
        previous = _creating[0]
        _creating[0] = self.__dict__.get("_trainprof_id")
        try:
            with Calling():
                it = orig(self)
        finally:
            _creating[0] = previous
        if name is not None:
            try:
                it._trainprof_loader = name
            except Exception:
                pass
        return it

    setattr(__iter__, _MARKER, N.DATALOADER)
    cls.__iter__ = __iter__


def _worker_mark(nat, bound):
    """In a worker: "DataLoader#<id|?> dataset=<Class> num_workers=<n> worker_id=<k>"; the id is
    known when the worker was forked inside its loader's iter() (not with spawn)."""
    args = bound.arguments
    loader = _creating[0]
    dataset = args.get("dataset")
    holder = args.get("dataset_holder")  # PyTorch 2.x: [dataset], popped by the loop
    if dataset is None and isinstance(holder, list) and holder:
        dataset = holder[-1]
    nat.mark("DataLoader#%s dataset=%s num_workers=%d worker_id=%d" % (
        "?" if loader is None else loader, type(dataset).__name__,
        int(args.get("num_workers", 0)), int(args.get("worker_id", 0))), N.DATALOADER)


# ---- DataLoader: fetching batches (workers, or the main process with num_workers=0) ------------

def _getitem_wrapper(fn, name):
    """Records dataset items, only inside a batch fetch (not the program's own indexing)."""
    return _phase_wrapper(fn, N.GET_ITEM, lambda args: name, guard="in_item", only_inside="in_fetch")


def _instrument_dataset(dataset):
    cls = type(dataset)
    for attr in ("__getitem__", "__getitems__"):
        fn = getattr(cls, attr, None)
        if fn is None or getattr(fn, _MARKER, None) is not None:
            continue
        try:
            setattr(cls, attr, _getitem_wrapper(fn, "%s.%s" % (cls.__name__, attr)))
        except (TypeError, AttributeError):
            pass  # a built-in or slotted type: items are still inside the fetch range


def _instrument_fetcher(fetcher):
    if getattr(fetcher, "_trainprof_instrumented", False):
        return
    try:
        fetcher._trainprof_instrumented = True
        collate = getattr(fetcher, "collate_fn", None)
        if collate is not None and getattr(collate, _MARKER, None) is None:
            name = getattr(collate, "__name__", type(collate).__name__)
            fetcher.collate_fn = _phase_wrapper(collate, N.COLLATE, lambda args, n=name: n)
        _instrument_dataset(fetcher.dataset)
    except Exception:
        pass


def _patch_fetchers(torch):
    from torch.utils.data._utils import fetch

    for cls_name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        cls = getattr(fetch, cls_name, None)
        orig = cls.__dict__.get("fetch") if cls is not None else None
        if orig is None or getattr(orig, _MARKER, None) is not None:
            continue
        name = "%s.fetch" % cls_name
        # The fetcher's dataset and collate_fn are wrapped at its first fetch.
        cls.fetch = _phase_wrapper(orig, N.FETCH, lambda args, n=name: n, guard="in_fetch",
                                   before=lambda args: _instrument_fetcher(args[0]))


def _patch_worker_loop(torch):
    """DataLoader workers: name the process's role, and time worker_init_fn (worker start-up)."""
    from torch.utils.data._utils import worker

    orig = worker.__dict__.get("_worker_loop")
    if orig is None or getattr(orig, _MARKER, None) is not None:
        return
    try:
        signature = inspect.signature(orig)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(orig)
    def _worker_loop(*args, **kwargs):
        nat = N.get()
        if nat is not None and nat.enabled:
            try:
                nat.set_role("DataLoader worker")
                if signature is not None:
                    bound = signature.bind(*args, **kwargs)
                    try:
                        _worker_mark(nat, bound)
                    except Exception:
                        pass
                    init_fn = bound.arguments.get("init_fn")
                    if init_fn is not None:
                        name = "worker_init_fn:" + getattr(init_fn, "__name__", type(init_fn).__name__)
                        bound.arguments["init_fn"] = _phase_wrapper(init_fn, N.WORKER_INIT, lambda a, n=name: n)
                        args, kwargs = bound.args, bound.kwargs
            except Exception:
                pass
        try:
            return orig(*args, **kwargs)
        except BaseException as e:
            drop_own_frames(e)
            raise

    setattr(_worker_loop, _MARKER, N.WORKER_INIT)
    worker._worker_loop = _worker_loop


# ---- model, backward, optimizer, collectives ---------------------------------------------------

def _forward_name(torch):
    """name_of for module calls: "<Module>.forward", or "<Module>.forward [eval]" when the call
    builds no graph (torch.is_grad_enabled() is False: torch.no_grad(), torch.inference_mode(),
    set_grad_enabled(False)) or the module is in eval mode (its `training` flag is False)."""
    grad_enabled = torch.is_grad_enabled
    cache = {}

    def name_of(args):
        module = args[0] if args else None
        key = (type(module), not grad_enabled() or not getattr(module, "training", True))
        name = cache.get(key)
        if name is None:
            name = "%s.forward%s" % (key[0].__name__, " [eval]" if key[1] else "")
            cache[key] = name
        return name

    return name_of


def _patch_module_call(torch):
    module_cls = torch.nn.Module
    _wrap_attr(module_cls, "__call__", N.FORWARD, _forward_name(torch))


def _patch_backward(torch):
    # Tensor.backward calls torch.autograd.backward: one guard for both, so one range per call.
    _wrap_attr(torch.Tensor, "backward", N.BACKWARD, lambda args: "Tensor.backward", guard="backward")
    _wrap_attr(torch.autograd, "backward", N.BACKWARD, lambda args: "torch.autograd.backward", guard="backward")


def _patch_optimizer(torch):
    """Optimizer subclasses define their own step(): wrap each class the first time an instance is
    made (after torch's own profiling wrapper, whose `hooked` flag functools.wraps carries over)."""
    optimizer_cls = torch.optim.Optimizer
    orig_init = optimizer_cls.__dict__.get("__init__")
    if orig_init is None or getattr(orig_init, _MARKER, None) is not None:
        return
    step_name = _cached_name("Optimizer.step#%s.step")
    zero_name = _cached_name("Optimizer.zero_grad#%s.zero_grad")

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        try:
            orig_init(self, *args, **kwargs)
        except BaseException as e:
            drop_own_frames(e)
            raise
        try:
            for cls in type(self).__mro__:
                if cls is object:
                    break
                if "step" in cls.__dict__:
                    _wrap_attr(cls, "step", N.OPTIMIZER_STEP, step_name)
                if "zero_grad" in cls.__dict__:
                    _wrap_attr(cls, "zero_grad", N.ZERO_GRAD, zero_name)
        except Exception:
            pass

    setattr(__init__, _MARKER, N.OPTIMIZER_STEP)
    optimizer_cls.__init__ = __init__


def _patch_grad_scaler(torch):
    """GradScaler.step(optimizer) is the optimizer step of a mixed-precision loop: it skips
    optimizer.step() when the gradients overflowed, and that step must stay an optimizer step,
    not become a micro-batch of the next one (docs/analysis.md, "Steps")."""
    name_of = _cached_name("GradScaler.step#%s.step")
    for owner in (getattr(getattr(torch, "amp", None), "GradScaler", None),
                  getattr(getattr(getattr(torch, "cuda", None), "amp", None), "GradScaler", None)):
        if isinstance(owner, type):
            for cls in owner.__mro__:
                if cls is object:
                    break
                if "step" in cls.__dict__:
                    _wrap_attr(cls, "step", N.OPTIMIZER_STEP, name_of)


_COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
                "reduce_scatter_tensor", "broadcast", "reduce", "all_to_all", "all_to_all_single",
                "barrier", "gather", "scatter")


def _patch_collectives(torch):
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        return
    for name in _COLLECTIVES:
        if hasattr(dist, name):
            _wrap_attr(dist, name, N.COLLECTIVE, lambda args, n=name: n, guard="collective")


def _patch_checkpoint(torch):
    """torch.save / torch.load called from the program (outermost call only: one guard for both)."""
    _wrap_attr(torch, "save", N.CHECKPOINT, lambda args: "torch.save", guard="checkpoint")
    _wrap_attr(torch, "load", N.CHECKPOINT, lambda args: "torch.load", guard="checkpoint")


def _patch_init_process_group(torch):
    """A range around init_process_group (it waits for every rank to join). Ranks started by
    torch.multiprocessing.spawn often get RANK only from their arguments: record the rank
    torch.distributed settled on, so the report knows this process's rank."""
    dist = getattr(torch, "distributed", None)
    orig = getattr(dist, "init_process_group", None) if dist is not None else None
    if orig is None or getattr(orig, _MARKER, None) is not None:
        return

    def record_rank(nat, args, result):
        nat.set_env("RANK", dist.get_rank())
        nat.set_env("WORLD_SIZE", dist.get_world_size())
        local = os.environ.get("LOCAL_RANK")
        if local is not None:
            nat.set_env("LOCAL_RANK", local)

    timed = _phase_wrapper(orig, N.INIT_PROCESS_GROUP, lambda args: "init_process_group",
                           guard="init_process_group")
    dist.init_process_group = _after_call(timed, record_rank, N.INIT_PROCESS_GROUP)


def _patch_ddp(torch):
    """Records that this process uses DistributedDataParallel, and its backend, as the process
    variable TRAINPROF_DDP=<backend> (docs/trace-format.md): its ranks wait for each other in DDP's
    gradient all-reduce inside backward, which the report takes as their arrival point."""
    parallel = getattr(torch.nn, "parallel", None)
    ddp_cls = getattr(parallel, "DistributedDataParallel", None) if parallel is not None else None
    orig = ddp_cls.__dict__.get("__init__") if ddp_cls is not None else None
    if orig is None or getattr(orig, _MARKER, None) is not None:
        return

    def record_ddp(nat, args, result):
        backend = ""
        try:
            backend = str(torch.distributed.get_backend(getattr(args[0], "process_group", None)))
        except Exception:
            pass
        nat.set_env("TRAINPROF_DDP", backend)

    ddp_cls.__init__ = _after_call(orig, record_ddp, N.BACKWARD)


PATCHES = (_patch_dataloader_iter, _patch_dataloader_iter_init, _patch_dataloader, _patch_fetchers,
           _patch_worker_loop, _patch_module_call, _patch_backward, _patch_optimizer, _patch_grad_scaler,
           _patch_collectives,
           _patch_checkpoint, _patch_init_process_group, _patch_ddp)


def install(torch):
    """Installs every patch; a patch that fails is skipped, the program runs on unchanged."""
    for patch in PATCHES:
        try:
            patch(torch)
        except Exception:
            pass
