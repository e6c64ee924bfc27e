"""Many short-lived Python functions (issue 35: 1M distinct functions in samples): N code objects
made from one template with code.replace, each with its own name, file and first line, called
once and freed, so that the next one is allocated where the last one was (and its name and file
strings where the last one's were). A sampler that names frames by the code object's address
shows such a frame under an earlier function's name or line.

    python py_code_churn.py MAP [N] [WORK]

MAP: a JSON file written first, {co_name: [file, first line, last line]} of every function made
(a sampled frame of gen.fI, fI on 3.10, which names frames by co_name, must lie in that file
between those lines). N: functions (20,000 by
default); WORK: loop iterations per call (2,000: about 0.1 ms of CPU, a few samples in 20 at
--sample=1000).
"""

import json
import sys
import types


def template(x, work):
    s = x
    for k in range(work):
        s = (s * 31 + k) % 1000003
    return s


SPAN = 4  # template's lines after its first


def name(i):
    """The qualname, file and first line of the i-th function."""
    return "gen.f%d" % i, "/gen/mod%d.py" % (i // 100), 1 + 7 * (i % 100)


def main(path, n=20_000, work=2_000):
    with open(path, "w") as f:
        json.dump({q.split(".")[-1]: [file, first, first + SPAN] for q, file, first in map(name, range(n))}, f)
    code = template.__code__
    total = 0
    for i in range(n):
        q, file, first = name(i)
        c = code.replace(co_name=q.split(".")[-1], co_filename=file, co_firstlineno=first,
                         **({"co_qualname": q} if sys.version_info >= (3, 11) else {}))
        fn = types.FunctionType(c, {})
        total += fn(i, work)
        del fn, c  # freed: the next function's code object takes its memory
    return total


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
