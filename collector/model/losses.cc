#include "collector/model/losses.h"

#include "trainprof/trace_format.h"

namespace trainprof::collector {

std::string_view SeverityName(LossSeverity severity) {
  switch (severity) {
    case LossSeverity::kInfo: return "info";
    case LossSeverity::kDataLoss: return "data_loss";
    case LossSeverity::kDamage: return "damage";
  }
  return "";
}

std::string_view ScopeName(LossScope scope) {
  switch (scope) {
    case LossScope::kPath: return "path";
    case LossScope::kFile: return "file";
    case LossScope::kTrace: return "trace";
    case LossScope::kProcesses: return "processes";
    case LossScope::kProcess: return "process";
  }
  return "";
}

std::string LossText(Loss kind, uint64_t n, std::string_view detail) {
  const std::string_view t = InfoOf(kind).warning;
  std::string out;
  size_t i = 0;
  while (i < t.size()) {
    const size_t open = t.find('{', i);
    const size_t close = open == std::string_view::npos ? open : t.find('}', open);
    if (close == std::string_view::npos) {
      out += t.substr(i);
      break;
    }
    out += t.substr(i, open - i);
    const std::string_view name = t.substr(open + 1, close - open - 1);
    if (const size_t bar = name.find('|'); bar != std::string_view::npos) {
      out += n == 1 ? name.substr(0, bar) : name.substr(bar + 1);
    } else if (name == "n") {
      out += std::to_string(n);
    } else if (name == "detail") {
      out += detail;
    } else if (name == "max_string_bytes") {
      out += std::to_string(format::kMaxStringBytes);
    } else if (name == "max_domains") {
      out += std::to_string(format::kMaxDomainIds - 1);
    } else {
      out += t.substr(open, close - open + 1);  // not a placeholder: as written
    }
    i = close + 1;
  }
  return out;
}

namespace {

std::string_view ScopeText(LossScope scope) {
  switch (scope) {
    case LossScope::kPath: return "per path";
    case LossScope::kFile: return "per file";
    case LossScope::kTrace: return "whole trace";
    case LossScope::kProcesses: return "per process, one warning for all";
    case LossScope::kProcess: return "per process";
  }
  return "";
}

}  // namespace

std::string LossCatalogueMarkdown() {
  std::string out = "| key | severity | counted | warning | what is counted |\n| --- | --- | --- | --- | --- |\n";
  for (const LossInfo& e : kLossCatalogue) {
    std::string warning = e.warning.empty() ? "-" : "`" + std::string(e.warning) + "`";
    if (!e.group.empty()) warning = std::string(e.group) + ": " + warning;
    std::string description(e.description);
    for (size_t p = 0; (p = description.find('|', p)) != std::string::npos; p += 2) description.replace(p, 1, "\\|");
    for (size_t p = 0; (p = warning.find('|', p)) != std::string::npos; p += 2) warning.replace(p, 1, "\\|");
    out += "| `" + std::string(e.key) + "` | " + std::string(SeverityName(e.severity)) + " | " +
           std::string(ScopeText(e.scope)) + " | " + warning + " | " + description + " |\n";
  }
  return out;
}

}  // namespace trainprof::collector
