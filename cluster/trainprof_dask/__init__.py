"""trainprof's report of a large run on a Dask cluster (docs/scaling.md).

The map step, `trainprof summarize`, runs as Dask tasks on the workers (one per trace file, or one per
node over the files of that node); the summaries (a few KiB each) come back to the client, and one
`trainprof report` merges them. Dask schedules and moves the bytes; trainprof only summarises and
merges. Works with any dask.distributed cluster: a scheduler address, a scheduler file
(dask-jobqueue on Slurm, `dask scheduler --scheduler-file`), or a LocalCluster made here.
"""

from .driver import main, summarize_on_cluster  # noqa: F401
