/* Test-only library (tests/e2e/test_python_versions.py): preloaded ahead of libpython, its
 * Py_Version is the one a symbol look-up finds first, so the interpreter passes for CPython 3.15
 * (a version the sampler has no layout for) to trainprof's library, while it runs as itself. */
const unsigned long Py_Version = 0x030F00A1UL; /* 3.15.0a1 */
