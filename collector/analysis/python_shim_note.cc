#include "collector/analysis/python_shim_note.h"

#include <vector>

namespace trainprof::collector {
namespace {

// The words of a space-separated option list.
std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(' ', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& last_sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += (i + 1 == parts.size() ? last_sep : ", ");
    out += parts[i];
  }
  return out;
}

}  // namespace

std::string PythonShimOff(const Process& p) {
  for (auto it = p.images.rbegin(); it != p.images.rend(); ++it) {
    if (!it->python_shim_off.empty()) return it->python_shim_off;
  }
  return "";
}

std::string PythonShimOffReason(const std::string& options) {
  std::vector<std::string> reasons;
  for (const std::string& o : Words(options)) {
    if (o == "-E") {
      reasons.push_back("python -E ignores PYTHONPATH");
    } else if (o == "-I") {
      reasons.push_back("python -I ignores PYTHONPATH (isolated mode)");
    } else if (o == "-S") {
      reasons.push_back("python -S skips `import site`, which imports sitecustomize");
    } else {
      reasons.push_back("python " + o);  // an option from a newer trainprof
    }
  }
  return Join(reasons, " and ");
}

std::string DescribePythonShimOff(const std::string& options) {
  return "Python phases not recorded: " + PythonShimOffReason(options) +
         ", so trainprof's shim (its sitecustomize, put first on PYTHONPATH) could not load; run Python without " +
         Join(Words(options), " or ") + " to record them";
}

}  // namespace trainprof::collector
