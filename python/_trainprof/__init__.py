"""trainprof's Python shim (see python/README.md). Loaded by sitecustomize.py; does nothing until
`torch` is imported."""
