#include "collector/base/name_groups.h"

namespace trainprof::collector {
namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Length of the number at name[i] (0: none there). name[i] is a digit not preceded by a letter
// or digit.
size_t NumberAt(std::string_view name, size_t i) {
  size_t end = i;
  if (name[i] == '0' && i + 2 < name.size() && (name[i + 1] == 'x' || name[i + 1] == 'X') &&
      IsHexDigit(name[i + 2])) {
    end = i + 2;
    while (end < name.size() && IsHexDigit(name[end])) ++end;
  } else {
    while (end < name.size() && IsDigit(name[end])) ++end;
  }
  if (end < name.size() && IsLetter(name[end])) return 0;  // "3x3", "17th", "2d"
  return end - i;
}

}  // namespace

bool NamePattern(std::string_view name, std::string* pattern) {
  pattern->clear();
  bool any = false;
  size_t copied = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!IsDigit(name[i]) || (i > 0 && (IsLetter(name[i - 1]) || IsDigit(name[i - 1])))) continue;
    const size_t n = NumberAt(name, i);
    if (n == 0) continue;  // glued to a word; its other digits follow a digit, so are skipped too
    if (!any) pattern->reserve(name.size());
    any = true;
    pattern->append(name.substr(copied, i - copied));
    pattern->append(kNumberPlaceholder);
    copied = i + n;
    i += n - 1;
  }
  if (!any) return false;
  pattern->append(name.substr(copied));
  return true;
}

}  // namespace trainprof::collector
