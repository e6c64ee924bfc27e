"""Keeps trainprof's own frames out of the tracebacks of exceptions that pass through its wrappers.

An exception that propagates through a Python frame gets a traceback entry for it, at the head of
its traceback. A wrapper catches the exception, drops its own leading entries with
drop_own_frames(), and re-raises it with a bare `raise`: CPython 3.11 and later re-raise with the
exception's own `__traceback__` and add no entry for a re-raise, so the caller's traceback goes
straight from the caller's line to the wrapped function. (Python 3.10 and older re-raise with the
traceback they caught: the wrapper's frame stays there, once per wrapper.)

What no wrapper can hide: its frame is on the stack while the wrapped call runs, so stack
inspection sees it (pdb's `where`/`up`, traceback.print_stack(), inspect.stack(), a
warnings.warn(stacklevel=N) inside the wrapped function counts it).
"""


def _is_own(frame):
    return frame.f_globals.get("__name__", "").startswith("_trainprof.")


def drop_own_frames(exc):
    """Removes the leading traceback entries of exc that are trainprof's frames (the wrapper that
    caught it); the entry where it was raised always stays."""
    try:
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None and _is_own(tb.tb_frame):
            tb = tb.tb_next
        exc.__traceback__ = tb
    except Exception:
        pass


class Calling:
    """The block in which a wrapper calls the function it wraps: `with Calling(local, "in_x"):`
    sets the thread-local flag `local.in_x` while the block runs (no flag without arguments), and
    an exception leaving the block goes on without trainprof's leading frames, as
    `except BaseException as e: drop_own_frames(e); raise` would (`__exit__` returns False: the
    interpreter re-raises it as a bare `raise` does)."""

    __slots__ = ("_local", "_flag")

    def __init__(self, local=None, flag=None):
        self._local = local
        self._flag = flag

    def __enter__(self):
        if self._flag is not None:
            setattr(self._local, self._flag, True)
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._flag is not None:
            setattr(self._local, self._flag, False)
        if exc is not None:
            drop_own_frames(exc)
        return False
