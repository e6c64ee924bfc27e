// The table model of the report: every table is declared once (TableDef: its columns with key,
// text header, unit, alignment and one-line meaning) and its rows are typed cells (Cell). The
// text, JSON and CSV renderers (collector/render/table_render.h) walk the declaration, so that a
// column is named, ordered and typed in one place. docs/report-schema.md's tables are checked
// against the declarations (tests/unit/collector/report_tables_test.cc).
//
//   key      JSON member and CSV column; "group.member" nests in JSON ({"group": {"member": ..}})
//            and is "group_member" in CSV
//   header   the text report's column header; nullptr: not in the text table
//   unit     how the text report writes a number (ns as "1.20 ms", bytes as "3.00 MB", ...)
//
// Rows are made one at a time (RowSource) so that a streamed table (the NVTX ranges, a million
// names) never exists whole: a renderer asks for row i when it writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainprof::collector {

enum class Unit : uint8_t {
  kText,     ///< a string as it is
  kCount,    ///< an integer (counts, ids)
  kNs,       ///< a duration in ns: text "1.20 ms"
  kBytes,    ///< a size in bytes: text "3.00 MB"
  kPercent,  ///< a percentage: text "12.3" (the header says "%")
  kFlag,     ///< a bool: text "yes"/"no", CSV "true"/"false"
  kNumber,   ///< a fractional number without unit (GB/s, calls per step)
};

enum class Align : uint8_t { kLeft, kRight };

/// Where a column is shown: the text table, the data (JSON and CSV), or both.
enum class Show : uint8_t { kBoth, kText, kData };

struct ColumnDef {
  const char* key;      ///< JSON member / CSV column ("a.b": nested in JSON, "a_b" in CSV)
  const char* header;   ///< text header; nullptr: not in the text table
  Unit unit;
  Align align;
  const char* meaning;  ///< one line
  Show show = Show::kBoth;
  size_t text_width = 0;  ///< text cells cut to this many code points ("..."); 0: never
};

struct TableDef {
  const char* name;                ///< "nvtx_ranges": the JSON member
  const char* csv;                 ///< "nvtx_ranges.csv": the CSV file
  std::vector<ColumnDef> columns;  ///< in JSON and CSV order
  std::vector<const char*> text;   ///< keys of the text table's columns, in text order
  /// The index of the column `key`; columns.size() when there is none.
  size_t Index(std::string_view key) const {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (key == columns[i].key) return i;
    }
    return columns.size();
  }
};

/// One typed cell: null, an unsigned or signed integer, a double, a string or a bool. The text
/// report writes it by its column's unit, unless `text` is set.
struct Cell {
  enum class Kind : uint8_t { kNull, kUint, kInt, kDouble, kString, kBool };
  Kind kind = Kind::kNull;
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;
  std::optional<std::string> text;  ///< the text report's cell, when it is not the value's
  bool estimated = false;           ///< text: prefixed "~" (an estimated median)

  Cell() = default;
  Cell(std::nullptr_t) {}
  Cell(uint64_t v) : kind(Kind::kUint), u(v) {}
  Cell(uint32_t v) : kind(Kind::kUint), u(v) {}
  Cell(int64_t v) : kind(Kind::kInt), i(v) {}
  Cell(int32_t v) : kind(Kind::kInt), i(v) {}
  Cell(double v) : kind(Kind::kDouble), d(v) {}
  Cell(bool v) : kind(Kind::kBool), b(v) {}
  Cell(std::string v) : kind(Kind::kString), s(std::move(v)) {}
  Cell(const char* v) : kind(Kind::kString), s(v) {}
  template <typename T>
  Cell(const std::optional<T>& v) {
    if (v) *this = Cell(*v);
  }
  /// The same value, shown as `t` in the text report.
  Cell Text(std::string t) && {
    text = std::move(t);
    return std::move(*this);
  }
  Cell Estimated(bool e) && {
    estimated = e;
    return std::move(*this);
  }
  bool null() const { return kind == Kind::kNull; }
};

/// A row: one cell per column of its TableDef, in the declaration's order.
using Cells = std::vector<Cell>;

/// The rows of a table as a renderer walks them: `size` rows, row(i) made when asked.
struct RowSource {
  size_t size = 0;
  std::function<Cells(size_t)> row;
};

/// The rows of a container (anything with size() and [i]) through `cells(element)`.
template <typename Rows, typename F>
RowSource RowsOf(const Rows& rows, F cells) {
  return {rows.size(), [&rows, cells](size_t i) { return cells(rows[i]); }};
}

/// A table held whole, with its declaration: what a new analysis adds to Report::tables.
struct TableRows {
  const TableDef* def = nullptr;
  std::string title;  ///< the text report's section title
  std::vector<Cells> rows;
  bool text = true;             ///< false: not in the text report (a GPU table of a report without CUDA)
  std::optional<size_t> omitted;  ///< rows cut by --top: JSON "<name>_omitted", text "... N more rows"
  /// Text only: the first this many rows (0: all), then "... N more rows (--top N shows more)";
  /// JSON and CSV keep every row (a long table without --top, e.g. the function table).
  size_t text_rows = 0;
  RowSource source() const { return RowsOf(rows, [](const Cells& c) { return c; }); }
};

}  // namespace trainprof::collector
