#include "collector/base/source_path.h"

namespace trainprof::collector {
namespace {

/// The position just after "/lib/pythonX.Y/" (digits and one dot after "python"), or npos.
size_t AfterStdlibDir(std::string_view path) {
  constexpr std::string_view kLib = "/lib/python";
  size_t found = std::string_view::npos;
  for (size_t at = path.find(kLib); at != std::string_view::npos; at = path.find(kLib, at + 1)) {
    size_t i = at + kLib.size();
    size_t digits = 0;
    bool dot = false;
    while (i < path.size() && ((path[i] >= '0' && path[i] <= '9') || (path[i] == '.' && !dot))) {
      dot = dot || path[i] == '.';
      digits += path[i] != '.';
      ++i;
    }
    if (digits > 0 && i < path.size() && path[i] == '/') found = i + 1;
  }
  return found;
}

}  // namespace

std::string ShortSourcePath(std::string_view path) {
  size_t cut = std::string_view::npos;
  for (std::string_view dir : {std::string_view("/site-packages/"), std::string_view("/dist-packages/")}) {
    const size_t at = path.rfind(dir);
    if (at != std::string_view::npos && (cut == std::string_view::npos || at + dir.size() > cut)) cut = at + dir.size();
  }
  if (cut == std::string_view::npos) cut = AfterStdlibDir(path);
  if (cut == std::string_view::npos || cut >= path.size()) {
    const size_t slash = path.rfind('/');
    cut = slash == std::string_view::npos ? 0 : slash + 1;
  }
  return std::string(path.substr(cut));
}

std::string SourceLocation(std::string_view file, bool has_line, unsigned line) {
  std::string where = ShortSourcePath(file);
  if (has_line) where += ":" + std::to_string(line);
  return where;
}

}  // namespace trainprof::collector
