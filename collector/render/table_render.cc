#include "collector/render/table_render.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "collector/base/duration_summary.h"
#include "collector/base/text_safety.h"
#include "collector/base/units.h"
#include "collector/render/text_table.h"

namespace trainprof::collector {
namespace {

double AsDouble(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::kUint: return static_cast<double>(c.u);
    case Cell::Kind::kInt: return static_cast<double>(c.i);
    case Cell::Kind::kDouble: return c.d;
    case Cell::Kind::kBool: return c.b ? 1 : 0;
    default: return 0;
  }
}

std::string Plain(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::kNull: return "";
    case Cell::Kind::kUint: return std::to_string(c.u);
    case Cell::Kind::kInt: return std::to_string(c.i);
    case Cell::Kind::kDouble: return CsvNumber(c.d);
    case Cell::Kind::kBool: return c.b ? "true" : "false";
    case Cell::Kind::kString: return c.s;
  }
  return "";
}

std::string TextOf(const ColumnDef& col, const Cell& c, bool cut) {
  std::string t;
  if (c.text) {
    t = *c.text;
  } else if (c.null()) {
    t = "-";
  } else {
    switch (col.unit) {
      case Unit::kNs: t = FormatDuration(AsDouble(c)); break;
      case Unit::kBytes: t = FormatBytes(AsDouble(c)); break;
      case Unit::kPercent: t = FormatPercent(AsDouble(c)); break;
      case Unit::kFlag: t = c.b ? "yes" : "no"; break;
      default: t = Plain(c); break;
    }
  }
  if (c.estimated) t = "~" + t;
  if (cut && col.text_width > 0) t = Shorten(t, col.text_width);
  return EscapeControls(t);
}

std::vector<Column> TextColumns(const TableDef& def) {
  std::vector<Column> columns;
  for (const char* key : def.text) {
    const ColumnDef& c = def.columns[def.Index(key)];
    columns.push_back({c.header, c.align == Align::kRight});
  }
  return columns;
}

nlohmann::ordered_json CellJson(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::kUint: return c.u;
    case Cell::Kind::kInt: return c.i;
    case Cell::Kind::kDouble: return c.d;
    case Cell::Kind::kBool: return c.b;
    case Cell::Kind::kString: return c.s;
    default: return nullptr;
  }
}

}  // namespace

std::vector<std::string> TextCells(const TableDef& def, const Cells& row, bool cut) {
  std::vector<std::string> cells;
  cells.reserve(def.text.size());
  for (const char* key : def.text) {
    const size_t i = def.Index(key);
    cells.push_back(TextOf(def.columns[i], row[i], cut));
  }
  return cells;
}

void TextTable(const TableDef& def, const RowSource& rows, const std::string& indent, OutputSink* out, bool cut) {
  const std::vector<Column> columns = TextColumns(def);
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) width[c] = Width(columns[c].header);
  for (size_t i = 0; i < rows.size; ++i) {
    const std::vector<std::string> cells = TextCells(def, rows.row(i), cut);
    for (size_t c = 0; c < columns.size(); ++c) width[c] = std::max(width[c], Width(cells[c]));
  }
  std::vector<std::string> headers, rule;
  for (size_t c = 0; c < columns.size(); ++c) {
    headers.push_back(columns[c].header);
    rule.push_back(std::string(width[c], '-'));
  }
  out->Write(TableLine(columns, width, headers, indent));
  out->Write(TableLine(columns, width, rule, indent));
  for (size_t i = 0; i < rows.size; ++i) out->Write(TableLine(columns, width, TextCells(def, rows.row(i), cut), indent));
}

std::string TextTable(const TableDef& def, const RowSource& rows, const std::string& indent, bool cut) {
  return WrittenText([&](OutputSink* out) { TextTable(def, rows, indent, out, cut); });
}

nlohmann::ordered_json RowJson(const TableDef& def, const Cells& row) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const ColumnDef& c = def.columns[i];
    if (c.show == Show::kText) continue;
    const std::string_view key = c.key;
    const size_t dot = key.find('.');
    if (dot == std::string_view::npos) {
      j[std::string(key)] = CellJson(row[i]);
    } else {
      j[std::string(key.substr(0, dot))][std::string(key.substr(dot + 1))] = CellJson(row[i]);
    }
  }
  return j;
}

nlohmann::ordered_json TableJson(const TableDef& def, const RowSource& rows) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (size_t i = 0; i < rows.size; ++i) a.push_back(RowJson(def, rows.row(i)));
  return a;
}

std::vector<std::string> CsvHeader(const TableDef& def) {
  std::vector<std::string> h;
  for (const ColumnDef& c : def.columns) {
    if (c.show == Show::kText) continue;
    std::string key = c.key;
    std::replace(key.begin(), key.end(), '.', '_');
    h.push_back(std::move(key));
  }
  return h;
}

std::vector<std::string> CsvFields(const TableDef& def, const Cells& row) {
  std::vector<std::string> f;
  for (size_t i = 0; i < def.columns.size(); ++i) {
    if (def.columns[i].show != Show::kText) f.push_back(Plain(row[i]));
  }
  return f;
}

std::string CsvNumber(double v) {
  char buf[512];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

std::string EstimatedMedianNote(bool any, const char* what) {
  if (!any) return "";
  char note[192];
  std::snprintf(note, sizeof note, "  ~ median of a row of more than %zu %s: estimated within %.2f%% of the exact value\n",
                DurationSummary::kExactSamples, what, DurationSummary::kRelativeError * 100);
  return note;
}

std::string EstimatedQuantilesNote(const std::vector<Cells>& rows, const char* what) {
  return EstimatedQuantilesNote(std::any_of(rows.begin(), rows.end(), [](const Cells& row) {
                                  return std::any_of(row.begin(), row.end(), [](const Cell& c) { return c.estimated; });
                                }),
                                what);
}

std::string EstimatedQuantilesNote(bool any, const char* what) {
  if (!any) return "";
  char note[192];
  std::snprintf(note, sizeof note, "  ~ median or p95 of a row of more than %zu %s: estimated within %.2f%% of the exact value\n",
                DurationSummary::kExactSamples, what, DurationSummary::kRelativeError * 100);
  return note;
}

}  // namespace trainprof::collector
