// The generic table renderers: one for each format, walking a table's declaration
// (collector/base/table.h) and its rows of typed cells. Every table of the text, JSON and CSV
// reports that has a declaration goes through these; a renderer never formats a column itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/base/output_sink.h"
#include "collector/base/table.h"

namespace trainprof::collector {

// Text: aligned columns (text_table.h's layout), streamed in two passes over the rows (column
// widths, then lines), so that a million rows never exist as text at once. Cells are written
// by their column's unit ("-" for null, "~" before an estimate), cut to the column's text_width
// when `cut`, and passed through EscapeControls.

/// The text cells of one row, in the table's text order.
std::vector<std::string> TextCells(const TableDef& def, const Cells& row, bool cut = true);
/// The table (header, rule, rows) indented by `indent`, into `out`.
void TextTable(const TableDef& def, const RowSource& rows, const std::string& indent, OutputSink* out,
               bool cut = true);
std::string TextTable(const TableDef& def, const RowSource& rows, const std::string& indent, bool cut = true);

/// JSON: a row as an object of its data columns in declaration order ("a.b" nested).
nlohmann::ordered_json RowJson(const TableDef& def, const Cells& row);
/// An optional as JSON: its value, or null.
template <typename T>
nlohmann::ordered_json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}
/// The rows as an array of RowJson.
nlohmann::ordered_json TableJson(const TableDef& def, const RowSource& rows);

/// CSV: the header (data column keys, "a.b" as "a_b") and the fields of one row (numbers in
/// plain decimal notation, bools true/false, null empty), not yet quoted (CsvField does that).
std::vector<std::string> CsvHeader(const TableDef& def);
std::vector<std::string> CsvFields(const TableDef& def, const Cells& row);
/// A double as the CSV report writes it: plain decimal, as short as round-trips ("122000000").
std::string CsvNumber(double v);

/// The text report's note under a table with an estimated median (a "~" cell: a row of more than
/// DurationSummary::kExactSamples durations), or "" when `any` is false; `what` names what the
/// table's rows count ("calls", "instances", "operations").
std::string EstimatedMedianNote(bool any, const char* what);
/// The same note under a table of cells, when one of `rows` is marked estimated (Cell::estimated):
/// its medians and p95 (DurationSummary::Quantile) past kExactSamples `what`.
std::string EstimatedQuantilesNote(const std::vector<Cells>& rows, const char* what);
/// The same where `any` says whether some median or p95 shown is estimated.
std::string EstimatedQuantilesNote(bool any, const char* what);

}  // namespace trainprof::collector
