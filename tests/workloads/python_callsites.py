"""A pure-Python program whose NVTX ranges come from two functions with known counts, for the
Python frames of `trainprof run --backtrace=nvtx` (tests/e2e/test_python_stacks.py):

    python_callsites.py LIB [ctypes|nvtx]

  main thread:   30 x "io" from load_batch(), 10 x "io" from save_checkpoint(), each called from
                 main(); through LIB (tests/programs/libtp_pynvtx.so) with ctypes.PyDLL (the GIL
                 held during the call, as the `nvtx` package and torch.cuda.nvtx hold it), or
                 with the `nvtx` package (argument "nvtx").
  second thread: 5 x "no_gil" through ctypes.CDLL, which releases the GIL around the call: those
                 stacks have native frames only.

Each NVTX call's line ends with a comment "# site: [MODE ]NAME", where the test finds its line.
"""

import ctypes
import sys
import threading

LIB = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "ctypes"

held = ctypes.PyDLL(LIB)
released = ctypes.CDLL(LIB)
for lib in (held, released):
    lib.tp_nvtx_push.argtypes = [ctypes.c_char_p]

if MODE == "nvtx":
    import nvtx

    def load_batch(i):
        nvtx.push_range("io")  # site: nvtx load_batch
        total = sum(range(i))
        nvtx.pop_range()
        return total

    def save_checkpoint(i):
        nvtx.push_range("io")  # site: nvtx save_checkpoint
        nvtx.pop_range()
        return i
else:
    def load_batch(i):
        held.tp_nvtx_push(b"io")  # site: ctypes load_batch
        total = sum(range(i))
        held.tp_nvtx_pop()
        return total

    def save_checkpoint(i):
        held.tp_nvtx_push(b"io")  # site: ctypes save_checkpoint
        held.tp_nvtx_pop()
        return i


def background():
    for _ in range(5):
        released.tp_nvtx_push(b"no_gil")  # site: background
        released.tp_nvtx_pop()


def main():
    t = threading.Thread(target=background)
    t.start()
    t.join()
    for i in range(40):
        if i % 4 == 3:
            save_checkpoint(i)  # site: main->save_checkpoint
        else:
            load_batch(i)  # site: main->load_batch
    print("callsites done")


if __name__ == "__main__":
    main()
