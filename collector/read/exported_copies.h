// Kineto files that `trainprof export --format kineto` made from trace files that are read too.
//
// The export writes `-o DIR` where users keep their runs (docs/cli.md: `-o runs/exp1/kineto
// runs/exp1`), and a directory is searched recursively for both *.trace and *.pt.trace.json[.gz]:
// a later `trainprof report runs/exp1` would read every process twice. Each exported file names
// the trace images it was made from in its top-level "trainprof_origin" (export_kineto.h): pid,
// image index, CLOCK_MONOTONIC start and boot id as the trace header has them. A copy whose
// origin is among the trace files given is left out (the trace file holds more: stacks, samples,
// every record), said once per copy.
#pragma once

#include "collector/read/trace_set.h"

namespace trainprof::collector {

/// Takes out of list->files each Kineto file with a "trainprof_origin" naming a trace image that
/// is also in list->files (same pid, image index, header start and boot id), adding one line to
/// list->warnings ("COPY: left out: trainprof exported it from T1, T2, which are read instead (each
/// process is counted once)"; a process of the copy whose trace file is not among them is named,
/// left out with it) and counting it in list->losses[exported_copies]. Reads the first 160
/// bytes of each file and, of Kineto files, the JSON text before "traceEvents" (at most 1 MiB);
/// a file that cannot be read, a Kineto file without an origin or whose origin is not among the
/// files, stays in the list (it is read, and judged, as before).
void SkipExportedCopies(TraceFileList* list);

}  // namespace trainprof::collector
