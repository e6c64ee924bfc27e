"""A Python program that blocks every signal and waits for SIGALRM with signal.sigwait or
signal.sigwaitinfo, spinning on the CPU before and while the signals are blocked, for
`trainprof run --sample` (tests/e2e/test_sampling.py). A thread that never blocks a signal spins
meanwhile.

    python3 py_blocked_wait.py MODE
      sigwait-alarm:  signal.sigwait({SIGALRM})
      sigwait-all:    signal.sigwait(every valid signal)
      sigwaitinfo-all: signal.sigwaitinfo(every valid signal)

Prints "tid main N", "tid free N", then "MODE ok" (exit 0) or "MODE: got signal N" (exit 1)."""

import signal
import sys
import threading
import time


def spin(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


def free():
    print("tid free", threading.get_native_id(), flush=True)
    spin(0.15)


def main():
    mode = sys.argv[1]
    print("tid main", threading.get_native_id(), flush=True)
    # The free thread blocks only SIGALRM (process-directed: it would end the process there).
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    worker = threading.Thread(target=free)
    worker.start()
    spin(0.1)
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    signal.alarm(1)
    spin(0.2)  # CPU time with every signal blocked
    if mode == "sigwait-alarm":
        got = signal.sigwait({signal.SIGALRM})
    elif mode == "sigwait-all":
        got = signal.sigwait(signal.valid_signals())
    elif mode == "sigwaitinfo-all":
        got = signal.sigwaitinfo(signal.valid_signals()).si_signo
    else:
        raise SystemExit("unknown mode " + mode)
    worker.join()
    if got == signal.SIGALRM:
        print(mode, "ok", flush=True)
        return 0
    print("%s: got signal %d" % (mode, got), flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
