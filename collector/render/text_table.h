// Aligned text tables for the text report: columns left or right aligned by display width
// (UTF-8 code points, so "µs" is two wide), a rule under the header, every cell passed through
// EscapeControls so that a name from a program cannot break the layout.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "collector/base/text_safety.h"

namespace trainprof::collector {

// Display width of UTF-8 text: code points (our units include "µ").
inline size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Cut to `width` code points, ending in "..." when cut.
inline std::string Shorten(const std::string& s, size_t width) {
  if (Width(s) <= width) return s;
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && ++n > width - 3) break;
    out += s[i];
  }
  return out + "...";
}

struct Column {
  std::string header;
  bool right = false;
};

/// One line of a table: cells padded to `width` (right- or left-aligned per column), two spaces
/// between columns, trailing spaces dropped, "\n" at the end.
inline std::string TableLine(const std::vector<Column>& columns, const std::vector<size_t>& width,
                             const std::vector<std::string>& cells, const std::string& indent) {
  std::string l = indent;
  for (size_t c = 0; c < columns.size(); ++c) {
    std::string pad(width[c] - Width(cells[c]), ' ');
    bool last = c + 1 == columns.size();
    if (columns[c].right) {
      l += pad + cells[c];
    } else {
      l += cells[c];
      if (!last) l += pad;
    }
    if (!last) l += "  ";
  }
  while (!l.empty() && l.back() == ' ') l.pop_back();
  return l + "\n";
}

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void Add(std::vector<std::string> row) {
    for (std::string& cell : row) cell = EscapeControls(cell);
    rows_.push_back(std::move(row));
  }

  std::string Render(const std::string& indent) const {
    std::vector<size_t> width(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
      width[c] = Width(columns_[c].header);
      for (const auto& row : rows_) width[c] = std::max(width[c], Width(row[c]));
    }
    std::string out;
    auto line = [&](const std::vector<std::string>& cells) { out += TableLine(columns_, width, cells, indent); };
    std::vector<std::string> headers;
    for (const Column& c : columns_) headers.push_back(c.header);
    line(headers);
    std::vector<std::string> rule;
    for (size_t c = 0; c < columns_.size(); ++c) rule.push_back(std::string(width[c], '-'));
    line(rule);
    for (const auto& row : rows_) line(row);
    return out;
  }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace trainprof::collector
