// One process's summary (process_summary.h) as the JSON data model a summary file (summary_file.h)
// holds in CBOR: {"info": {...}, "place": {...}, "losses": [...], "capture": {...}, "nvtx": {...},
// "cuda": [...], ...} (every key: docs/summary-format.md, "Sections").
//
// Names are written as strings (a summary file has no string table of its own: the names of one
// process are few beside its statistics) and interned into the reader's pool; loss kinds by their
// catalogue key (model/losses.def), so that a counter added later does not renumber them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/base/string_pool.h"
#include "collector/summary/summary_fields.h"
#include "collector/summary/summary_file.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

/// One process's summary as a JSON value (the map a summary file's `processes` holds; its
/// sections: docs/summary-format.md), its names (ids of `strings`) as strings.
nlohmann::json SummaryJson(const ProcessSummary& s, const StringPool& strings);

/// The summary in `j` (a map SummaryJson writes), its names interned into `strings`. Throws
/// SummaryError, naming the field, where a field is missing, of the wrong type, or holds a value no
/// summary can have (a duration statistic that does not add up, an unknown loss key).
ProcessSummary ReadSummary(const nlohmann::json& j, StringPool* strings);

}  // namespace trainprof::collector
