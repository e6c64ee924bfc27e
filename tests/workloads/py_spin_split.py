"""A pure-Python program spinning in two functions, 3:1 by iteration counts (issue 15's sampling
test): heavy() runs 3 x N loop iterations, light() N, interleaved in rounds so that neither owns
one end of the run. Under `trainprof run --sample=1000` (or the test probe's SIGPROF timer,
tests/e2e/test_python_async.py) the samples whose innermost frame is heavy vs light come 3:1.

    python py_spin_split.py [N]     (N: light's iterations in all; 1,000,000 by default)
"""

import sys

ROUNDS = 10


def heavy(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def light(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def main(n=1_000_000):
    total = 0
    for _ in range(ROUNDS):
        total += heavy(3 * n // ROUNDS)
        total += light(n // ROUNDS)
    return total


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
