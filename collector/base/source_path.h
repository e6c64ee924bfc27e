// Source file paths shortened for the text tables (File:Line, call sites).
#pragma once

#include <string>
#include <string_view>

namespace trainprof::collector {

/// The part of `path` a reader recognises: after the last `site-packages/` or `dist-packages/`
/// ("torch/nn/modules/module.py"), after `lib/pythonX.Y/` for the standard library
/// ("multiprocessing/process.py"), else the basename ("train.py"). A path without '/' unchanged.
/// Python's own tracebacks print the whole path; py-spy and Nsight Systems' Python call stacks cut
/// it like this, which keeps `__init__.py` and `module.py` apart without filling the column.
std::string ShortSourcePath(std::string_view path);

/// ShortSourcePath(file) plus ":line" when a line is known (line > 0 or has_line).
std::string SourceLocation(std::string_view file, bool has_line, unsigned line);

}  // namespace trainprof::collector
